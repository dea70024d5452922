"""One game over the compiled engine (a batch of one): dealing, stepping, inspection.

This is the thin Python layer both environments share. It reads and writes the table in R10
notation (``snapshot``) and saves and restores it cheaply (``get_state`` / ``set_state``).
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import warnings
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from nertz_env import engine, interim
from nertz_env.actions import ActionCatalogue
from nertz_env.cards import card_name, parse_deck
from nertz_env.checks import (
    check_int_actions,
    check_one_action,
    check_seat,
    check_seed,
    check_table,
    check_table_shapes,
)
from nertz_env.config import NertzConfig
from nertz_env.engine import AIR_ACTION, AIR_CARD, AIR_TICKS
from nertz_env.illegal import why_illegal
from nertz_env.layout import ObservationLayout
from nertz_env.options import illegal_action_penalty as check_penalty

_PENALTY = 7  # the argument of engine.play_game_tick that holds the illegal-action penalty


class Game:
    """A single Nertz hand, or with ``episode="match"`` a whole match (R8): ``reset`` deals,
    ``step`` plays one tick (R3). In a match a hand that ends is added to the totals and the next
    hand is dealt in the same ``step`` from the game's own stream; ``hand_over`` and
    ``last_hand()`` tell what ended, and ``ended`` is then the end of the match.
    ``illegal_action_penalty`` is checked as the envs check it (a number from -1000 to 1000)."""

    def __init__(self, config: NertzConfig, illegal_action_penalty: float = 0.0):
        if not isinstance(config, NertzConfig):
            raise TypeError(f"Game takes a NertzConfig, such as NertzConfig(num_players=2), not a "
                            f"{type(config).__name__} (a dict of options: NertzConfig(**options))")  # fmt: skip
        penalty = check_penalty(illegal_action_penalty)
        self.config = config
        self.catalogue = ActionCatalogue(config)
        self.layout = ObservationLayout(config)
        p = config.num_players
        self.state = engine.new_state(1, p, config.work_piles)
        self.obs = np.zeros((p, self.layout.size), np.int8)
        self.masks = np.zeros((p, len(self.catalogue)), np.int8)
        self.rewards = np.zeros(p, np.float64)
        self._prev = np.zeros(p, np.int32)
        self._cfg = config.packed
        self._speed = config.speed_weights
        self._plan = engine.mask_plan(self.catalogue.table)
        self._actions = np.zeros(p, np.int64)
        self._tick = self._bind_tick(penalty)  # and self._engine
        self.seeded = False
        self.dealt = False  # a hand is on the table (reset or set_state)
        self._checked: OrderedDict[bytes, None] = OrderedDict()  # digests of tables known to be valid

    def _bind_tick(self, penalty: float) -> engine.HeldTick | interim.InterimTick:
        args = (
            self.state, 0, self._actions, self._cfg, self.catalogue.table, self._speed, self._plan, penalty,
            engine.PLAY_MATCH | engine.PLAY_OBSERVE, self.obs, self.masks, self.rewards, self._prev,
        )  # fmt: skip
        warm = functools.partial(_first_tick, self.config)  # what compiles a game's kernels in the background
        job = interim.background("a game's kernels", warm, lambda: engine.tick_is_cached(args))  # None: play compiled
        self._engine = engine if job is None else job.engine  # while it compiles, its plain-Python twin
        return engine.HeldTick(args) if job is None else interim.InterimTick(args, job, self._go_compiled)

    def _go_compiled(self) -> engine.HeldTick:
        """From the plain-Python engine to the compiled one, between two ticks (``nertz_env.interim``)."""
        self._engine = engine
        self._tick = engine.HeldTick(self._tick.args)
        return self._tick

    @property
    def compiled(self) -> bool:
        """Whether this game plays the compiled engine (False while a first start compiles it in
        the background and the game plays it in plain Python: ``nertz_env.interim``)."""
        return self._engine is engine

    def __getstate__(self) -> dict[str, Any]:
        """Pickled and copied without the bound compiled tick (rebound to the copy's own arrays)."""
        state = self.__dict__.copy()
        state["_tick"] = self.illegal_action_penalty
        del state["_engine"]  # a module: chosen again by _bind_tick
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._cfg = self.config.packed  # read-only again (pickling drops the flag): the same kernel types
        self._tick = self._bind_tick(state["_tick"])

    # -- dealing ---------------------------------------------------------------------------
    def reset(self, seed: int | None = None, decks: Sequence[Sequence[str | int]] | None = None) -> None:
        """Deal a new hand (R2): shuffled from the game's stream, or the R10 fixed ``decks``. In a
        match (R8) this starts a new match; its later hands come from the game's stream."""
        seed = check_seed(seed)
        dealt = engine.NO_DECKS if decks is None else self.parse_decks(decks)  # before the game changes
        if seed is not None or not self.seeded:
            self.state.rng[0] = engine.seed_streams(seed, 1)[0]
            self.seeded = True
        self._engine.start_match(self.state, 0, self._cfg)
        self._engine.deal_game(self.state, 0, dealt, self._cfg, self.catalogue.table, self._plan, self.obs, self.masks)
        self.rewards[:] = 0
        self.dealt = True

    def dealt_decks(self) -> list[list[str]]:
        """The R10 decks (card names, top of deck first) that deal the table of a freshly dealt
        game: the inverse of the deal (R2, ``engine.dealt_decks``)."""
        if self.tick != 0:
            raise ValueError("dealt_decks needs a freshly dealt game (tick 0)")
        decks = np.zeros((self.config.num_players, 52), np.int8)
        self._engine.dealt_decks(self.state, 0, self._cfg, decks)
        return [[card_name(int(c)) for c in deck] for deck in decks]

    def parse_decks(self, decks: Sequence[Sequence[str | int]]) -> np.ndarray:
        n = self.config.num_players
        if isinstance(decks, (str, bytes)) or not isinstance(decks, Sequence) or len(decks) != n:
            got = len(decks) if isinstance(decks, Sequence) and not isinstance(decks, str) else repr(decks)
            raise ValueError(f"decks must be a list of {n} decks (one 52-card list per player, R10), got {got}")
        return np.array([parse_deck(d, owner=p) for p, d in enumerate(decks)], dtype=np.int8)

    # -- playing ---------------------------------------------------------------------------
    def step(self, actions: Sequence[int] | np.ndarray) -> None:
        """One tick: every player's action resolves together (R3, R6). ``actions`` holds one
        integer per seat, each an index into the catalogue (an illegal one is played as WAIT).
        Once ``ended``, the masks allow only WAIT and a step changes nothing until ``reset``."""
        if not self.dealt:
            raise RuntimeError("call reset() (or set_state()) before step(): no hand is on the table")
        a = np.asarray(actions)
        if a.shape != self._actions.shape:
            raise ValueError(f"step takes one action per seat, shaped ({self.config.num_players},), got {a.shape}")
        check_int_actions(a, len(self.catalogue), "Game.step")
        self._actions[:] = a
        self._tick()

    @property
    def actions(self) -> np.ndarray:
        """The int64 row of this tick's actions, one per seat: ``play`` plays it (``nertz_v0``
        writes each agent's checked action here)."""
        return self._actions

    def play(self) -> None:
        """``step`` of the actions already written into ``actions`` and checked (``nertz_v0``
        checks each agent's). The compiled tick holds this game's own arrays (``engine.HeldTick``)."""
        self._tick()

    @property
    def illegal_action_penalty(self) -> float:
        """Subtracted from the reward of a seat whose action was illegal (and played as WAIT)."""
        return self._tick.args[_PENALTY]

    @illegal_action_penalty.setter
    def illegal_action_penalty(self, value: float) -> None:
        self._tick.set(_PENALTY, check_penalty(value))  # a number from -1000 to 1000, as the envs take

    def legal_actions(self, player: int) -> np.ndarray:
        """The legal actions of seat ``player`` (an integer ``0 .. num_players - 1``) now (R4)."""
        return np.flatnonzero(self.masks[check_seat(player, self.config.num_players)])

    def why_illegal(self, player: int, action: int) -> str:
        """A short reason an action is illegal now, for error messages (``nertz_env.illegal``);
        ``player`` is a seat and ``action`` a catalogue index, each refused out of range."""
        player = check_seat(player, self.config.num_players)
        return why_illegal(self, player, check_one_action(action, f"seat {player}", len(self.catalogue)))

    # -- inspection ------------------------------------------------------------------------
    @property
    def ended(self) -> bool:
        """The episode is over: the hand, or in a match the match (R8)."""
        return bool(self.state.ended[0])

    @property
    def is_match(self) -> bool:
        return self.config.episode == "match"

    @property
    def truncated(self) -> bool:
        """Over by a bound rather than by the rules: ``max_cycles`` (R5), or in a match
        ``max_hands`` (R8; a hand reaching ``max_cycles`` only ends that hand)."""
        if self.is_match:
            return int(self.state.match_info[0, engine.MI_STATE]) == engine.MATCH_CAPPED
        return self.end_reason == "max_cycles"

    @property
    def terminated(self) -> bool:
        return self.ended and not self.truncated

    @property
    def hand_over(self) -> bool:
        """A hand ended in the last step: in a match, ``last_hand()`` is its result (R8)."""
        return self.ended if not self.is_match else bool(self.state.match_info[0, engine.MI_HAND_OVER])

    @property
    def hands_played(self) -> int:
        """Hands finished in this match (R8)."""
        return int(self.state.match_info[0, engine.MI_HANDS])

    @property
    def match_ticks(self) -> int:
        """Ticks played in this match, over all its hands."""
        return int(self.state.match_info[0, engine.MI_TICKS])

    @property
    def totals(self) -> np.ndarray:
        """Match totals of the finished hands (R8)."""
        return self.state.match_seats[0, engine.MS_TOTAL]

    def team_scores(self, scores: Sequence[int] | np.ndarray) -> list[int]:
        """Per team (R8 partners: both partners summed; one player per team without partners)."""
        return [int(sum(int(scores[s]) for s in team)) for team in self.config.teams]

    def last_hand(self) -> dict[str, Any]:
        """The hand of the match that ended last: its scores, end reason, callers, ticks, and the
        totals after it (R7, R8)."""
        s = self.state
        return {
            "hand": int(s.match_info[0, engine.MI_HANDS]),
            "scores": [int(x) for x in s.match_seats[0, engine.MS_LAST]],
            "end_reason": engine.END_REASONS[int(s.match_info[0, engine.MI_LAST_REASON])],
            "callers": [int(p) for p in np.flatnonzero(s.match_seats[0, engine.MS_CALLED])],
            "ticks": int(s.match_info[0, engine.MI_LAST_TICKS]),
            "totals": [int(x) for x in s.match_seats[0, engine.MS_TOTAL]],
        }

    def match_winners(self) -> list[int]:
        """The seats that won the match (both partners of a team; several if it was capped tied),
        or the contenders while it runs (R8)."""
        return [int(p) for p in np.flatnonzero(self.state.match_seats[0, engine.MS_CONTENDER])]

    def match_rank(self) -> list[int]:
        """Each seat's place in the match, 1 = won (R8): winners first, then by team total, ties
        share a place."""
        totals = self.team_scores(self.totals)
        won = set(self.match_winners())
        key = [(0 if s in won else 1, -totals[self.config.team_of(s)]) for s in range(self.config.num_players)]
        return [1 + sum(k < key[s] for k in key) for s in range(self.config.num_players)]

    @property
    def end_reason(self) -> str | None:
        return engine.END_REASONS[int(self.state.ended[0])]

    @property
    def scores(self) -> np.ndarray:
        return self.state.score[0]

    @property
    def tick(self) -> int:
        return int(self.state.tick[0])

    @property
    def turn(self) -> int | None:
        """The seat on turn under ``turn_based`` (R3: seat 0 first, then in seat order), else None."""
        return self.tick % self.config.num_players if self.config.turn_based else None

    def in_air(self) -> list[dict[str, Any] | None]:
        """``move_ticks``: each player's move in the air (its action name, the card it carries, and
        ``lands_in``: it resolves in the ``lands_in``-th tick from now), or None."""
        s = self.state
        out: list[dict[str, Any] | None] = []
        for p in range(self.config.num_players):
            if s.air[0, p, AIR_TICKS] == 0:
                out.append(None)
                continue
            card = int(s.air[0, p, AIR_CARD])
            out.append(
                {
                    "action": self.catalogue.names[int(s.air[0, p, AIR_ACTION])],
                    "card": card_name(card) if card >= 0 else None,
                    "lands_in": int(s.air[0, p, AIR_TICKS]),
                }
            )
        return out

    def callers(self) -> list[int]:
        return [int(p) for p in np.flatnonzero(self.state.called[0])]

    def state_vector(self) -> np.ndarray:
        out = np.zeros(self.layout.state_size, np.int8)
        self._engine.state_vector(self.state, 0, self._cfg, out)
        return out

    def snapshot(self) -> dict[str, Any]:
        """The whole table as a JSON-ready dict, every pile bottom to top (R10). With
        ``nertz_builds`` (R4.8) each player also lists the owner seat of every card of their Nertz
        pile (``nertz_owners``) and work piles (``work_owners``), parallel to ``nertz`` and ``work``."""
        s = self.state
        names = [card_name(c) for c in range(52)]
        players = []
        for p in range(self.config.num_players):
            players.append(
                {
                    "nertz": [names[c] for c in s.nertz[0, p, : s.nertz_len[0, p]]],
                    "work": [
                        [names[c] for c in s.work[0, p, j, : s.work_len[0, p, j]]]
                        for j in range(self.config.work_piles)
                    ],
                    "stock": [names[c] for c in s.stock[0, p, : s.stock_len[0, p]]],
                    "waste": [names[c] for c in s.waste[0, p, : s.waste_len[0, p]]],
                }
            )
            if self.config.nertz_builds:
                players[p]["nertz_owners"] = s.nertz_owner[0, p, : s.nertz_len[0, p]].tolist()
                players[p]["work_owners"] = [
                    s.work_owner[0, p, j, : s.work_len[0, p, j]].tolist() for j in range(self.config.work_piles)
                ]
        foundations = [
            {
                "cards": [[int(g) // 52, names[int(g) % 52]] for g in s.foundations[0, f, : s.foundation_len[0, f]]],
                "complete": bool(s.foundation_len[0, f] == 13),
            }
            for f in range(int(s.n_foundations[0]))
        ]
        out = {
            "players": players,
            "foundations": foundations,
            "tick": self.tick,
            "scores": [int(x) for x in self.scores],
            "callers": self.callers(),
            "ended": self.ended,
            "end_reason": self.end_reason,
        }
        if self.config.turn_based:  # R3 timing options, only when on
            out["turn"] = self.turn
        if not self.config.is_default_timing:
            out["in_air"] = self.in_air()
        if self.config.partners:
            out["teams"] = [list(t) for t in self.config.teams]
        if self.is_match:
            out["match"] = {
                "totals": [int(x) for x in s.match_seats[0, engine.MS_TOTAL]],
                "hands_played": int(s.match_info[0, engine.MI_HANDS]),
                "contenders": self.match_winners(),
                "state": ("playing", "tie-break", "decided", "capped")[int(s.match_info[0, engine.MI_STATE])],
            }
        return out

    def get_state(self) -> engine.State:
        """A cheap copy of the whole table, random stream included."""
        state = engine.copy_state(self.state)
        if self.dealt:
            self._remember(table_digest(state))
        return state

    def check_state(self, state: engine.State) -> None:
        """Raise unless ``set_state`` may restore ``state`` (``nertz_env.checks.check_table``)."""
        check_table_shapes(state, self.config, self.state)
        digest = table_digest(state)
        if digest not in self._checked:  # a table this game handed out, unchanged, needs no second look
            check_table(state, self.config, self.catalogue.table, self.state)
            self._remember(digest)

    def _remember(self, digest: bytes) -> None:
        self._checked[digest] = None
        self._checked.move_to_end(digest)
        if len(self._checked) > 4096:
            self._checked.popitem(last=False)

    def set_state(self, state: engine.State) -> None:
        """Restore a table saved by ``get_state`` (of a game with the same config); a table that
        breaks the rules' invariants is refused with the reason (``nertz_env.checks.check_table``)."""
        self.check_state(state)
        for dst, src in zip(self.state, state):
            dst[...] = src
        self._engine.observe_and_mask(self.state, 0, self._cfg, self.catalogue.table, self._plan, self.obs, self.masks)
        self.rewards[:] = 0
        self.seeded = self.dealt = True


def check_reset_options(options: Mapping[str, Any]) -> None:
    """``decks`` is the one reset option. A near miss of it is a typo and raises; other unknown keys
    only warn, because PettingZoo's own API tests pass arbitrary options."""
    for key in options:
        if key == "decks":
            continue
        if isinstance(key, str) and difflib.get_close_matches(key.lower(), ["decks"], n=1, cutoff=0.6):
            raise ValueError(f"unknown reset option {key!r}; did you mean 'decks' (R10 fixed deals)?")
        warnings.warn(f"ignoring unknown reset option {key!r}; known: 'decks' (R10 fixed deals)", stacklevel=3)


def _first_tick(config: NertzConfig) -> None:
    """A deal and a tick of a game of ``config``: ``nertz_env.interim`` compiles a game's kernels so."""
    game = Game(config)
    game.reset(seed=0)
    game.step(np.zeros(config.num_players, np.int64))


def table_digest(state: engine.State) -> bytes:
    """A 16-byte digest of every array of a table (``get_state``): equal tables, equal digests."""
    h = hashlib.blake2b(digest_size=16)
    for a in state:
        h.update(a.tobytes())
    return h.digest()
