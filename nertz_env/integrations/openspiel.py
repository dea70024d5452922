"""Nertz as an OpenSpiel game: ``pyspiel.load_game("python_nertz")``.

Importing this module registers ``python_nertz`` with OpenSpiel (``pip install
'nertz-env[openspiel]'``). The game is the engine's, played through ``nertz_env.game.Game``: every
rule, move effect, reward and observation is the one ``nertz_v0`` has.

- **Dynamics**: simultaneous (R3: every player acts in every tick), with one explicit chance node
  first: the deal (R2). Its outcome ``d`` in ``0 .. deals - 1`` deals the table that
  ``nertz_v0.parallel_env().reset(seed=d)`` deals; the hand's later chance (R6's races) flows from
  that deal's own random stream, so a deal and the joint actions fix the whole game.
- **Actions**: the catalogue of R10 (``nertz_v0``'s action space), named as there
  (``state.action_to_string(player, action)``). An illegal action raises, as OpenSpiel expects;
  it is not played as WAIT.
- **Rewards**: per tick, ``nertz_v0``'s, of the config's ``reward`` mode: ``"dense"`` (the default)
  pays each change of the R7 score, so a return is the score gained since the deal (the final
  score plus ``nertz_penalty`` x ``nertz_pile_size``); ``"sparse"`` pays the R7 score at the end,
  so a return is the score itself. A hand cut off at ``max_cycles`` ticks (R5) is terminal.
- **Observations**: ``observation_tensor(player)`` is that player's ``nertz_v0`` observation
  (``float32``); ``observation_string(player)`` the public table of ``nertz_v0``'s ``ansi`` render.
  No information-state (perfect-recall) views are provided.

Parameters (``pyspiel.load_game("python_nertz", {...})``): ``players`` (2 to 8), ``deals`` (the
chance node's outcomes, 1 to 2**24) and the scalar rule options of ``NertzConfig`` listed in
``RULE_PARAMETERS`` (default: the standard game). Options that take a tuple or mapping (``speed``,
``move_ticks``), ``stall_ticks`` and match play (``episode="match"``) stay with ``nertz_v0``.

    >>> import pyspiel, nertz_env.integrations.openspiel                        # doctest: +SKIP
    >>> game = pyspiel.load_game("python_nertz", {"players": 3})
    >>> state = game.new_initial_state()
    >>> state.apply_action(7)                                 # the deal nertz_v0 deals for seed 7
    >>> state.apply_actions([state.legal_actions(p)[-1] for p in range(3)])
"""

from __future__ import annotations

import dataclasses
import weakref
from typing import TYPE_CHECKING, Any

import numpy as np

try:
    import pyspiel
except ImportError as exc:  # pragma: no cover - depends on the extra
    raise ModuleNotFoundError("python_nertz needs OpenSpiel: pip install 'nertz-env[openspiel]'") from exc

from nertz_env.cards import DECK_SIZE
from nertz_env.config import NertzConfig, is_int
from nertz_env.game import Game
from nertz_env.render import render_text

if TYPE_CHECKING:
    from nertz_env.engine import State

__all__ = ["GAME_NAME", "RULE_PARAMETERS", "NertzGame", "NertzState", "load_game"]

GAME_NAME = "python_nertz"
MAX_DEALS = 2**24
# The NertzConfig options that OpenSpiel's typed parameters carry (int, bool or str), at their defaults.
RULE_PARAMETERS = {
    f.name: f.default
    for f in dataclasses.fields(NertzConfig)
    if f.init
    and isinstance(f.default, (bool, int, str))
    and f.name not in ("num_players", "stall_ticks", "episode", "target_score", "max_hands", "match_end")
}
_PARAMETERS = {"players": 4, "deals": 2**16, **RULE_PARAMETERS}

_GAME_TYPE = pyspiel.GameType(
    short_name=GAME_NAME,
    long_name="Nertz (nertz-env)",
    dynamics=pyspiel.GameType.Dynamics.SIMULTANEOUS,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.GENERAL_SUM,
    reward_model=pyspiel.GameType.RewardModel.REWARDS,
    max_num_players=8,
    min_num_players=2,
    provides_information_state_string=False,
    provides_information_state_tensor=False,
    provides_observation_string=True,
    provides_observation_tensor=True,
    provides_factored_observation_string=False,
    parameter_specification=_PARAMETERS,
)


