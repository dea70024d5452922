"""Features of every legal move, read from the observation alone (R9), for policies that score
moves one by one (``agents.policy.build_scorer``) instead of reading a fixed 181-way head.

A flat head has to learn pile-indexed lookups ("which card is exposed on work pile 2, and where can
it go") from one-hot card planes. Here each legal move ``a`` of a row gets a short vector that says
what *that* move does: its kind and source, the card it moves, whether it empties a pile or fills
a space, what it exposes and whether the exposed card (or the Nertz top) can go somewhere next,
the race for a foundation slot (R6), and the value the ``heuristic``'s short look-ahead gives it
(``agents._search.score_moves``). No torch here: the trainer, the agents and the tests share it.

>>> from nertz_env.vector import NertzVectorEnv
>>> env = NertzVectorEnv(2, seed=0)
>>> obs, masks = env.reset()
>>> rows, acts, feats = ActionFeatures(env.config)(obs.reshape(8, -1), masks.reshape(8, -1))
>>> feats.shape == (int(masks.sum()), N_FEATURES) and bool((masks.reshape(8, -1)[rows, acts] == 1).all())
True

The pairs come in row-major order (``np.nonzero(masks)``), so ``rows`` is sorted.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np
from numba import njit

from nertz_env.actions import CALL, DRAW, NERTZ, TO_FOUNDATION, TO_WORK, WAIT, WASTE, WORK_SOURCE
from nertz_env.agents._follow import FIRST_FOLLOW_COLUMN, FOLLOW_COLUMNS, N_FOLLOW_FEATURES, follow_features
from nertz_env.agents._judge import cycle_useful, race_cards, score_lead, soon_in_reach, soon_playable, useful
from nertz_env.agents._kernels import read_stock, read_top, read_tops, read_waste, read_work
from nertz_env.agents._race import FIRST_RACE_COLUMN, N_RACE_FEATURES, RACE_COLUMNS, race_features, read_rivals
from nertz_env.agents._search import lookahead_depth, pick_moves, score_moves
from nertz_env.agents.base import (
    O_BLOCK,
    O_FOUNDATION_TOPS,
    O_NERTZ_COUNT,
    O_NERTZ_TOP,
    O_PLAYERS,
    O_SINCE_PROGRESS,
    O_STOCK_COUNT,
    O_WASTE_COUNT,
    O_WORK0,
    O_WORK_PILES,
    observation_offsets,
)
from nertz_env.config import C_DRAW, NertzConfig
from nertz_env.engine import builds_on, fits_foundation, lay_on_foundation_tops, rank, stamp_compiled
from nertz_env.engine.constants import T_COUNT, T_DEST, T_KIND, T_SOURCE

# Columns of the feature vector.
# fmt: off
(
    F_WAIT, F_DRAW, F_CALL, F_TO_FOUNDATION, F_TO_WORK, F_UNDER,  # the kind (R4)
    F_FROM_NERTZ, F_FROM_WASTE, F_FROM_WORK,  # the source
    F_RANK, F_ACE, F_TWO, F_KING,  # the card moved (the bottom card of a block)
    F_BLOCK, F_EMPTIES_SOURCE, F_INTO_SPACE, F_DST_HEIGHT,
    F_FOUNDATION_READY,  # the card moved could go to a foundation now (R4.2)
    F_RACE,  # opponents who could put the same card on the same foundation slot now (R6)
    F_REVEALS_NERTZ, F_LAST_NERTZ,  # a new Nertz card turns up / the Nertz pile empties
    F_EXPOSES, F_EXPOSED_TO_FOUNDATION, F_EXPOSED_TO_WORK, F_NERTZ_ONTO_EXPOSED,
    F_NERTZ_FOLLOWS, F_NERTZ_TO_FOUNDATION_AFTER,
    F_LOOKAHEAD, F_LOOKAHEAD_GAP, F_SHOULD_CALL,  # the heuristic's look-ahead (agents._search)
    F_NERTZ_LEFT, F_LEAD, F_SPACES, F_SINCE_PROGRESS, F_STOCK_LEFT, F_WASTE_LEFT,  # the row's own facts
    # The stock cycle (R4.1, the viewer's memory of R9), only with ``cycle``:
    F_STOCK_KNOWN,  # the viewer knows what its stock will turn (or it is empty: DRAW flips the waste)
    F_TURNED_TO_FOUNDATION, F_TURNED_TO_WORK, F_TURNED_NERTZ_ONTO,  # DRAW: the card it turns up
    F_COVERS_PLAYABLE,  # DRAW: the waste top it covers goes to a foundation or a work pile now
    F_CYCLE_AFTER, F_CYCLE_GAIN,  # useful cards the cycle shows after the move, and the change
    F_DRAWS_TO_USEFUL,  # DRAW: 1 / the draws until a useful card shows on the waste top
    F_SOON_MINE,  # with ``opponent``: the viewer's cards in reach an opponent's next play frees (_judge.soon_playable)
    F_BURIES_SOON, F_FEEDS,  # DRAW or a work move covers such a card / opponents' cards may follow a foundation move
) = range(47)
# fmt: on
N_FEATURES = 36  # the columns every move-scoring policy reads
N_CYCLE_FEATURES = 44  # with the stock-cycle columns (``ActionFeatures(cycle=True)``)
CYCLE_COLUMNS = tuple(range(N_FEATURES, N_CYCLE_FEATURES))
N_OPPONENT_FEATURES = 47  # with the opponent columns (``ActionFeatures(opponent=True)``; the cycle ones zero without)
N_IDENTITY_FEATURES = N_OPPONENT_FEATURES + 52  # with ``identity``: 1 on the card (0-51) a move takes
IDENTITY_COLUMNS = tuple(range(N_OPPONENT_FEATURES, N_IDENTITY_FEATURES))
assert FIRST_FOLLOW_COLUMN == N_IDENTITY_FEATURES  # with ``follow``: agents._follow's columns come next
assert FIRST_RACE_COLUMN == N_FOLLOW_FEATURES  # with ``race``: agents._race's columns come next
OPPONENT_COLUMNS = (F_SOON_MINE, F_BURIES_SOON, F_FEEDS)
LOOKAHEAD_COLUMNS = (F_LOOKAHEAD, F_LOOKAHEAD_GAP, F_SHOULD_CALL)
# Named groups of columns, each column in exactly one, for ablations: a policy trained and played
# with a group zeroed (``ActionFeatures(drop_features=...)``, ``train_selfplay --drop-features``).
FEATURE_GROUPS: dict[str, tuple[int, ...]] = {
    "kind": (F_WAIT, F_DRAW, F_CALL, F_TO_FOUNDATION, F_TO_WORK, F_UNDER),  # the kind of move (R4)
    "source": (F_FROM_NERTZ, F_FROM_WASTE, F_FROM_WORK),  # the pile it takes from
    "card": (F_RANK, F_ACE, F_TWO, F_KING),  # the card moved (the bottom card of a block)
    "shape": (F_BLOCK, F_EMPTIES_SOURCE, F_INTO_SPACE, F_DST_HEIGHT),  # block size, pile emptied, space filled, height
    "foundation": (F_FOUNDATION_READY, F_RACE),  # the card could go up now; opponents racing for its slot (R6)
    "exposes": (F_EXPOSES, F_EXPOSED_TO_FOUNDATION, F_EXPOSED_TO_WORK),  # the card uncovered and where it fits
    "nertz": (F_REVEALS_NERTZ, F_LAST_NERTZ, F_NERTZ_ONTO_EXPOSED, F_NERTZ_FOLLOWS,
              F_NERTZ_TO_FOUNDATION_AFTER),  # the Nertz pile: turned, emptied, or its top playable after the move
    "lookahead": LOOKAHEAD_COLUMNS,  # the heuristic's search (zero anyway without lookahead)
    "table": (F_NERTZ_LEFT, F_LEAD, F_SPACES, F_SINCE_PROGRESS, F_STOCK_LEFT, F_WASTE_LEFT),  # the row's own facts
    "cycle": CYCLE_COLUMNS,  # the stock cycle (zero anyway without cycle)
    "opponents": OPPONENT_COLUMNS,  # what the opponents' cards in reach do (zero anyway without opponent)
    "identity": IDENTITY_COLUMNS,  # which card is moved (zero anyway without identity)
    "follow": FOLLOW_COLUMNS,  # what another work pile may do next onto the card laid (zero anyway without follow)
    "race": RACE_COLUMNS,  # how near cards are to the foundations; the opponents' Nertz tops (zero anyway without race)
}  # fmt: skip


def feature_groups(groups: str | Iterable[str]) -> tuple[str, ...]:
    """The named ``FEATURE_GROUPS`` (one name, or several; none: ``()``), once each in the order
    given; an unknown name is refused with the known ones."""
    names = tuple(dict.fromkeys((groups,) if isinstance(groups, str) else groups))
    for name in names:
        if name not in FEATURE_GROUPS:
            raise ValueError(f"unknown feature group {name!r}: accepted {', '.join(FEATURE_GROUPS)}")
    return names


def feature_columns(groups: str | Iterable[str]) -> tuple[int, ...]:
    """The sorted columns of the named ``FEATURE_GROUPS`` (``feature_groups``)."""
    return tuple(sorted({c for name in feature_groups(groups) for c in FEATURE_GROUPS[name]}))


@njit(cache=True, inline="always")
def _table_facts(o, off, n_players, block, work_len, cfg, facts) -> None:
    """``facts``: the row's own columns, ``F_NERTZ_LEFT`` to ``F_WASTE_LEFT`` in order."""
    spaces = 0
    for j in range(work_len.shape[0]):
        spaces += work_len[j] == 0
    facts[0] = o[off[O_NERTZ_COUNT]] / 13.0
    facts[1] = max(-3.0, min(3.0, score_lead(o, off, n_players, block, cfg) / 10.0))
    facts[2] = spaces / work_len.shape[0]
    facts[3] = min(o[off[O_SINCE_PROGRESS]], 60) / 60.0
    facts[4] = o[off[O_STOCK_COUNT]] / 52.0
    facts[5] = o[off[O_WASTE_COUNT]] / 52.0


