"""Any of this package's players as an OpenSpiel bot of ``python_nertz``.

``agent_bot(game, player, "heuristic:depth=3")`` wraps ``agents.make(spec, config=game.config)``
as a ``pyspiel.Bot`` that plays ``player``'s seat: at each simultaneous node it reads that seat's
``nertz_v0`` observation and mask from the state, so OpenSpiel's ``evaluate_bots`` and its
own agents can play against the scripted and trained players (``pip install 'nertz-env[openspiel]'``).

    >>> from open_spiel.python.algorithms.evaluate_bots import evaluate_bots     # doctest: +SKIP
    >>> game = nertz_env.integrations.openspiel.load_game(players=2)
    >>> bots = [agent_bot(game, 0, "heuristic"), agent_bot(game, 1, "greedy")]
    >>> evaluate_bots(game.new_initial_state(), bots, np.random.default_rng(0))  # the returns
"""

from __future__ import annotations

import pyspiel

from nertz_env import agents
from nertz_env.integrations.openspiel import GAME_NAME, NertzGame, NertzState


class AgentBot(pyspiel.Bot):
    """A ``pyspiel.Bot`` playing one seat of ``python_nertz`` with an ``agents.Agent``."""

    def __init__(self, agent: agents.Agent, player: int):
        pyspiel.Bot.__init__(self)
        self.agent = agent
        self.player = player
        agent.reset(player)

    def step(self, state: NertzState) -> int:
        """The agent's action from this seat's observation and mask (R3: every seat acts each tick)."""
        if not isinstance(state, NertzState) or not state.is_simultaneous_node():
            raise ValueError(
                f"AgentBot plays the simultaneous nodes of {GAME_NAME}, got {type(state).__name__} "
                f"at player {state.current_player()}"
            )
        observation = {
            "observation": state.observation_vector(self.player),
            "action_mask": state.action_mask(self.player),
        }
        return self.agent.act(observation)

    def restart_at(self, state: NertzState) -> None:
        self.agent.reset(self.player)

    def inform_action(self, state: NertzState, player_id: int, action: int) -> None:
        """Nothing to remember: the observation carries the seat's memory (``nertz_v0``)."""

    def inform_actions(self, state: NertzState, actions: list[int]) -> None:
        """Nothing to remember, as ``inform_action``."""


def agent_bot(game: NertzGame, player: int, spec: str, seed: int = 0) -> AgentBot:
    """``agents.make_spec(spec)`` built for ``game``'s rules, playing seat ``player``."""
    if not isinstance(game, NertzGame):
        raise TypeError(f"agent_bot takes a {GAME_NAME} game (nertz_env.integrations.openspiel), got {game!r}")
    players = game.config.num_players
    if isinstance(player, bool) or not isinstance(player, int) or not 0 <= player < players:
        raise ValueError(f"player must be a seat from 0 to {players - 1}, got {player!r}")
    return AgentBot(agents.make_spec(spec, config=game.config, seed=seed), player)