def config_of(params: dict[str, Any]) -> NertzConfig:
    """The ``NertzConfig`` of a parameter dict; an unknown name or a bad value is refused by name."""
    unknown = sorted(set(params) - set(_PARAMETERS))
    if unknown:
        known = ", ".join(sorted(_PARAMETERS))
        raise ValueError(f"{GAME_NAME}: unknown parameter(s) {', '.join(unknown)}; known: {known}")
    rules = {k: v for k, v in params.items() if k in RULE_PARAMETERS}
    try:
        return NertzConfig.from_kwargs(num_players=params.get("players", _PARAMETERS["players"]), **rules)
    except ValueError as exc:  # NertzConfig names its own option num_players; here it is players
        raise ValueError(f"{GAME_NAME}: {str(exc).replace('num_players', 'players')}") from None


def _deals(params: dict[str, Any]) -> int:
    deals = params.get("deals", _PARAMETERS["deals"])
    if isinstance(deals, bool) or not isinstance(deals, int) or not 1 <= deals <= MAX_DEALS:
        raise ValueError(f"{GAME_NAME}: deals must be an integer from 1 to 2**24, got {deals!r}")
    return deals


def _utility_bounds(config: NertzConfig) -> tuple[float, float]:
    """Bounds of a return, the sum of ``nertz_v0``'s rewards, under the config's reward mode (R7:
    a score is at worst every card of the Nertz pile left, and at best every own card on the
    foundations and the call bonus; partners add two players' scores). The pile holds the cards
    dealt and, with ``nertz_builds`` (R4.8), the cards others built on it: all of its top's suit,
    so at most 13 from each other deck, within the pile's 52 slots."""
    seats = 2 if config.partners else 1
    pile = config.nertz_pile_size
    if config.nertz_builds:
        pile = min(DECK_SIZE, pile + 13 * (config.num_players - 1))
    dealt = -config.nertz_penalty * config.nertz_pile_size * seats
    low = -config.nertz_penalty * pile * seats
    high = (DECK_SIZE + config.call_bonus) * seats
    if config.reward == "dense":  # the score's changes since the deal, which dealt `dealt`
        return float(low - dealt), float(high - dealt)
    if config.reward == "sparse":  # the score itself, paid at the end
        return float(low), float(high)
    return float(low - high), float(high - low)  # a margin over other players' scores


class NertzGame(pyspiel.Game):
    """``python_nertz``: makes states and observers. One ``nertz_env.game.Game`` (private) steps
    every state of it in turn: each state keeps its own copy of the table (``Game.get_state``),
    restored into it only when another state used it last (``NertzState._restore``)."""

    def __init__(self, params: dict[str, Any] | None = None):
        params = dict(params or {})
        self.config = config_of(params)
        self.deals = _deals(params)
        self._engine = Game(self.config)
        # The state whose table self._engine holds, weakly: the state holds the game (in C++), so a
        # strong reference would be a cycle the garbage collector cannot see, and neither would go.
        self._holder: weakref.ref[NertzState] | None = None
        self.catalogue = self._engine.catalogue  # the R10 actions: catalogue.name(i), catalogue.index(name)
        low, high = _utility_bounds(self.config)
        info = pyspiel.GameInfo(
            num_distinct_actions=len(self.catalogue),
            max_chance_outcomes=self.deals,
            num_players=self.config.num_players,
            min_utility=low,
            max_utility=high,
            utility_sum=None,
            max_game_length=self.config.max_cycles,
        )
        super().__init__(_GAME_TYPE, info, {**_PARAMETERS, **params})

    def new_initial_state(self) -> NertzState:
        return NertzState(self)

    def make_py_observer(self, iig_obs_type=None, params=None) -> NertzObserver:
        if params:
            raise ValueError(f"{GAME_NAME}: observer parameters are not supported, got {params!r}")
        if iig_obs_type is not None and (
            iig_obs_type.perfect_recall
            or iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER
            or not iig_obs_type.public_info
        ):
            raise ValueError(
                f"{GAME_NAME} provides one observation: a player's own (public and private info, no "
                f"perfect recall), as nertz_v0 gives it; got perfect_recall={iig_obs_type.perfect_recall}, "
                f"public_info={iig_obs_type.public_info}, private_info={iig_obs_type.private_info}"
            )
        return NertzObserver(self._engine.layout.size)


