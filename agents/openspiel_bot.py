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
from nertz_env.config import is_int
from nertz_env.integrations.openspiel import GAME_NAME, NertzGame, NertzState


class AgentBot(pyspiel.Bot):
    """A ``pyspiel.Bot`` playing one seat of ``python_nertz`` with an ``agents.Agent``."""

    def __init__(self, agent: agents.Agent, player: int, game: NertzGame | None = None):
        pyspiel.Bot.__init__(self)
        if not isinstance(agent, agents.Agent):
            raise TypeError(f"AgentBot plays an agents.Agent (agents.make('heuristic', config=game.config)), got "
                            f"{agent!r}")  # fmt: skip
        if game is not None:
            if not isinstance(game, NertzGame):
                raise TypeError(f"AgentBot's game must be a {GAME_NAME} game (pyspiel.load_game), got {game!r}")
            if agent.config.replace(reward=game.config.reward) != game.config:  # the rewards do not steer play
                raise ValueError(f"AgentBot: the agent was built for {agent.config}, the game plays {game.config}: "
                                 "build the agent with the game's config")  # fmt: skip
            if not is_int(player) or not 0 <= player < game.config.num_players:
                raise ValueError(f"AgentBot: invalid player={player!r}; accepted 0..{game.config.num_players - 1}")
        self.agent = agent
        self.player = player
        self.game = game  # the game the agent was built for: step refuses a state of other rules
        agent.reset(player)

    def step(self, state: NertzState) -> int:
        """The agent's action from this seat's observation and mask (R3: every seat acts each tick)."""
        if not isinstance(state, NertzState) or not state.is_simultaneous_node():
            where = f"{type(state).__name__} at player {state.current_player()}" if state is not None else "None"
            raise ValueError(f"AgentBot plays the simultaneous nodes of {GAME_NAME}, got {where}")
        if self.game is not None and state.get_game().config != self.game.config:
            raise ValueError(
                f"AgentBot (seat {self.player}) was built for another game: this state's has "
                f"{_differences(state.get_game(), self.game)}, the bot's {_differences(self.game, state.get_game())}"
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


def _differences(game: NertzGame, other: NertzGame) -> str:
    """``game``'s parameters that ``other`` sets otherwise, as ``name=value``."""
    params, others = game.get_parameters(), other.get_parameters()
    return ", ".join(f"{k}={v}" for k, v in sorted(params.items()) if k != "deals" and others.get(k) != v)


def agent_bot(game: NertzGame, player: int, spec: str, seed: int | None = None) -> AgentBot:
    """``agents.make_spec(spec)`` built for ``game``'s rules, playing seat ``player``, seeded ``seed``
    (default: the seat's number, so that bots of the same spec at other seats draw differently)."""
    if not isinstance(game, NertzGame):
        raise TypeError(f"agent_bot takes a {GAME_NAME} game (nertz_env.integrations.openspiel), got {game!r}")
    players = game.config.num_players
    if not is_int(player) or not 0 <= player < players:
        raise ValueError(f"player must be a seat from 0 to {players - 1}, got {player!r}")
    if not isinstance(spec, str):
        raise TypeError(
            f"spec must be an agent spec string such as 'heuristic:depth=3' (agents: {', '.join(agents.names())}), "
            f"got {spec!r}"
        )
    seed = int(player) if seed is None else seed
    return AgentBot(agents.make_spec(spec, config=game.config, seed=seed), int(player), game)
