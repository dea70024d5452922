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

With ``nertz_builds`` (R4.8) a player's Nertz and work piles may hold cards of other decks. They
show by their card code in the block of the player who holds them (a work pile still holds each
rank once, so its order still follows from its ranks); ``foundation`` still marks a card in its
owner's block. Ownership in layouts is not encoded (``Game.snapshot()`` lists it).

The state vector (``env.state()``) has the same blocks in seat order (``seat{p}``), the shared
table, then each player's hidden cards: ``seat{p}.nertz_order`` (1 = bottom),
``seat{p}.stock_order`` (1 = next to turn) and ``seat{p}.waste_order`` (1 = top). With R4.8 a
Nertz pile may hold the same card code twice (its holder's own card and a built one); its
``nertz_order`` then shows the upper of the two.
"""

from __future__ import annotations

import numpy as np

from nertz_env.config import NertzConfig

COUNTS = ("nertz_count", "stock_count", "waste_count", "called")


class ObservationLayout:
    """Offsets of every named part of the observation (``slices``) and state (``state_slices``)."""

    def __init__(self, config: NertzConfig):
        p, w = config.num_players, config.work_piles
        self.block_size = 52 * (w + 3) + 4
        self.slices: dict[str, slice] = {}
        high: list[np.ndarray] = []
        for q in range(p):
            self._block("self" if q == 0 else f"opp{q}", q * self.block_size, w, config, self.slices, high)
        o = p * self.block_size
        for name, size, top in (("own_waste_order", 52, 52), ("own_stock_order", 52, 52), ("own_stock_known", 1, 1)):
            self.slices[name] = slice(o, o + size)
            high.append(np.full(size, top))
            o += size
        o = self._shared(o, p, self.slices, high)
        self.size = o
        self.high = np.concatenate(high).astype(np.int8)

        self.state_slices: dict[str, slice] = {}
        shigh: list[np.ndarray] = []
        for q in range(p):
            self._block(f"seat{q}", q * self.block_size, w, config, self.state_slices, shigh)
        o = self._shared(p * self.block_size, p, self.state_slices, shigh)
        for q in range(p):
            for name in ("nertz_order", "stock_order", "waste_order"):
                self.state_slices[f"seat{q}.{name}"] = slice(o, o + 52)
                shigh.append(np.full(52, 52))
                o += 52
        self.state_size = o
        self.state_high = np.concatenate(shigh).astype(np.int8)

    @staticmethod
    def _block(prefix, o, w, config, slices, high):
        parts = [("nertz_top", 52, 1)] + [(f"work{j}", 52, 1) for j in range(w)]
        parts += [("waste_top", 52, 1), ("foundation", 52, 1)]
        most = 52 if config.nertz_builds else 52 - w  # R4.8 builds can fill a Nertz pile's 52 places
        parts += [("nertz_count", 1, most), ("stock_count", 1, 52), ("waste_count", 1, 52), ("called", 1, 1)]
        for name, size, top in parts:
            slices[f"{prefix}.{name}"] = slice(o, o + size)
            high.append(np.full(size, top))
            o += size

    @staticmethod
    def _shared(o, p, slices, high):
        for name, size, top in (("foundation_tops", 52, p), ("since_progress", 1, 127), ("stall_rotations", 1, 127)):
            slices[name] = slice(o, o + size)
            high.append(np.full(size, top))
            o += size
        return o

    def view(self, vector: np.ndarray, name: str) -> np.ndarray:
        """The named part of an observation (or, for ``seat*`` names, of a state vector)."""
        table = self.slices if name in self.slices else self.state_slices
        if name not in table:
            raise KeyError(f"unknown slice {name!r}; known: {', '.join(list(self.slices)[:6])}, ...")
        return vector[..., table[name]]
