"""Named slices of the observation and state vectors (R9), so users never count offsets.

An observation is egocentric: block ``self`` is the viewer, block ``opp{k}`` is the player ``k``
seats after the viewer. Every block holds, per card of that player's own deck (code
``suit * 13 + rank - 1``, suits C D H S): ``nertz_top`` (1 on the face-up Nertz card),
``work{j}`` (1 on each card in work pile j; a work pile's order follows from its ranks),
``waste_top``, ``foundation`` (1 on each of the player's cards on a foundation), then the counts
``nertz_count``, ``stock_count``, ``waste_count`` and ``called``. After the blocks: what the viewer
remembers (``own_waste_order``: 1 = waste top, 2 = below it, ...; ``own_stock_order``: 1 = the next
card to turn, filled once the viewer has turned through the whole stock, flagged by
``own_stock_known``), then the shared table: ``foundation_tops`` (index ``suit * 13 + rank - 1``:
how many foundation piles of that suit have that rank on top; rank 13 piles are complete),
``since_progress`` and ``stall_rotations`` (R5).

The timing section follows only under its options (R3), egocentric like the blocks (entry ``q`` is
about the player ``q`` seats after the viewer): with ``turn_based``, ``on_turn`` (1 on the seat
whose turn it is); with ``move_ticks``, per player ``air_ticks`` (the move in the air lands in the
``air_ticks``-th tick from now, 1 = the next tick; 0 = nothing in the air), ``air_kind`` (its
action kind: 1 draw, 2 call, 3 foundation, 4 work, 5 under, 6 nertz) and ``air_card`` (the card it
carries, code + 1; 0 for a draw or a call).
Then, only when their option is on, the R8 sections (players again egocentric): with ``partners``,
``partner`` (1 at the partner's offset, always P/2); with ``episode="match"``, each player's match
total, exact, as ``match.total_sign`` (1 if negative), ``match.total_hundreds`` and
``match.total_rest`` (total = +-(100 * hundreds + rest)), ``match.contender`` (may still win: after
a tie, only the tied), then ``match.hands_played`` and ``match.hands_left`` (of ``hands=N``; 0 when
playing to a target).

The state vector (``env.state()``) has the same blocks in seat order (``seat{p}``), the shared
table, then each player's hidden cards: ``seat{p}.nertz_order`` (1 = bottom),
``seat{p}.stock_order`` (1 = next to turn) and ``seat{p}.waste_order`` (1 = top), then the timing
section in seat order. With R4.8 a Nertz pile may hold the same card code twice (its holder's own
card and a built one); its ``nertz_order`` then shows the upper of the two.

With ``nertz_builds`` (R4.8) a player's Nertz and work piles may hold cards of other decks. They
show by their card code in the block of the player who holds them (a work pile still holds each
rank once, so its order still follows from its ranks); ``foundation`` still marks a card in its
owner's block. Ownership in layouts is not encoded (``Game.snapshot()`` lists it).
"""

from __future__ import annotations

import numpy as np

from nertz_env.config import NertzConfig
from nertz_env.engine.constants import (
    BLOCK_CARD_PARTS_AFTER_WORK,
    BLOCK_CARD_PARTS_BEFORE_WORK,
    BLOCK_COUNTS,
    DECK_SIZE,
    HIDDEN_SIZE,
    INT8_MAX,
    MEMORY_SIZE,
    SHARED_SIZE,
)

# The parts the engine writes (``nertz_env.engine.observe``), in its order and sizes: (name, size,
# highest value). A player's block is its card parts (around the work piles) and its counts.
_CARDS_BEFORE_WORK = [("nertz_top", DECK_SIZE, 1)]
_CARDS_AFTER_WORK = [("waste_top", DECK_SIZE, 1), ("foundation", DECK_SIZE, 1)]
_MEMORY = [("own_waste_order", DECK_SIZE, DECK_SIZE), ("own_stock_order", DECK_SIZE, DECK_SIZE),
           ("own_stock_known", 1, 1)]  # fmt: skip
_HIDDEN = [("nertz_order", DECK_SIZE, DECK_SIZE), ("stock_order", DECK_SIZE, DECK_SIZE),
           ("waste_order", DECK_SIZE, DECK_SIZE)]  # fmt: skip
assert len(_CARDS_BEFORE_WORK) == BLOCK_CARD_PARTS_BEFORE_WORK and len(_CARDS_AFTER_WORK) == BLOCK_CARD_PARTS_AFTER_WORK
assert sum(size for _, size, _ in _MEMORY) == MEMORY_SIZE and sum(size for _, size, _ in _HIDDEN) == HIDDEN_SIZE


