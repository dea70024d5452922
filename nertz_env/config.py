"""The rule options of RULES.md as one frozen, validated object.

Every option defaults to the standard game (the pagat.com rules of "Boardwalk Nertz Competition").
A bad value raises a ``ValueError`` naming the option, the value and what is accepted.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from nertz_env.config_values import (  # is_int and MOVE_KINDS are imported from here too
    MOVE_KINDS,
    check_choice,
    check_names,
    check_pickled_fields,
    is_int,
    normalise_move_ticks,
    normalise_speed,
)
from nertz_env.config_values import fail as _fail

# The packed integer config the compiled engine reads (see ``NertzConfig.packed``): its indices
# are the engine's (``nertz_env.engine.constants``).
from nertz_env.engine import partner_of, python_of
from nertz_env.engine.constants import (
    BLOCKS_ANY,
    BLOCKS_NONE,
    BLOCKS_WHOLE,
    C_ACES_TO_WORK,
    C_AUTO_CALL,
    C_BLOCKS,
    C_BONUS,
    C_BUILDS,
    C_COLLISION_SEAT,
    C_DRAW,
    C_EPISODE,
    C_FILL_ANY,
    C_FILL_WASTE,
    C_HANDS,
    C_MATCH_END,
    C_MAX_CYCLES,
    C_MAX_HANDS,
    C_MAX_ROT,
    C_NERTZ,
    C_NERTZ_TO_WORK,
    C_PARTNERS,
    C_PENALTY,
    C_PLAYERS,
    C_REWARD,
    C_SIZE,
    C_SLIDE,
    C_STALL_TICKS,
    C_TARGET,
    C_TICKS,
    C_TICKS_END,
    C_TURN_BASED,
    C_WORK,
    MATCH_END_CALLER,
    MATCH_END_EXCEED,
    MATCH_END_HIGHEST,
    MATCH_END_SPREAD,
)

REWARD_MODES = ("dense", "sparse", "relative", "lead")  # C_REWARD codes: engine.constants REWARD_*
EPISODES = ("hand", "match")
assert C_TICKS + 1 + len(MOVE_KINDS) == C_TICKS_END

# R4.3 ``block_moves`` (packed as the index): any exposed card with the cards above it, only a whole
# pile, or only the exposed card.
BLOCK_MOVES = ("any", "whole", "none")
# R4.4 ``fill_empty_from``: what may fill an empty work pile.
FILL_EMPTY_FROM = ("any", "nertz", "nertz_or_waste")
# R8 ``match_end`` (packed as the index): how a match to ``target_score`` ends and who wins it.
MATCH_ENDS = ("highest", "caller", "spread", "exceed")
assert (BLOCK_MOVES.index("whole"), BLOCK_MOVES.index("none")) == (BLOCKS_WHOLE, BLOCKS_NONE) and BLOCKS_ANY == 0
assert [MATCH_ENDS.index(m) for m in MATCH_ENDS] == [
    MATCH_END_HIGHEST, MATCH_END_CALLER, MATCH_END_SPREAD, MATCH_END_EXCEED
]
# A match total is observed exactly as sign, hundreds and rest (all int8); it must fit.
MAX_OBSERVED_TOTAL = 127 * 100 + 99
# Bounds that keep every count and score of the compiled engine inside int32 (scores of a hand,
# team sums and match totals over up to 127 hands; tick counters summed over a match).
MAX_POINTS = 1000  # nertz_penalty and call_bonus
MAX_TICKS = 1_000_000  # max_cycles, stall_ticks, max_stall_rotations
MAX_HANDS = 127  # hands and max_hands: the observation counts a match's hands played and left in int8

# Named rule sets of the source texts (RULES.md names them): ``NertzConfig.from_kwargs(preset=...)``.
PRESETS: dict[str, dict[str, Any]] = {
    "standard": {},  # "Boardwalk Nertz Competition", the pagat.com rules
    # "Snerts", a club's rules: penalty 1, the Snerts pile never onto a work pile but fills a space, the
    # caller who reaches the target wins the match
    "snerts": {"nertz_penalty": 1, "nertz_to_work": False, "fill_empty_from": "nertz", "match_end": "caller"},
    # "Nerds", the README of billba/nerds: penalty 1, spaces filled from the Nerds pile or the discard,
    # whole work piles move, the hand ends when a Nerds pile empties, the winner must exceed the target
    "nerds": {"nertz_penalty": 1, "fill_empty_from": "nertz_or_waste", "block_moves": "whole", "auto_call": True,
              "match_end": "exceed"},
    # "Nerts", German Wikipedia: builds on opponents' Nertz tops, aces only to the foundations, only the
    # top card of a pile moves (so no slide-under shortcut), and the match also ends on the spread
    "nerts": {"nertz_builds": True, "aces_to_work": False, "block_moves": "none", "slide_under": False,
              "match_end": "spread"},
    "pounce": {"work_piles": 5},  # "How to Play Nertz": "five or six" river columns
    "racing_demon": {"episode": "match", "hands": 5},  # "How to Play Nertz": a fixed number of rounds
    "family": {"stock_draw": 1, "nertz_pile_size": 10, "call_bonus": 10},  # "How to Play Nertz" house rules
}


@dataclass(frozen=True)
class NertzConfig:
    """Rule options (R2 to R7) and the reward mode; see RULES.md for each.

    Args:
        num_players: 2 to 8 players, each with their own deck (R1).
        nertz_pile_size: cards in each Nertz pile (R2), default 13.
        work_piles: work piles per player, 4 to 6 (R2).
        stock_draw: cards turned per DRAW, 3 or 1 (R4.1).
        nertz_to_work: the Nertz top may go onto a non-empty work pile (R4.3; False is Snerts).
        block_moves: what may move from a work pile onto another (R4.3): ``"any"`` exposed card with
            the cards above it, only the ``"whole"`` pile (Nerds), or only the exposed card,
            ``"none"`` (German Nerts).
        aces_to_work: an ace may go to a work pile (R4.3; False: only to a foundation, German Nerts).
        fill_empty_from: what may fill an empty work pile (R4.4): ``"any"`` source, only the
            ``"nertz"`` top (Snerts), or the ``"nertz_or_waste"`` top but no work-pile card (Nerds).
        slide_under: the slide-under move of R4.5.
        auto_call: call "Nertz!" by itself when the Nertz pile empties (R4.6).
        collision: who wins a foundation race (R6): ``"random"`` (weighted by ``speed``) or
            ``"seat"`` (lower seat wins).
        speed: per-player weights for ``collision="random"``; ``None`` means equal.
        nertz_penalty: points lost per card left in the Nertz pile (R7).
        call_bonus: points for calling (R7).
        stall_ticks: ticks without progress before the stall rotation (R5); ``"auto"`` is one
            whole stock cycle of the player with the most stock and waste.
        max_stall_rotations: rotations in a row without progress before the hand ends (R5);
            ``None`` means 3 for draw-3 and 1 for draw-1.
        max_cycles: ticks before the hand is truncated (R5).
        reward: ``"dense"`` (change of the R7 running score each tick), ``"sparse"`` (the R7
            score at the end), ``"relative"`` (dense minus the opponents' mean) or ``"lead"`` (the
            change of the R7 score minus the best opponent's: a hand's rewards sum to the final
            margin over the leading opponent).
        turn_based: players act one at a time in seat order, seat 0 first (seat ``tick % P`` is on
            turn); off turn only WAIT is legal (R3).
        nertz_builds: cards may be played onto an opponent's Nertz top, same suit, one rank up or
            down (R4.8); the catalogue gains the ``{source}>nertz@{k}`` actions (R10).
        partners: teams of two seated opposite (seats ``p`` and ``p + P/2``), scores summed (R8);
            needs 4, 6 or 8 players.
        move_ticks: how many ticks each kind of move takes: ``None`` (all 1), one integer for every
            move, or a mapping from the kinds ``draw call foundation work under nertz`` to ticks
            (unnamed kinds take 1). A move of ``d`` ticks is judged when it is made, is in the air
            for ``d - 1`` more ticks (its player may only WAIT) and resolves, and may collide, in
            the last of them (R3, R6).
        episode: ``"hand"`` (an episode is one hand) or ``"match"`` (a whole match, R8).
        target_score: the match target of R8 (``episode="match"``).
        hands: play this many hands per match instead of a target (R8, Racing Demon), 1 to 127;
            ``None`` plays to ``target_score``.
        max_hands: a match still undecided after this many hands (tie-break hands included) is
            truncated (``episode="match"``); 1 to 127, at least ``hands``.
        match_end: how a match to ``target_score`` ends and who wins it (R8): ``"highest"`` total,
            the ``"caller"`` who reached the target (Snerts), also on a ``"spread"`` of the totals
            reaching the target (German Nerts), or only a total that must ``"exceed"`` it (Nerds).
            Not with ``hands``, which ends a match by its count.

    ``NertzConfig.from_kwargs(preset="snerts", **overrides)`` starts from a named rule set of
    ``PRESETS``.
    """

    num_players: int = 4
    nertz_pile_size: int = 13
    work_piles: int = 4
    stock_draw: int = 3
    nertz_to_work: bool = True
    block_moves: str = "any"
    aces_to_work: bool = True
    fill_empty_from: str = "any"
    slide_under: bool = True
    auto_call: bool = False
    collision: str = "random"
    speed: tuple[float, ...] | None = None
    nertz_penalty: int = 2
    call_bonus: int = 0
    stall_ticks: int | str = "auto"
    max_stall_rotations: int | None = None
    max_cycles: int = 2000
    reward: str = "dense"
    turn_based: bool = False
    nertz_builds: bool = False
    partners: bool = False
    move_ticks: Any = None
    episode: str = "hand"
    target_score: int = 100
    hands: int | None = None
    max_hands: int = 100
    match_end: str = "highest"
    _packed: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._check_table()
        self._check_play()
        self._check_match()
        for f in dataclasses.fields(self):  # numpy's as Python's: JSON (to_dict, recordings), no int8 arithmetic
            value = getattr(self, f.name, 0)
            if isinstance(value, (np.integer, np.bool_)):
                object.__setattr__(self, f.name, bool(value) if isinstance(value, np.bool_) else int(value))
        object.__setattr__(self, "_packed", _pack(self))

    def _check_table(self) -> None:
        """The table and the moves' options (R1, R2, R4)."""
        if not is_int(self.num_players) or not 2 <= self.num_players <= 8:
            _fail("num_players", self.num_players, "an integer from 2 to 8")
        if not is_int(self.work_piles) or not 4 <= self.work_piles <= 6:
            _fail("work_piles", self.work_piles, "an integer from 4 to 6")
        top = 52 - self.work_piles
        if not is_int(self.nertz_pile_size) or not 1 <= self.nertz_pile_size <= top:
            _fail("nertz_pile_size", self.nertz_pile_size, f"an integer from 1 to {top}")
        if not is_int(self.stock_draw) or self.stock_draw not in (1, 3):
            _fail("stock_draw", self.stock_draw, "3 or 1")
        for name in ("nertz_to_work", "slide_under", "auto_call", "turn_based", "nertz_builds", "partners",
                     "aces_to_work"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                _fail(name, getattr(self, name), "True or False")
        check_choice("fill_empty_from", self.fill_empty_from, FILL_EMPTY_FROM)
        check_choice("block_moves", self.block_moves, BLOCK_MOVES)
        check_choice("collision", self.collision, ("random", "seat"))
    def _check_play(self) -> None:
        """Races, scoring, the stall rule, the tick limit, rewards and partners (R3, R5-R8)."""
        if self.speed is not None:
            object.__setattr__(self, "speed", normalise_speed(self.speed, self.num_players, self.collision))
        for name in ("nertz_penalty", "call_bonus"):
            if not is_int(getattr(self, name)) or not 0 <= getattr(self, name) <= MAX_POINTS:
                _fail(name, getattr(self, name), f"an integer >= 0 (at most {MAX_POINTS})")
        if not (self.stall_ticks == "auto" if isinstance(self.stall_ticks, str) else
                is_int(self.stall_ticks) and 1 <= self.stall_ticks <= MAX_TICKS):  # fmt: skip
            _fail("stall_ticks", self.stall_ticks, f"'auto' or an integer >= 1 (at most {MAX_TICKS})")
        if self.max_stall_rotations is not None and (
            not is_int(self.max_stall_rotations) or not 0 <= self.max_stall_rotations <= MAX_TICKS
        ):
            _fail("max_stall_rotations", self.max_stall_rotations, f"None or an integer >= 0 (at most {MAX_TICKS})")
        if not is_int(self.max_cycles) or not 1 <= self.max_cycles <= MAX_TICKS:
            _fail("max_cycles", self.max_cycles, f"an integer >= 1 (at most {MAX_TICKS})")
        check_choice("reward", self.reward, REWARD_MODES)
        if self.partners and self.num_players not in (4, 6, 8):
            _fail("partners", self.partners, "False, or True with 4, 6 or 8 players (teams of two seated opposite)")
        object.__setattr__(self, "move_ticks", normalise_move_ticks(self.move_ticks))
    def _check_match(self) -> None:
        """Whole matches (R8)."""
        check_choice("episode", self.episode, EPISODES)
        if not is_int(self.target_score) or not 1 <= self.target_score <= MAX_TICKS:
            _fail("target_score", self.target_score, f"an integer >= 1 (at most {MAX_TICKS})")
        if self.hands is not None and (not is_int(self.hands) or not 1 <= self.hands <= MAX_HANDS):
            _fail("hands", self.hands, f"None or an integer from 1 to {MAX_HANDS} (the most max_hands allows)")
        if not is_int(self.max_hands) or not 1 <= self.max_hands <= MAX_HANDS:
            _fail("max_hands", self.max_hands, f"an integer from 1 to {MAX_HANDS}")
        check_choice("match_end", self.match_end, MATCH_ENDS)
        if self.match_end != "highest" and self.hands is not None:
            _fail("match_end", self.match_end, f"'highest' with hands={self.hands} (a fixed number of hands ends "
                  "the match by its count); the other match ends play to target_score, with hands=None")
        if self.episode == "match":
            if self.hands is not None and self.hands > self.max_hands:
                _fail("hands", self.hands, f"None or an integer from 1 to max_hands={self.max_hands}")
            # R4.8: with builds a Nertz pile can grow past its deal, up to the 52 cards it has room for
            most_left = 52 if self.nertz_builds else self.nertz_pile_size
            worst = self.max_hands * max(self.nertz_penalty * most_left, 52 + self.call_bonus)
            if worst > MAX_OBSERVED_TOTAL:
                _fail("max_hands", self.max_hands, f"a cap with max_hands x (largest hand score) <= "
                      f"{MAX_OBSERVED_TOTAL}, the largest match total the observation holds exactly (R8)")

    @classmethod
    def from_kwargs(cls, preset: str | None = None, **options: Any) -> NertzConfig:
        """Build from keyword options, naming any unknown option and listing the known ones.
        ``preset`` names a rule set of ``PRESETS`` that the other options override."""
        check_names(options, option_names())
        if preset is not None:
            if not isinstance(preset, str) or preset not in PRESETS:
                _fail("preset", preset, ", ".join(repr(p) for p in PRESETS))
            options = {**PRESETS[preset], **options}
        return cls(**options)

    @property
    def is_default_timing(self) -> bool:
        """Every move takes one tick (no ``move_ticks``)."""
        return all(t == 1 for _, t in self.move_ticks)

    def ticks_of(self, kind: str) -> int:
        """Ticks a move of ``kind`` (one of ``MOVE_KINDS``) takes."""
        return dict(self.move_ticks)[kind]

    @property
    def teams(self) -> tuple[tuple[int, ...], ...]:
        """The seats of each team (R8 partners: seats ``p`` and ``p + P/2``), or one seat each."""
        p = self.num_players
        if not self.partners:
            return tuple((s,) for s in range(p))
        return tuple((s, python_of(partner_of)(s, p)) for s in range(p // 2))

    def team_of(self, seat: int) -> int:
        """The team of ``seat``: team ``t`` is seat ``t`` and its partner (R8)."""
        return min(seat, python_of(partner_of)(seat, self.num_players)) if self.partners else seat

    @property
    def num_teams(self) -> int:
        return len(self.teams)

    def replace(self, **changes: Any) -> NertzConfig:
        """A copy with ``changes``, checked as a new config; an unknown option name raises, listing the known."""
        check_names(changes, option_names())
        return dataclasses.replace(self, **changes)

    @property
    def stall_rotations(self) -> int:
        """``max_stall_rotations`` with its default resolved (R5)."""
        if self.max_stall_rotations is not None:
            return int(self.max_stall_rotations)
        return 3 if self.stock_draw == 3 else 1

    @property
    def packed(self) -> np.ndarray:
        """The options as the int64 array the compiled engine reads (read-only)."""
        return self._packed

    @property
    def speed_weights(self) -> np.ndarray:
        return np.asarray(self.speed if self.speed is not None else (1.0,) * self.num_players, dtype=np.float64)

    def to_dict(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.init}
        out["move_ticks"] = dict(self.move_ticks)
        return out

    def __getstate__(self) -> dict[str, Any]:
        return self.to_dict()

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Restores exactly the options ``__getstate__`` pickled, checked as a new config."""
        check_pickled_fields(state, option_names())
        for k, v in state.items():
            object.__setattr__(self, k, v)
        self.__post_init__()


def option_names() -> tuple[str, ...]:
    """The options of ``NertzConfig``, in order (its fields but the packed array)."""
    return tuple(f.name for f in dataclasses.fields(NertzConfig) if f.init)


def _pack(config: NertzConfig) -> np.ndarray:
    """The options as the engine reads them: one read-only int64 row indexed by the ``C_*`` constants."""
    packed = np.zeros(C_SIZE, dtype=np.int64)
    packed[C_PLAYERS] = config.num_players
    packed[C_NERTZ] = config.nertz_pile_size
    packed[C_WORK] = config.work_piles
    packed[C_DRAW] = config.stock_draw
    packed[C_NERTZ_TO_WORK] = config.nertz_to_work
    packed[C_FILL_ANY] = config.fill_empty_from == "any"
    packed[C_SLIDE] = config.slide_under
    packed[C_AUTO_CALL] = config.auto_call
    packed[C_COLLISION_SEAT] = config.collision == "seat"
    packed[C_PENALTY] = config.nertz_penalty
    packed[C_BONUS] = config.call_bonus
    packed[C_STALL_TICKS] = 0 if config.stall_ticks == "auto" else config.stall_ticks
    packed[C_MAX_ROT] = config.stall_rotations
    packed[C_MAX_CYCLES] = config.max_cycles
    packed[C_REWARD] = REWARD_MODES.index(config.reward)
    packed[C_TURN_BASED] = config.turn_based
    packed[C_BUILDS] = config.nertz_builds
    packed[C_PARTNERS] = config.partners
    packed[C_TICKS] = 1
    for kind, ticks in config.move_ticks:
        packed[C_TICKS + 1 + MOVE_KINDS.index(kind)] = ticks
    packed[C_EPISODE] = config.episode == "match"
    packed[C_TARGET] = config.target_score
    packed[C_HANDS] = 0 if config.hands is None else config.hands
    packed[C_MAX_HANDS] = config.max_hands
    packed[C_BLOCKS] = BLOCK_MOVES.index(config.block_moves)
    packed[C_ACES_TO_WORK] = config.aces_to_work
    packed[C_FILL_WASTE] = config.fill_empty_from != "nertz"
    packed[C_MATCH_END] = MATCH_ENDS.index(config.match_end)
    packed.setflags(write=False)
    return packed
