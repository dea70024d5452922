"""The true turn-based AEC form of nertz_v0 (RULES.md R3, option ``turn_based``).

| Import             | `nertz_v0.env(turn_based=True)` (or `nertz_v0.raw_env(turn_based=True)`) |
|--------------------|--------------------------------------------------------------------------|
| agent_selection    | the seat on turn: `player_0` first, then in seat order (`tick % P`)       |
| One `step`         | one tick: the player on turn acts, every other player WAITs               |
| Observations       | as the parallel env, with the `on_turn` section (`observation_layout`)    |

Only the player on turn acts, so the AEC loop visits one agent per tick instead of collecting an
action from every agent first (what `parallel_to_aec` does for simultaneous play). Everything
else is the parallel env's: the same engine, catalogue, spaces, `strict`, `illegal_action_penalty`,
recording and rendering.

## Rewards
Every agent's reward of each tick is added to its `_cumulative_rewards`, which `last()` reports
and which restarts from zero when the agent acts, so an agent collects what happened since its
last turn (with `move_ticks`, a move lands and scores off turn).

## Episode End
When the hand ends (R5) every agent is terminated (a call or a stall) or truncated
(`max_cycles`), as in the parallel env; each then steps `None` once, as PettingZoo requires.
`max_cycles` counts ticks, and a tick here is one player's turn: each player acts about
`max_cycles / P` times in a truncated hand (PettingZoo's own envs count a cycle as every agent
acting once, so its `max_cycles_test` does not apply to this form).
`observe(agent)` answers for any agent at any time, the final observations included.

## Move ticks
With `move_ticks` as well, a player whose move is still in the air when their turn comes may
only WAIT (their mask shows WAIT alone); the move lands in its own tick, whoever is on turn.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from nertz_env.actions import ACTION_WAIT

if TYPE_CHECKING:
    from nertz_env.nertz_v0 import NertzParallelEnv

__all__ = ["NertzTurnBasedEnv"]


class NertzTurnBasedEnv(AECEnv):
    """AEC Nertz under ``turn_based``: ``agent_selection`` is the player on turn (see the module
    docstring). Built by ``nertz_v0.env(turn_based=True)`` over a ``NertzParallelEnv``."""

    def __init__(self, parallel: NertzParallelEnv):
        super().__init__()
        if not parallel.config.turn_based:
            raise ValueError(
                "NertzTurnBasedEnv needs turn_based=True; for simultaneous play use nertz_v0.env() "
                "(the parallel_to_aec form)"
            )
        self.parallel = parallel
        self.metadata = {**parallel.metadata, "is_parallelizable": False}
        self.render_mode = parallel.render_mode
        self.possible_agents = list(parallel.possible_agents)
        self.observation_spaces = parallel.observation_spaces
        self.action_spaces = parallel.action_spaces
        self.agents: list[str] = []
        self._seat = {a: i for i, a in enumerate(self.possible_agents)}

    # -- spaces, names and inspection (the parallel env's) ----------------------------------------
    def observation_space(self, agent: str) -> spaces.Dict | spaces.Box:
        return self.parallel.observation_space(agent)

    def action_space(self, agent: str) -> spaces.Discrete:
        return self.parallel.action_space(agent)

    @property
    def config(self):
        return self.parallel.config

    @property
    def game(self):
        return self.parallel.game

    @property
    def observation_layout(self):
        return self.parallel.observation_layout

    @property
    def action_names(self) -> tuple[str, ...]:
        return self.parallel.action_names

    def action_index(self, name: str) -> int:
        return self.parallel.action_index(name)

    def action_name(self, index: int) -> str:
        return self.parallel.action_name(index)

    @property
    def recording(self):
        return self.parallel.recording

    def state(self) -> np.ndarray:
        return self.parallel.state()

    @property
    def state_space(self) -> spaces.Box:
        return self.parallel.state_space

    def outcome(self) -> dict[str, Any] | None:
        """The ended hand or match by name (``NertzParallelEnv.outcome``)."""
        return self.parallel.outcome()

    def last_hand(self) -> dict[str, Any] | None:
        return self.parallel.last_hand()

    def snapshot(self) -> dict[str, Any]:
        return self.parallel.snapshot()

    def render(self):
        return self.parallel.render()

    def close(self) -> None:
        self.parallel.close()

    # -- the loop -------------------------------------------------------------------------------
    def reset(self, seed: int | None = None, options: Mapping[str, Any] | None = None) -> None:
        _, infos = self.parallel.reset(seed=seed, options=options)
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = infos
        self._skip_agent_selection = None
        turn = self.parallel.game.turn
        assert turn is not None  # turn_based, checked when built: a seat is always on turn
        self.agent_selection = self.possible_agents[turn]

    def observe(self, agent: str) -> dict[str, np.ndarray] | np.ndarray:
        i = self._seat[self.parallel._check_agent(agent)]
        game = self.parallel.game
        obs = game.obs[i].astype(self.parallel.observation_dtype)
        if self.parallel.info_action_mask == "only":
            return obs
        return {"observation": obs, "action_mask": game.masks[i].copy()}

    def step(self, action: Any) -> None:
        if not self.agents:  # no hand in play (not dealt, or each agent stepped its end)
            self.parallel.step({})  # raises the parallel env's RuntimeError, which says which and to call reset()
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        # R3 turn_based: one tick in which the player on turn acts and everyone else WAITs.
        actions = dict.fromkeys(self.parallel.agents, ACTION_WAIT)
        actions[agent] = action
        _, rewards, terminations, truncations, infos = self.parallel.step(actions)
        self._cumulative_rewards[agent] = 0.0
        self.rewards = rewards
        self.terminations = terminations
        self.truncations = truncations
        self.infos = infos
        self._accumulate_rewards()
        if self.parallel.agents:
            turn = self.parallel.game.turn
            assert turn is not None  # turn_based: a seat is always on turn
            self.agent_selection = self.possible_agents[turn]
        else:  # R5: the hand is over; every agent steps None once
            self._deads_step_first()