class ObservationLayout:
    """Offsets of every named part of the observation (``slices``) and state (``state_slices``)."""

    def __init__(self, config: NertzConfig):
        p, w = config.num_players, config.work_piles
        self.block_size = DECK_SIZE * (BLOCK_CARD_PARTS_BEFORE_WORK + w + BLOCK_CARD_PARTS_AFTER_WORK) + BLOCK_COUNTS
        self.slices: dict[str, slice] = {}
        high: list[np.ndarray] = []
        for q in range(p):
            self._block("self" if q == 0 else f"opp{q}", q * self.block_size, w, config, self.slices, high)
        o = p * self.block_size
        o = self._append(o, _MEMORY, self.slices, high)
        o = self._shared(o, p, self.slices, high)
        o = self._timing(o, config, self.slices, high)
        o = self._r8(o, config, self.slices, high)
        self.size = o
        self.high = np.concatenate(high).astype(np.int8)

        self.state_slices: dict[str, slice] = {}
        shigh: list[np.ndarray] = []
        for q in range(p):
            self._block(f"seat{q}", q * self.block_size, w, config, self.state_slices, shigh)
        o = self._shared(p * self.block_size, p, self.state_slices, shigh)
        for q in range(p):
            o = self._append(o, _HIDDEN, self.state_slices, shigh, f"seat{q}.")
        o = self._timing(o, config, self.state_slices, shigh)
        o = self._r8(o, config, self.state_slices, shigh)
        self.state_size = o
        self.state_high = np.concatenate(shigh).astype(np.int8)

    @staticmethod
    def _block(prefix, o, w, config, slices, high):
        parts = _CARDS_BEFORE_WORK + [(f"work{j}", DECK_SIZE, 1) for j in range(w)] + _CARDS_AFTER_WORK
        most = DECK_SIZE if config.nertz_builds else DECK_SIZE - w  # R4.8 builds can fill all 52 places
        counts = [("nertz_count", 1, most), ("stock_count", 1, DECK_SIZE), ("waste_count", 1, DECK_SIZE)]
        counts += [("called", 1, 1)]
        assert len(counts) == BLOCK_COUNTS
        parts += counts
        ObservationLayout._append(o, parts, slices, high, f"{prefix}.")

    @staticmethod
    def _append(o, parts, slices, high, prefix=""):
        """Name ``(name, size, top)`` parts from offset ``o`` on; returns the offset after them."""
        for name, size, top in parts:
            slices[prefix + name] = slice(o, o + size)
            high.append(np.full(size, top))
            o += size
        return o

    @staticmethod
    def _shared(o, p, slices, high):
        parts = [("foundation_tops", DECK_SIZE, p), ("since_progress", 1, INT8_MAX), ("stall_rotations", 1, INT8_MAX)]
        assert sum(size for _, size, _ in parts) == SHARED_SIZE
        return ObservationLayout._append(o, parts, slices, high)

    @staticmethod
    def _timing(o, config, slices, high):
        p = config.num_players
        parts = [("on_turn", p, 1)] if config.turn_based else []
        if not config.is_default_timing:
            parts += [("air_ticks", p, 63), ("air_kind", p, 6), ("air_card", p, 52)]
        return ObservationLayout._append(o, parts, slices, high)

    @staticmethod
    def _r8(o, config, slices, high):
        """The partners and match sections (``engine.match.write_tails``), when their option is on."""
        p = config.num_players
        parts = [("partner", p, 1)] if config.partners else []
        if config.episode == "match":
            parts += [("match.total_sign", p, 1), ("match.total_hundreds", p, 127), ("match.total_rest", p, 99)]
            parts += [("match.contender", p, 1), ("match.hands_played", 1, 127), ("match.hands_left", 1, 127)]
        return ObservationLayout._append(o, parts, slices, high)

    def match_totals(self, vector: np.ndarray) -> np.ndarray:
        """The match totals (R8) of an observation (egocentric) or state vector (seat order), exact."""
        sign = np.where(self.view(vector, "match.total_sign") > 0, -1, 1)
        return sign * (100 * self.view(vector, "match.total_hundreds").astype(np.int64) + self.view(
            vector, "match.total_rest"))

    def view(self, vector: np.ndarray, name: str) -> np.ndarray:
        """The named part of an observation (or, for ``seat*`` names and any vector of the state's
        size, of a state vector)."""
        is_state = np.shape(vector)[-1] == self.state_size and name in self.state_slices
        table = self.state_slices if is_state or name not in self.slices else self.slices
        if name not in table:
            raise KeyError(f"unknown slice {name!r}; known: {', '.join(list(self.slices)[:6])}, ...")
        return vector[..., table[name]]