@njit(cache=True, inline="always")
def _card_features(f, kind, src, dst, n, nertz_top, n_left, waste, waste_len, work, work_len, tops, after, contested):
    """The features of a move's card, of what its source shows afterwards and of the table after
    it (``after``: the foundation tops once a foundation move has landed, by the engine's R4.2)."""
    exposed = -1
    if src == NERTZ:
        card = nertz_top
        f[F_FROM_NERTZ] = 1.0
        f[F_REVEALS_NERTZ] = 1.0 if n_left > 1 else 0.0
        f[F_LAST_NERTZ] = 1.0 if n_left == 1 else 0.0
    elif src == WASTE:
        card = waste[waste_len - 1]
        f[F_FROM_WASTE] = 1.0
        exposed = waste[waste_len - 2] if waste_len > 1 else -1
    else:
        i = src - WORK_SOURCE
        card = work[i, work_len[i] - n]
        f[F_FROM_WORK] = 1.0
        f[F_EMPTIES_SOURCE] = 1.0 if n == work_len[i] else 0.0
        exposed = work[i, work_len[i] - n - 1] if work_len[i] > n else -1
    r = rank(card)
    f[F_RANK] = r / 13.0
    f[F_ACE] = 1.0 if r == 1 else 0.0
    f[F_TWO] = 1.0 if r == 2 else 0.0
    f[F_KING] = 1.0 if r == 13 else 0.0
    f[F_BLOCK] = n / 13.0
    f[F_FOUNDATION_READY] = 1.0 if fits_foundation(card, tops) else 0.0
    after[:, :] = tops
    if kind == TO_FOUNDATION:
        if r > 1:
            f[F_RACE] = min(contested[card], 3) / 3.0
        lay_on_foundation_tops(after, card)
    else:
        f[F_DST_HEIGHT] = work_len[dst] / 13.0
        f[F_INTO_SPACE] = 1.0 if kind == TO_WORK and work_len[dst] == 0 else 0.0
    if exposed >= 0:
        f[F_EXPOSES] = 1.0
        f[F_EXPOSED_TO_FOUNDATION] = 1.0 if fits_foundation(exposed, after) else 0.0
        if src >= WORK_SOURCE and nertz_top >= 0 and builds_on(nertz_top, exposed):
            f[F_NERTZ_ONTO_EXPOSED] = 1.0
        for j in range(work_len.shape[0]):
            if j != src - WORK_SOURCE and work_len[j] > 0 and builds_on(exposed, work[j, work_len[j] - 1]):
                f[F_EXPOSED_TO_WORK] = 1.0
    if src != NERTZ and nertz_top >= 0:
        if kind == TO_WORK and src == WASTE and builds_on(nertz_top, card):
            f[F_NERTZ_FOLLOWS] = 1.0  # the moved card becomes a top the Nertz card fits on
        f[F_NERTZ_TO_FOUNDATION_AFTER] = 1.0 if fits_foundation(nertz_top, after) else 0.0
    return card, exposed


