"""The benchmark's named tasks: each name fixes the rules, the player count of training and the
evaluation (held-out deal seeds, deals per opponent, the opponent pool), so two results on the
same task name and version are comparable.

    >>> from nertz_env import tasks
    >>> task = tasks.get("nertz-4p")
    >>> task.config.num_players, task.eval_deals, task.pool
    (4, 200, ('greedy', 'heuristic', 'heuristic:depth=3'))

A task is versioned: a change to its rules or its evaluation makes a new ``version`` (and the
results of the old one stay labelled with theirs). The evaluation itself (duplicate deals with
seat rotation, intervals over deals) is ``nertz_env.training.benchmark``; this module only names
what it plays.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from nertz_env.config import NertzConfig, check_names, is_int, option_names

__all__ = ["POOL", "TASKS", "Task", "get", "names"]

# The fixed opponent pool of every task: the scripted players of ``nertz_env.agents``.
POOL = ("greedy", "heuristic", "heuristic:depth=3")


class FrozenRules(dict):
    """A task's rule options, read-only: a task name and version stand for fixed rules, so an edit
    through ``tasks.get(name).rules`` must not change what every later ``get`` returns."""

    def _refuse(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("a task's rules are fixed (its name and version stand for them): build a new Task, or "
                        "a NertzConfig from dict(task.rules)")

    __setitem__ = __delitem__ = update = pop = popitem = clear = setdefault = __ior__ = _refuse  # type: ignore

    def __reduce__(self):  # pickled as a plain dict's items, restored read-only
        return (FrozenRules, (dict(self),))


@dataclass(frozen=True)
class Task:
    """A named benchmark task.

    Attributes:
        name: the task's name (``nertz-4p``).
        version: bumped whenever the rules or the evaluation change.
        description: one line for the tables.
        rules: the ``NertzConfig`` options (R2 to R8) that differ from the defaults.
        eval_seed: the seed of the held-out evaluation deals; training must use other seeds (the
            reference runs train on seeds 1, 2, 3 and their games' own streams).
        eval_deals: duplicate deals per opponent of the pool (each played in every seat rotation).
        curve_deals: deals per opponent at the checkpoints of a learning curve (cheaper).
        pool: the opponents; the agent plays against ``num_players - 1`` copies of each (with
            partners: one team of the agent and its copy against a team of two copies).
        agent_steps: the reference budget of learner decisions per training run.
        exploit_steps: the budget of learner decisions of the best responder (exploitability).
        exploit_deals: deals of the best responder's evaluation.
    """

    name: str
    version: int
    description: str
    rules: dict[str, Any] = field(default_factory=dict)
    eval_seed: int = 1_000_003
    eval_deals: int = 200
    curve_deals: int = 50
    pool: tuple[str, ...] = POOL
    agent_steps: int = 100_000
    exploit_steps: int = 50_000
    exploit_deals: int = 100

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name or not is_int(self.version) or self.version < 1:
            raise ValueError(f"a task needs a name (a str) and a version >= 1, got {self.name!r} v{self.version!r}")
        if not isinstance(self.rules, dict):
            raise ValueError(f"task {self.name}: rules must be a dict of NertzConfig options, got {self.rules!r}")
        object.__setattr__(self, "rules", FrozenRules(self.rules))
        try:
            check_names(self.rules, option_names(), "rule option")
            NertzConfig(**self.rules)  # names a bad value
        except ValueError as e:
            raise ValueError(f"task {self.name}: {e}") from None
        counts = ("eval_seed", "eval_deals", "curve_deals", "agent_steps", "exploit_steps", "exploit_deals")
        for name in counts:
            value = getattr(self, name)
            if not is_int(value) or value < (0 if name == "eval_seed" else 1):
                raise ValueError(f"task {self.name}: invalid {name}={value!r}; accepted an integer >= "
                                 f"{0 if name == 'eval_seed' else 1}")  # fmt: skip
        if not isinstance(self.pool, tuple) or not self.pool or not all(isinstance(a, str) and a for a in self.pool):
            raise ValueError(f"task {self.name}: pool must be a non-empty tuple of agent specs, got {self.pool!r}")

    @property
    def config(self) -> NertzConfig:
        """The task's rules (``reward`` stays the default; trainers choose their own)."""
        return NertzConfig(**self.rules)

    @property
    def num_players(self) -> int:
        return self.config.num_players

    @property
    def partners(self) -> bool:
        return self.config.partners

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name, "version": self.version, "description": self.description, "rules": dict(self.rules),
            "eval_seed": self.eval_seed, "eval_deals": self.eval_deals, "curve_deals": self.curve_deals,
            "pool": list(self.pool), "agent_steps": self.agent_steps, "exploit_steps": self.exploit_steps,
            "exploit_deals": self.exploit_deals,
        }


TASKS: dict[str, Task] = {
    t.name: t
    for t in (
        Task("nertz-2p", 1, "the standard game, 2 players", {"num_players": 2}),
        Task("nertz-4p", 1, "the standard game, 4 players", {"num_players": 4}),
        Task("nertz-partners-4p", 1, "4 players in two teams of partners seated opposite (R8)",
             {"num_players": 4, "partners": True}),
        Task("nertz-builds-4p", 1, "4 players, builds on opponents' Nertz piles allowed (R4.8)",
             {"num_players": 4, "nertz_builds": True}),
    )
}


def names() -> list[str]:
    """The known task names."""
    return list(TASKS)


def get(name: str) -> Task:
    """The task called ``name``; an unknown name raises a ``ValueError`` listing the known ones."""
    if not isinstance(name, str) or name not in TASKS:
        raise ValueError(f"unknown benchmark task {name!r}: known tasks are {', '.join(TASKS)}")
    return TASKS[name]
