"""Players for Nertz: scripted baselines now, trained policies later, all behind one protocol.

| name        | plays                                                                      |
| ----------- | -------------------------------------------------------------------------- |
| `random`    | uniform over the legal actions (seeded)                                    |
| `passive`   | only to the foundations, otherwise draws; calls when it may                |
| `greedy`    | the seeds' advice as a fixed priority list                                 |
| `heuristic` | ranks moves by a short look-ahead inside its own layout (`agents.heuristic`) |
| `policy`    | a trained policy loaded from `path=` (registered by the training code)     |
| `ppo`       | the shipped search-free policy: one network forward pass per decision      |
| `ppo-search`| the shipped policy whose features run a depth-3 `heuristic` search         |
| `ensemble`  | trained policies voting by their mean log-probability (`paths=A.pt+B.pt`)  |

Every agent is built for one ``NertzConfig`` (default: the standard 4-player game) and chooses
only among the actions the engine's mask marks legal (see ``agents.base.Agent``).

A name may carry options, ``"heuristic:call=now,depth=1"``; ``make_spec`` reads that form, which
is what the evaluation CLI accepts. New players join with ``register(name, factory)``, where
``factory(config=..., seed=..., **options)`` returns an ``Agent``.

Examples:
    >>> from nertz_env import NertzConfig, agents
    >>> greedy = agents.make("greedy", config=NertzConfig(num_players=2))
    >>> sorted(agents.names())[:3]
    ['greedy', 'heuristic', 'passive']
"""

from __future__ import annotations

import difflib
import importlib
import inspect
from collections.abc import Callable
from typing import Any

from nertz_env.agents.base import Agent
from nertz_env.agents.heuristic import HeuristicAgent
from nertz_env.agents.scripted import GreedyAgent, PassiveAgent, RandomAgent
from nertz_env.config import NertzConfig
from nertz_env.options import parse_value

Factory = Callable[..., Agent]

_REGISTRY: dict[str, Factory] = {}

# Names whose factory lives in a module that registers it on import. ``policy`` is the hook for
# trained players: ``agents/policy.py`` (added by the training code) calls
# ``register("policy", ...)`` with a factory taking ``path=`` (and ``ppo``, ``ppo-league`` and
# ``ppo-search``, the shipped policies).
_LAZY = {
    "policy": "nertz_env.agents.policy",
    "ensemble": "nertz_env.agents.policy",
    "ppo": "nertz_env.agents.policy",
    "ppo-league": "nertz_env.agents.policy",
    "ppo-search": "nertz_env.agents.policy",
    "rllib": "nertz_env.agents.rllib_policy",
    "rollout": "nertz_env.agents.rollout",
}


def register(name: str, factory: Factory, *, overwrite: bool = False) -> None:
    """Make ``make(name, ...)`` call ``factory(config=..., seed=..., **options)``. ``name`` must be
    one a spec (``name:key=value,...``, ``parse_spec``) can carry: no ``:`` or ``,``, which part a
    spec, and no blank or unprintable character (a spec's name is stripped, and a command line splits
    on blanks); ``factory`` must be callable."""
    if not isinstance(name, str) or not name or any(c in ":," or c.isspace() or not c.isprintable() for c in name):
        raise ValueError(f"agent names are non-empty strings without ':', ',', blanks or unprintable characters (a "
                         f"spec name:key=value,... must carry them), got {name!r}")  # fmt: skip
    if not callable(factory):
        raise TypeError(f"the factory of agent {name!r} must be callable, factory(config=..., seed=..., **options) "
                        f"returning an agents.Agent (such as an Agent class), got {type(factory).__name__} {factory!r}")
    if name in _REGISTRY and not overwrite:
        raise ValueError(f"agent {name!r} is already registered; pass overwrite=True to replace it")
    _REGISTRY[name] = factory


def names() -> list[str]:
    """Every name ``make`` accepts (lazy ones included)."""
    return sorted(set(_REGISTRY) | set(_LAZY))