@njit(cache=True, inline="always")
def _lookahead_features(f, v, root, vmax, should_call):
    """The ``LOOKAHEAD_COLUMNS`` of a move of search value ``v`` (-inf: not searched; ``root``: WAIT's)."""
    if v > -np.inf:
        f[F_LOOKAHEAD] = max(-3.0, min(6.0, v - root)) / 3.0
        f[F_LOOKAHEAD_GAP] = max(-6.0, v - vmax) / 3.0
    else:
        f[F_LOOKAHEAD_GAP] = -2.0
    f[F_SHOULD_CALL] = 1.0 if should_call else 0.0


@njit(cache=True, inline="always")
def _opponent_features(f, kind, dst, card, waste_top, work, work_len, tops, contested, soon_mine):
    """The ``OPPONENT_COLUMNS`` of a move: ``soon_mine``, whether the move covers such a card, and
    the opponents' cards in reach a foundation move of ``card`` lets follow it (R4.2)."""
    f[F_SOON_MINE] = min(soon_mine, 3) / 3.0
    if kind == DRAW:
        f[F_BURIES_SOON] = 1.0 if soon_playable(waste_top, contested, tops) else 0.0
    elif kind == TO_WORK and work_len[dst] > 0:
        f[F_BURIES_SOON] = 1.0 if soon_playable(work[dst, work_len[dst] - 1], contested, tops) else 0.0
    elif kind == TO_FOUNDATION and card % 13 < 12 and not fits_foundation(card + 1, tops):
        f[F_FEEDS] = min(contested[card + 1], 3) / 3.0