class NertzState(pyspiel.State):
    """A chance node (the deal), then simultaneous ticks until the hand ends (R5)."""

    def __init__(self, game: NertzGame):
        super().__init__(game)
        p = game.config.num_players
        self._deal: int | None = None
        self._table: State | None = None  # this state's own copy of the table, from the deal on
        self._obs = np.zeros((p, game._engine.layout.size), np.int8)
        self._masks = np.zeros((p, len(game.catalogue)), np.int8)
        self._rewards = np.zeros(p)
        self._returns = np.zeros(p)
        self._ended = False

    # -- whose move ------------------------------------------------------------------------
    def current_player(self) -> int:
        if self._ended:
            return pyspiel.PlayerId.TERMINAL
        return pyspiel.PlayerId.CHANCE if self._deal is None else pyspiel.PlayerId.SIMULTANEOUS

    def is_terminal(self) -> bool:
        return self._ended

    def chance_outcomes(self) -> list[tuple[int, float]]:
        if self._deal is not None:
            raise ValueError(f"{GAME_NAME}: chance_outcomes is asked at the deal only (R2)")
        deals = self.get_game().deals
        return [(d, 1.0 / deals) for d in range(deals)]

    def _legal_actions(self, player: int) -> list[int]:
        if player == pyspiel.PlayerId.CHANCE:
            return [] if self._deal is not None else list(range(self.get_game().deals))
        if player == pyspiel.PlayerId.SIMULTANEOUS:
            raise ValueError(
                f"{GAME_NAME}: legal_actions takes a seat from 0 to {len(self._masks) - 1}, got {player} "
                f"(the simultaneous player): a tick has no flat joint actions: ask legal_actions(p) of each seat"
            )
        self._seat(player, "legal_actions")
        if self._ended or self._deal is None:
            return []
        return np.flatnonzero(self._masks[player]).tolist()

    def _seat(self, player: Any, what: str, chance: bool = False) -> None:
        """Refuse a ``player`` that is not a seat (``chance``: or the chance player) by name."""
        p = len(self._masks)
        if not is_int(player) or not 0 <= player < p:
            also = " (or -1, the chance player)" if chance else ""
            raise ValueError(f"{GAME_NAME}: {what} takes a seat from 0 to {p - 1}{also}, got {player!r}")

    # -- moves -----------------------------------------------------------------------------
    def _apply_action(self, action: int) -> None:
        """The deal (R2): deal ``action`` is ``nertz_v0``'s ``reset(seed=action)``."""
        game = self.get_game()
        self._refuse_if_ended(f"apply_action({action!r})")
        if self._deal is not None:
            raise ValueError(
                f"{GAME_NAME}: after the deal every tick is simultaneous: apply_actions takes one "
                f"action per player, got apply_action({action!r})"
            )
        if not is_int(action) or not 0 <= action < game.deals:
            raise ValueError(f"{GAME_NAME}: the chance node takes a deal from 0 to {game.deals - 1}, got {action!r}")
        game._engine.reset(seed=int(action))
        self._deal = int(action)
        self._take(game)

    def _apply_actions(self, actions: list[int]) -> None:
        """One tick (R3, R6): every player's action at once; an illegal one is refused with the reason."""
        p = len(self._masks)
        if self._deal is None:
            raise ValueError(
                f"{GAME_NAME}: the state is at the chance node: apply_action(deal) deals first (R2), "
                f"got apply_actions({list(actions)!r})"
            )
        self._refuse_if_ended(f"apply_actions({list(actions)!r})")
        if len(actions) != p:
            raise ValueError(f"{GAME_NAME}: a tick takes {p} actions at a simultaneous node, got {list(actions)!r}")
        engine = self._restore()
        size = self._masks.shape[1]
        for player, action in enumerate(actions):
            if not 0 <= action < size or not self._masks[player, action]:
                reason = engine.why_illegal(player, action) if 0 <= action < size else "not in the catalogue"
                raise ValueError(f"{GAME_NAME}: player {player}'s action {action} is illegal: {reason}")
        engine.step(np.asarray(actions, np.int64))
        self._take(self.get_game())

    def _refuse_if_ended(self, move: str) -> None:
        if self._ended:
            raise ValueError(f"{GAME_NAME}: the hand is over (R5): a terminal state takes no action, got {move}")

    def _restore(self) -> Game:
        """The shared engine, holding this state's table (set back only if another state moved it)."""
        game = self.get_game()
        assert self._table is not None  # dealt: every caller checks self._deal first
        if game._holder is None or game._holder() is not self:
            game._engine.set_state(self._table)
            self._check_views(game._engine)
            game._holder = weakref.ref(self)
        return game._engine

    def _check_views(self, engine: Game) -> None:
        """This state's deal, history, observations and masks agree with its table, as restored: a
        serialized state carries them all (OpenSpiel pickles ``__dict__``, it replays no history)."""
        assert self._table is not None  # dealt (_restore)
        history, ticks = self.history(), int(self._table.tick[0])
        if history[:1] != [self._deal] or len(history) != 1 + len(self._masks) * ticks:
            raise ValueError(
                f"{GAME_NAME}: this state's history ({len(history)} actions, deal {history[:1]}) does not match "
                f"its table (deal {self._deal}, tick {ticks}): was a serialized state edited?"
            )
        if not (np.array_equal(engine.obs, self._obs) and np.array_equal(engine.masks, self._masks)):
            raise ValueError(
                f"{GAME_NAME}: this state's saved observations or action masks do not match its table: "
                "was a serialized state edited?"
            )

    def _take(self, game: NertzGame) -> None:
        """Copy out what the engine's latest deal or tick left; the engine now holds this state's table."""
        engine = game._engine
        game._holder = weakref.ref(self)
        self._table = engine.get_state()
        self._obs[...] = engine.obs
        self._masks[...] = engine.masks
        self._rewards = engine.rewards.astype(np.float64)
        self._returns = self._returns + self._rewards
        self._ended = bool(engine.ended)

    # -- outcomes and views ----------------------------------------------------------------
    def rewards(self) -> list[float]:
        return self._rewards.tolist()

    def returns(self) -> list[float]:
        return self._returns.tolist()

    def _action_to_string(self, player: int, action: int) -> str:
        game = self.get_game()
        if player == pyspiel.PlayerId.CHANCE:
            if not 0 <= action < game.deals:
                raise ValueError(f"{GAME_NAME}: deal {action} is not a deal: deals are 0 to {game.deals - 1}")
            return f"deal {action}"
        self._seat(player, "action_to_string", chance=True)
        return game.catalogue.name(action)

    def observation_vector(self, player: int) -> np.ndarray:
        """``player``'s ``nertz_v0`` observation (int8)."""
        self._seat(player, "observation_vector")
        return self._obs[player]

    def action_mask(self, player: int) -> np.ndarray:
        """``player``'s ``nertz_v0`` action mask (int8, 1 where legal)."""
        self._seat(player, "action_mask")
        return self._masks[player]

    def table_text(self) -> str:
        """The public table as ``nertz_v0``'s ``ansi`` render draws it."""
        if self._deal is None:
            return "not dealt (chance node)"
        return render_text(self._restore().snapshot())

    def scores(self) -> list[int]:
        """Each player's R7 running score (0s before the deal)."""
        return [0] * len(self._masks) if self._deal is None else self._restore().scores.tolist()

    def __str__(self) -> str:
        return self.table_text()


class NertzObserver:
    """The PyObserver of ``python_nertz``: a player's ``nertz_v0`` observation."""

    def __init__(self, size: int):
        self.tensor = np.zeros(size, np.float32)
        self.dict = {"observation": self.tensor}

    def set_from(self, state: NertzState, player: int) -> None:
        self.tensor[:] = state.observation_vector(player)

    def string_from(self, state: NertzState, player: int) -> str:
        return f"player {player}\n{state.table_text()}"


def load_game(**params: Any) -> NertzGame:
    """``pyspiel.load_game("python_nertz", params)``, e.g. ``load_game(players=3, stock_draw=1)``."""
    return pyspiel.load_game(GAME_NAME, params)


pyspiel.register_game(_GAME_TYPE, NertzGame)