def make(name: str, seed: int = 0, config: NertzConfig | None = None, **options: Any) -> Agent:
    """Build the agent ``name`` for ``config`` (default ``NertzConfig()``), seeded by ``seed``."""
    if not isinstance(name, str):
        raise TypeError(f"the agent name must be a str, got {type(name).__name__} {name!r}; known agents: "
                        f"{', '.join(names())}")  # fmt: skip
    if name not in _REGISTRY and name in _LAZY:
        try:
            importlib.import_module(_LAZY[name])
        except ModuleNotFoundError as e:
            if e.name != _LAZY[name]:
                raise
            raise ValueError(
                f"agent {name!r} needs the module {_LAZY[name]}, which is not installed yet "
                "(trained policies arrive with the training code)"
            ) from None
    if name not in _REGISTRY and name.partition(":")[0] in names():  # a spec, as the CLI and evaluate() take
        bare, options = parse_spec(name)
        keywords = ", ".join(f"{k}={v!r}" for k, v in options.items())
        raise ValueError(f"{name!r} is an agent spec (name:key=value,...): build it with agents.make_spec({name!r}) "
                         f"or agents.make({bare!r}, {keywords})")  # fmt: skip
    if name not in _REGISTRY:
        close = difflib.get_close_matches(name, names(), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ValueError(f"unknown agent {name!r}{hint}; known agents: {', '.join(names())}")
    factory = _REGISTRY[name]
    check_options(name, factory, options)
    agent = factory(config=config if config is not None else NertzConfig(), seed=seed, **options)
    if not isinstance(agent, Agent):
        raise TypeError(f"the factory of {name!r} returned {type(agent).__name__}, not an agents.Agent")
    return agent


def check_options(name: str, factory: Callable[..., Any], options: dict[str, Any]) -> None:
    """Refuse, by name and with the accepted ones, options that ``factory`` (an agent class or a
    factory function) has no parameter for. A factory that takes ``**options`` checks its own."""
    params = inspect.signature(factory).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return
    accepted = [key for key in params if key not in ("config", "seed")]
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        raise ValueError(
            f"unknown option(s) {', '.join(unknown)} for agent {name!r}; accepted: {', '.join(accepted) or 'none'}"
        )


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """``"heuristic:depth=1,call=now"`` -> ``("heuristic", {"depth": 1, "call": "now"})``. A ':'
    with nothing after it, an empty option, one without ``=`` and one given twice (the last would
    silently win) are ``ValueError``s naming the spec."""
    name, colon, rest = spec.partition(":")
    options: dict[str, Any] = {}
    if colon and not rest.strip():
        raise ValueError(f"{spec!r} has no options after ':'; give name or name:key=value,...")
    for item in rest.split(",") if colon else ():
        key, eq, value = item.partition("=")
        if not item.strip():
            raise ValueError(f"empty agent option in {spec!r}; give name:key=value,...")
        if not eq or not key.strip():
            raise ValueError(f"agent option {item!r} in {spec!r} is not of the form key=value")
        if key.strip() in options:
            raise ValueError(f"agent option {key.strip()} is given twice in {spec!r}: give it once")
        options[key.strip()] = parse_value(value.strip())
    return name.strip(), options


def make_spec(spec: str, seed: int = 0, config: NertzConfig | None = None) -> Agent:
    """``make`` from a ``name:key=value,...`` string; the seed and the rules come from the caller
    (``--seed``, ``--rules``), not from the spec."""
    name, options = parse_spec(spec)
    given = sorted({"seed", "config"} & set(options))
    if given:
        raise ValueError(f"agent spec {spec!r}: {' and '.join(given)} cannot be set in a spec (the command's --seed "
                         f"and --rules give them); the spec takes only the agent's own options")  # fmt: skip
    return make(name, seed=seed, config=config, **options)


register("random", RandomAgent)
register("passive", PassiveAgent)
register("greedy", GreedyAgent)
register("heuristic", HeuristicAgent)

__all__ = [
    "Agent",
    "GreedyAgent",
    "HeuristicAgent",
    "PassiveAgent",
    "RandomAgent",
    "check_options",
    "make",
    "make_spec",
    "names",
    "parse_spec",
    "parse_value",
    "register",
]