@njit(cache=True, inline="always")
def _playable(card, tops, work, work_len) -> bool:
    """``card`` goes to a foundation (R4.2) or onto one of the viewer's work piles (R4.3) now."""
    playable = fits_foundation(card, tops)
    for j in range(work_len.shape[0]):
        playable = playable or (work_len[j] > 0 and builds_on(card, work[j, work_len[j] - 1]))
    return playable


@njit(cache=True, inline="always")
def _draw_features(f, nertz_top, waste, w, stock, k, n_draw, work, work_len, tops, buf) -> int:
    """DRAW's columns of the stock cycle (R4.1): the card it turns up, the waste top it covers and
    the draws until a useful card shows; returns the useful cards of the cycle after it."""
    if w > 0 and _playable(waste[w - 1], tops, work, work_len):
        f[F_COVERS_PLAYABLE] = 1.0
    if k == 0:  # the stock is empty: DRAW turns the waste over, its bottom card first to turn
        return cycle_useful(buf, 0, waste, w, n_draw, nertz_top, tops)
    d = min(n_draw, k)
    turned = stock[d - 1]
    to_foundation = fits_foundation(turned, tops)
    f[F_TURNED_TO_FOUNDATION] = 1.0 if to_foundation else 0.0
    f[F_TURNED_TO_WORK] = 1.0 if not to_foundation and _playable(turned, tops, work, work_len) else 0.0
    f[F_TURNED_NERTZ_ONTO] = 1.0 if nertz_top >= 0 and builds_on(nertz_top, turned) else 0.0
    for i in range((k + n_draw - 1) // n_draw):
        if useful(stock[min((i + 1) * n_draw, k) - 1], nertz_top, tops):
            f[F_DRAWS_TO_USEFUL] = 1.0 / (i + 1)
            break
    buf[:w] = waste[:w]
    buf[w : w + d] = stock[:d]
    return cycle_useful(buf, w + d, stock[d:], k - d, n_draw, nertz_top, tops)


@njit(cache=True, inline="always")
def _cycle_features(f, kind, src, nertz_top, waste, w, stock, k, n_draw, work, work_len, tops, after, before, buf):
    """The stock-cycle columns of a move (``CYCLE_COLUMNS``), when the viewer knows its stock
    (``k >= 0``, its length; R9 memory): what a DRAW turns up, and the useful cards
    (``_judge.cycle_useful``) the cycle shows after the move against ``before`` it. A Nertz move
    counts with the Nertz top unknown; a card move with ``after``, the foundation tops after it."""
    if k < 0:
        return
    f[F_STOCK_KNOWN] = 1.0
    if kind == DRAW:
        now = _draw_features(f, nertz_top, waste, w, stock, k, n_draw, work, work_len, tops, buf)
    elif kind in (WAIT, CALL):
        now = before
    else:
        now = cycle_useful(waste, w - 1 if src == WASTE else w, stock, k, n_draw, -1 if src == NERTZ else nertz_top,
                           after)  # fmt: skip
    f[F_CYCLE_AFTER] = min(now, 12) / 6.0
    f[F_CYCLE_GAIN] = max(-2.0, min(2.0, (now - before) / 3.0))


@njit(cache=True)
def fill_features(
    obs, masks, table, off, cfg, params, rows_single, ww_row, rows_eval, n_nertz, lookahead, cycle, opponent,
    identity, follow, race, feats, choice,
):
    """``feats[k]``: the features of the ``k``-th legal (row, action) pair in row-major order; the
    ``LOOKAHEAD_COLUMNS`` only with ``lookahead``, and then ``choice[row]`` is what the ``heuristic``
    of ``params`` plays (``agents._search.pick_moves``); the columns of each later flag only with it."""
    n_rows, n_actions = masks.shape
    n_work, n_players, block = off[O_WORK_PILES], off[O_PLAYERS], off[O_BLOCK]
    values = np.empty((n_rows, n_actions), np.float64)
    call = np.zeros(n_rows, np.bool_)
    if lookahead:
        score_moves(obs, masks, table, off, cfg, params, rows_single, ww_row, rows_eval, n_nertz, values, call)
        pick_moves(values, call, masks, table, choice)
    work = np.zeros((n_work, 13), np.int64)
    work_len = np.zeros(n_work, np.int64)
    tops = np.zeros((4, 14), np.int64)
    after = np.zeros((4, 14), np.int64)
    waste = np.zeros(52, np.int64)
    opp_work = np.zeros((n_work, 13), np.int64)
    opp_len = np.zeros(n_work, np.int64)
    contested = np.zeros(52, np.int64)
    stock = np.zeros(52, np.int64)
    buf = np.zeros(52, np.int64)
    rival_tops = np.zeros(max(n_players - 1, 1), np.int64)
    facts = np.zeros(F_WASTE_LEFT + 1 - F_NERTZ_LEFT)
    n_draw = cfg[C_DRAW]
    k = 0
    for row in range(n_rows):
        o = obs[row]
        nertz_top = read_top(o, off[O_NERTZ_TOP])
        n_left = o[off[O_NERTZ_COUNT]]
        waste_len = read_waste(o, off, waste)
        read_work(o, off[O_WORK0], n_work, work, work_len)
        read_tops(o, off[O_FOUNDATION_TOPS], tops)
        race_cards(o, off, n_players, block, n_work, opp_work, opp_len, contested)
        _table_facts(o, off, n_players, block, work_len, cfg, facts)
        waste_top = waste[waste_len - 1] if waste_len > 0 else -1
        soon_mine = soon_in_reach(nertz_top, waste_top, work, work_len, contested, tops) if opponent else 0
        known = -1  # the stock's length when the viewer knows it (R9), else -1
        if cycle:
            known = 0 if o[off[O_STOCK_COUNT]] == 0 else read_stock(o, off, stock)
        before = cycle_useful(waste, waste_len, stock, known, n_draw, nertz_top, tops) if known >= 0 else 0
        ready, fewest = read_rivals(o, off, n_players, block, tops, rival_tops) if race else (0, 0)
        vmax = -np.inf
        for a in range(n_actions):
            if lookahead and masks[row, a] != 0 and values[row, a] > vmax:
                vmax = values[row, a]
        root = values[row, 0] if lookahead else 0.0
        for a in range(n_actions):
            if masks[row, a] == 0:
                continue
            f = feats[k]
            f[:] = 0.0
            k += 1
            kind, src, dst, n = table[a, T_KIND], table[a, T_SOURCE], table[a, T_DEST], table[a, T_COUNT]
            f[F_WAIT + kind] = 1.0
            f[F_NERTZ_LEFT : F_WASTE_LEFT + 1] = facts
            if lookahead:
                _lookahead_features(f, values[row, a], root, vmax, kind == CALL and call[row])
            card, exposed = -1, -1
            if kind not in (WAIT, DRAW, CALL):
                card, exposed = _card_features(
                    f, kind, src, dst, n, nertz_top, n_left, waste, waste_len, work, work_len, tops, after, contested
                )
            if opponent:
                _opponent_features(f, kind, dst, card, waste_top, work, work_len, tops, contested, soon_mine)
            if identity and card >= 0:
                f[N_OPPONENT_FEATURES + card] = 1.0
            if follow and kind == TO_WORK:
                follow_features(f, src, dst, n, nertz_top, waste, waste_len, work, work_len, tops, cfg)
            if race:
                race_features(f, kind, card, exposed, tops, after, rival_tops, n_players - 1, ready, fewest)
            if cycle:
                _cycle_features(f, kind, src, nertz_top, waste, waste_len, stock, known, n_draw, work, work_len, tops,
                                after, before, buf)  # fmt: skip
    return k


class ActionFeatures:
    """``features(obs[n, D], masks[n, N]) -> (rows, actions, feats[K, N_FEATURES])`` for the ``K``
    legal pairs of a batch, under one config. ``lookahead`` is the depth of the ``heuristic``'s
    look-ahead behind ``LOOKAHEAD_COLUMNS`` (``True``: its default depth); ``False`` or 0 leaves
    those columns at zero, for policies that must learn without it. ``drop_features`` names
    ``FEATURE_GROUPS`` whose columns are zeroed after filling (an ablation); the search behind
    ``choice`` is unaffected. ``cycle`` adds the ``CYCLE_COLUMNS`` (``width`` is then
    ``N_CYCLE_FEATURES``, else ``N_FEATURES``); ``opponent`` adds the ``OPPONENT_COLUMNS`` (``width``
    ``N_OPPONENT_FEATURES``), ``identity`` the ``IDENTITY_COLUMNS`` (``N_IDENTITY_FEATURES``), ``follow``
    the ``FOLLOW_COLUMNS`` (``N_FOLLOW_FEATURES``), ``race`` the ``RACE_COLUMNS`` (``N_RACE_FEATURES``; each
    set adds its columns, those before zero unless asked)."""

    def __init__(
        self,
        config: NertzConfig | None = None,
        lookahead: bool | int = True,
        drop_features: str | Iterable[str] = (),
        cycle: bool = False,
        opponent: bool = False,
        identity: bool = False,
        follow: bool = False,
        race: bool = False,
    ):
        from nertz_env.agents.heuristic import DEFAULTS, HeuristicAgent

        self.cycle = bool(cycle)
        self.opponent, self.identity, self.follow, self.race = map(bool, (opponent, identity, follow, race))
        widths = (N_RACE_FEATURES, N_FOLLOW_FEATURES, N_IDENTITY_FEATURES, N_OPPONENT_FEATURES, N_CYCLE_FEATURES,
                  N_FEATURES)  # fmt: skip
        flags = [self.race, self.follow, self.identity, self.opponent, self.cycle, True]
        self.width = widths[flags.index(True)]
        self.drop_features = feature_groups(drop_features)  # the group names, once each, in the order given
        self.dropped_columns = [c for c in feature_columns(self.drop_features) if c < self.width]
        self.depth = lookahead_depth(lookahead, DEFAULTS["depth"])
        teacher = HeuristicAgent(config, depth=self.depth or DEFAULTS["depth"])
        self.config = teacher.config
        self.table, self.offsets, self.cfg, self.params = teacher.table, teacher.offsets, teacher.cfg, teacher.params
        self._rows = teacher._rows
        self._check = teacher._check_inputs  # the agents' own check of their rows (this config's)
        self.lookahead = self.depth > 0
        assert (observation_offsets(self.config) == self.offsets).all()

    def __call__(self, obs: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return self.with_choice(obs, masks)[:3]

    def with_choice(self, obs: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(rows, actions, feats, choice)``: with ``lookahead``, ``choice[row]`` is the action
        ``agents.make("heuristic", depth=self.depth)`` plays there, read off the features' own
        search (a trainer cloning that player needs no second search); without, all -1. The rows are
        checked first, as ``act_batch`` checks them (``AgentInputCheck.rows``)."""
        obs, masks = self._check.rows(obs, masks, "ActionFeatures")
        rows, acts = np.nonzero(masks)
        feats = np.empty((len(rows), self.width), np.float32)
        choice = np.full(len(obs), -1, np.int64)
        fill_features(
            obs, masks, self.table, self.offsets, self.cfg, self.params, *self._rows, self.lookahead, self.cycle,
            self.opponent, self.identity, self.follow, self.race, feats, choice,
        )  # fmt: skip
        if self.dropped_columns:
            feats[:, self.dropped_columns] = 0.0
        return rows, acts, feats, choice

    def plays_as(self, agent) -> bool:
        """Whether ``with_choice`` gives ``agent``'s own actions: a ``heuristic`` of this config
        whose options all match the features' search."""
        from nertz_env.agents.heuristic import HeuristicAgent

        return (
            self.lookahead
            and type(agent) is HeuristicAgent
            and agent.config == self.config
            and np.array_equal(agent.params, self.params)
        )


# An edit to the engine or to any agents module recompiles these kernels (they inline both).
stamp_compiled(globals(), Path(__file__).resolve().parent)
