"""The AEC form of simultaneous play (RULES.md R3): ``nertz_v0.env()`` without ``turn_based``.

PettingZoo's ``parallel_to_aec`` wrapper collects an action from every live agent in turn and
plays the tick when the last has acted. Left as it is, it stores whatever it is given and checks
nothing until that last step: an action out of range, a float or a string from ``player_0`` is
reported only when ``player_3`` acts, and every later step repeats the error, since the stored
action stays. ``NertzSimultaneousEnv`` checks each action when it is given, with the parallel
env's own checks and words (``nertz_env.checks``; under ``strict``, its legality on the table of
the tick too), so a bad action is refused at the step that gave it and is never stored.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pettingzoo.utils.conversions import parallel_to_aec_wrapper

from nertz_env.checks import check_one_action

if TYPE_CHECKING:
    from nertz_env.nertz_v0 import NertzParallelEnv

__all__ = ["NertzSimultaneousEnv"]


class NertzSimultaneousEnv(parallel_to_aec_wrapper):
    """``parallel_to_aec`` over a ``NertzParallelEnv`` that refuses a bad action at the step that
    gives it (the module docstring). Built by ``nertz_v0.env()`` for simultaneous play."""

    def __init__(self, parallel: NertzParallelEnv):
        if parallel.config.turn_based:
            raise ValueError("NertzSimultaneousEnv is for simultaneous play; with turn_based=True use nertz_v0.env()")
        super().__init__(parallel)

    def step(self, action: Any) -> None:
        if not getattr(self, "agents", None):  # no hand in play (not dealt, or each agent stepped its end)
            self.env.step({})  # raises the parallel env's RuntimeError, which says which and to call reset()
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            if action is not None:  # the wrapper only asserts it
                raise ValueError(f"{agent}'s hand is over: step(None) once, as PettingZoo requires; got {action!r}")
        else:
            action = self._checked(agent, action)
        super().step(action)

    def observe(self, agent: str) -> Any:
        """The observation of ``agent``, or the parallel env's error naming the agents."""
        return super().observe(self.env._check_agent(agent))

    def _checked(self, agent: str, action: Any) -> int:
        """``action`` as an int in the catalogue's range, legal on this tick's table under
        ``strict``; else the error the parallel env's ``step`` raises for it."""
        parallel = self.env
        chosen = check_one_action(action, agent, len(parallel.game.catalogue))
        if parallel.strict:
            parallel._check_legal_one(parallel.possible_agents.index(agent), chosen)
        return chosen
