"""Checks at the public boundaries: nothing from Python reaches the compiled engine unchecked.

The kernels index arrays with the card codes, pile lengths and counters they are handed, so a
saved table with a length out of range, an observation outside the observation space or a seed
that is not an integer would read or write outside an array. Each check here raises a
``ValueError`` (``TypeError`` for a wrong type) naming what was wrong and what is accepted. What
agents are handed (observations and masks) is checked by ``check_agent_inputs``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, overload

import numpy as np

from nertz_env import engine
from nertz_env.cards import card_name
from nertz_env.check_table_rules import check_flags, check_table_rules
from nertz_env.check_table_rules import fail as _fail
from nertz_env.config import NertzConfig, is_int
from nertz_env.config_values import is_int_dtype
from nertz_env.engine import AIR_ACTION, AIR_CARD, AIR_KIND, AIR_TICKS

MAX_SEED = 2**128 - 1  # what numpy's SeedSequence takes as one word, and more than enough


@overload
def check_seed(seed: Any, name: str = ..., *, allow_none: Literal[False]) -> int: ...
@overload
def check_seed(seed: Any, name: str = ..., allow_none: bool = ...) -> int | None: ...
def check_seed(seed: Any, name: str = "seed", allow_none: bool = True) -> int | None:
    """``seed`` as a Python int (or None when allowed), or a clear error: booleans, floats and
    negative numbers are refused instead of being read as some other seed."""
    if seed is None and allow_none:
        return None
    if not is_int(seed):
        accepted = "None or an integer" if allow_none else "an integer"
        raise TypeError(f"{name} must be {accepted} from 0 to 2**128 - 1, got {seed!r}")
    if not 0 <= int(seed) <= MAX_SEED:
        raise ValueError(f"{name} must be an integer from 0 to 2**128 - 1, got {seed!r}")
    return int(seed)


def check_int_actions(values: np.ndarray, n: int, what: str) -> None:
    """Every action an integer in ``0 .. n - 1`` (the catalogue, R10), as ``nertz_v0`` requires."""
    if values.size and not is_int_dtype(values.dtype):
        raise TypeError(f"{what} must be integers 0..{n - 1}, got dtype {values.dtype}")
    bad = np.flatnonzero((values.reshape(-1) < 0) | (values.reshape(-1) >= n))
    if bad.size:
        where = np.unravel_index(bad[0], values.shape) if values.ndim else ()
        value = values.reshape(-1)[bad[0]]
        raise ValueError(f"{what}: action {int(value)} at {tuple(int(i) for i in where)} is out of range; "
                         f"actions are 0..{n - 1}")


def check_seat(player: Any, players: int) -> int:
    """``player`` as a seat ``0 .. players - 1`` (a plain or numpy integer, not a bool): a negative
    seat would count from the last one instead of being refused."""
    if not is_int(player):
        raise TypeError(f"player must be a seat, an integer 0..{players - 1}, got {player!r}")
    if not 0 <= player < players:
        raise ValueError(f"player {player!r} is not a seat of this {players}-player game; seats are 0..{players - 1}")
    return int(player)


def check_agent(agent: Any, known: Mapping[str, int]) -> str:
    """``agent`` itself if it is one of ``known`` (a parallel env's agents), else a ``KeyError``."""
    if agent not in known:
        raise KeyError(f"unknown agent {agent!r}; agents are {', '.join(known)}")
    return agent


def check_agent_actions(actions: Any, agents: list[str], known: Mapping[str, int], n: int) -> list[int]:
    """The action of each of ``agents``, in their order, from the dict ``actions`` (a parallel env's
    ``step``), each an int 0..n-1; or an error naming the agent: ``TypeError`` for a non-dict or a
    non-integer action, ``KeyError`` for an agent not in ``known``, ``ValueError`` for a missing
    agent (R3: every live agent acts each tick) or an action out of range."""
    if type(actions) is not dict and not isinstance(actions, Mapping):
        raise TypeError(f"actions must be a dict {{agent: action}}, got {type(actions).__name__}")
    if not known.keys() >= actions.keys():
        for agent in actions:
            check_agent(agent, known)
    try:
        chosen = [actions[agent] for agent in agents]
    except KeyError:
        missing = ", ".join(a for a in agents if a not in actions)
        raise ValueError(f"missing actions for live agent(s) {missing}; every live agent acts each tick (R3)") from None
    for i, a in enumerate(chosen):
        if type(a) is not int or not 0 <= a < n:  # a plain int in range needs no more checks
            chosen[i] = check_one_action(a, agents[i], n)
    return chosen


def check_one_action(value: Any, agent: str, n: int) -> int:
    """``agent``'s action as an int 0..n-1 (a plain or numpy integer, or a one-element integer
    array), or an error naming the agent: ``TypeError`` for a non-integer, ``ValueError`` out of range."""
    if isinstance(value, np.ndarray) and value.size == 1:
        value = value.reshape(()).item() if is_int_dtype(value.dtype) else value.reshape(())
    if not is_int(value):
        raise TypeError(f"action for {agent} must be an integer 0..{n - 1}, got {value!r}")
    if not 0 <= value < n:
        raise ValueError(f"action {int(value)} for {agent} is out of range; actions are 0..{n - 1}")
    return int(value)


def check_observations(obs: np.ndarray, high: np.ndarray, names: list[str]) -> None:
    """Every value of ``obs[n, D]`` inside the observation space ``[0, high]``."""
    bad = (obs < 0) | (obs > high)
    if bad.any():
        row, col = (int(i) for i in np.argwhere(bad)[0])
        raise ValueError(
            f"observation row {row}, index {col} ({names[col]}) is {int(obs[row, col])}, outside the observation "
            f"space [0, {int(high[col])}]: pass observations produced by an env of the agent's config"
        )


def check_masks(masks: np.ndarray) -> None:
    """Action masks hold 0 and 1 only, with a legal action in every row (WAIT, R4.7)."""
    if ((masks != 0) & (masks != 1)).any():
        row, col = (int(i) for i in np.argwhere((masks != 0) & (masks != 1))[0])
        raise ValueError(f"action mask row {row}, action {col} is {int(masks[row, col])}; masks hold 0 or 1")
    if masks.shape[0] and not masks.any(axis=1).all():
        raise ValueError("every action mask needs a legal action (WAIT is always legal, R4.7)")


def _cards(piles: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The used slots of ``piles[..., K]`` (bottom ``lengths`` of each) and their index tuples."""
    used = np.arange(piles.shape[-1]) < lengths[..., None]
    return piles[used].astype(np.int64), np.argwhere(used)


def check_table_shapes(state: Any, config: NertzConfig, ref: engine.State) -> None:
    if not isinstance(state, engine.State):
        raise TypeError(f"set_state takes a table returned by get_state(), got {type(state).__name__}")
    for name, mine, theirs in zip(engine.State._fields, ref, state):
        if isinstance(theirs, np.ndarray) and type(theirs) is not np.ndarray:  # a mask hid values from the checks
            raise ValueError(f"invalid saved table: {name} is a {type(theirs).__name__}; set_state takes plain "
                             "numpy arrays (np.asarray), as get_state() gives them")
        if not isinstance(theirs, np.ndarray) or theirs.dtype != mine.dtype or theirs.shape != mine.shape:
            got = f"{theirs.dtype} {theirs.shape}" if isinstance(theirs, np.ndarray) else type(theirs).__name__
            raise ValueError(
                f"invalid saved table: {name} is {got}, a game of this config ({config.num_players} players, "
                f"{config.work_piles} work piles) has {mine.dtype} {mine.shape}: pass get_state() of the same config"
            )


def _check_ranges(s: engine.State, config: NertzConfig) -> None:
    p = config.num_players
    lengths = (("nertz_len", 52), ("stock_len", 52), ("waste_len", 52), ("work_len", 13), ("foundation_len", 13))
    for name, top in lengths:
        a = getattr(s, name)
        if (a < 0).any() or (a > top).any():
            _fail(f"{name} holds {int(a.min())}..{int(a.max())}", f"pile lengths are 0..{top}")
    if not 0 <= int(s.n_foundations[0]) <= 4 * p:
        _fail(f"n_foundations is {int(s.n_foundations[0])}", f"a table of {p} players has 0..{4 * p} foundations")
    if not 0 <= int(s.tick[0]) <= config.max_cycles:
        _fail(f"tick is {int(s.tick[0])}", f"accepted 0..{config.max_cycles}")
    if not 0 <= int(s.ended[0]) < len(engine.END_REASONS):
        _fail(f"ended is {int(s.ended[0])}", f"accepted 0..{len(engine.END_REASONS) - 1}")


def _check_end(s: engine.State, config: NertzConfig) -> None:
    """R5: the stall counters within this config's stock cycle, an end that agrees with the table
    (a call ends the hand, ``max_cycles`` bounds it, a stall ends it at the last rotation), and a
    random stream off xorshift's fixed point 0 (``engine.seed_streams`` never gives it)."""
    most, cycle = config.stall_rotations, engine.stall_ceiling(config.packed)
    longest = max(t for _, t in config.move_ticks)  # a stall waits for the moves in the air
    for name, top in (("rotations", most), ("stall_cycle", cycle), ("since_progress", cycle + longest)):
        v = int(getattr(s, name)[0])
        if not 0 <= v <= top:
            _fail(f"{name} is {v}", f"accepted 0..{top} under this config (R5)")
    reason, tick, callers = engine.END_REASONS[int(s.ended[0])], int(s.tick[0]), np.flatnonzero(s.called[0])
    if callers.size and reason != "call":
        how = f"ended by {reason}" if reason else "runs"
        _fail(f"player {callers[0]} called but the hand {how}", "R5: a call ends it")
    if reason == "call" and not callers.size:
        _fail("the hand ended by a call but nobody called", "R5: a call ends it")
    if (reason is None and tick == config.max_cycles) or (reason == "max_cycles" and tick != config.max_cycles):
        _fail(f"tick is {tick} but the hand " + (f"ended by {reason}" if reason else "runs"),
              f"max_cycles={config.max_cycles} ends it at that tick (R5)")  # fmt: skip
    if reason == "stall" and int(s.rotations[0]) != most:
        _fail(f"the hand ended by a stall after {int(s.rotations[0])} rotations",
              f"a stall ends it after max_stall_rotations={most} rotations (R5)")  # fmt: skip
    if int(s.rng[0]) == 0:
        _fail("rng is 0", "a random stream is a nonzero word (xorshift), as get_state() saves it")


def _check_work(s: engine.State) -> None:
    """R4.3: every work pile a run, built down by one rank in alternating colours (the masks
    count on it: ``engine.masks``), so at most 13 cards."""
    builds_on = engine.python_of(engine.builds_on)  # the masks' own rule, run here in Python
    work, lens = s.work[0], s.work_len[0]
    for p, j in np.ndindex(lens.shape):
        for k in range(1, int(lens[p, j])):
            card, onto = int(work[p, j, k]), int(work[p, j, k - 1])  # each card and the card it lies on
            if not builds_on(card, onto):
                _fail(f"player {p}'s work pile {j} is not a run ({card_name(card)} on {card_name(onto)})",
                      "R4.3: built down by one rank in alternating colours")  # fmt: skip


def _check_cards(s: engine.State, config: NertzConfig) -> np.ndarray:
    """Card conservation (R1): every card of every deck lies in exactly one place. Returns the
    owner of each foundation card."""
    p, builds = config.num_players, config.nertz_builds
    places = []  # owner * 52 + card of every card on the table
    for name in ("nertz", "work", "stock", "waste"):
        cards, where = _cards(getattr(s, name)[0], getattr(s, name + "_len")[0])
        if cards.size and (cards.min() < 0 or cards.max() > 51):
            _fail(f"{name} holds card code {int(cards.min() if cards.min() < 0 else cards.max())}", "codes are 0..51")
        owners = where[:, 0]
        if builds and name in ("nertz", "work"):  # R4.8: a card keeps its owner (R1)
            owners = getattr(s, name + "_owner")[0][tuple(where.T)].astype(np.int64)
            if owners.size and (owners.min() < 0 or owners.max() >= p):
                _fail(f"{name}_owner holds seat {int(owners.min())}..{int(owners.max())}", f"seats are 0..{p - 1}")
        places.append(owners * 52 + cards)
    n_foundations = int(s.n_foundations[0])
    foundation_len = s.foundation_len[0].astype(np.int64)
    if (foundation_len[n_foundations:] != 0).any() or (foundation_len[:n_foundations] < 1).any():
        _fail(f"{n_foundations} foundations with lengths {foundation_len.tolist()}",
              "each started pile holds 1..13 cards")
    ids, where = _cards(s.foundations[0], foundation_len)
    if ids.size and (ids.min() < 0 or ids.max() >= 52 * p):
        _fail(f"a foundation holds card id {int(ids.max() if ids.max() >= 52 * p else ids.min())}",
              f"ids are owner * 52 + card, 0..{52 * p - 1}")
    counts = np.bincount(np.concatenate([*places, ids]), minlength=52 * p).reshape(p, 52)
    if not (counts == 1).all():
        owner, card = (int(i) for i in np.argwhere(counts > 1 if (counts > 1).any() else counts != 1)[0])
        _fail(f"card {card} of player {owner}'s deck appears {int(counts[owner, card])} times",
              "every card of every deck lies in exactly one pile (R1)")
    suits = s.foundation_suit[0, :n_foundations].astype(np.int64)
    if (suits < 0).any() or (suits > 3).any():
        _fail(f"foundation_suit holds {suits.tolist()}", "suits are 0..3")
    cards = ids % 52
    if ((cards // 13) != suits[where[:, 0]]).any() or ((cards % 13) != where[:, 1]).any():
        _fail("a foundation is not one suit built up from the ace", "R4.2: ace first, then up by suit")
    tops = np.bincount(suits * 14 + foundation_len[:n_foundations], minlength=56).reshape(4, 14)
    if not np.array_equal(tops, s.foundation_tops[0]):
        _fail("foundation_tops does not count the foundation tops",
              "foundation_tops[suit, rank] = piles of that suit and top")
    return ids // 52


def _check_scores(s: engine.State, config: NertzConfig, found_owner: np.ndarray) -> None:
    on_foundations = np.bincount(found_owner, minlength=config.num_players)
    if not np.array_equal(on_foundations, s.on_foundations[0]):
        _fail(f"on_foundations is {s.on_foundations[0].tolist()}, the foundations hold {on_foundations.tolist()}",
              "R7 counts them")
    score = [  # R7, as the engine states it (engine.r7_score)
        engine.python_of(engine.r7_score)(int(on_foundations[p]), int(s.nertz_len[0, p]), bool(s.called[0, p]),
                                          config.nertz_penalty, config.call_bonus)
        for p in range(config.num_players)
    ]  # fmt: skip
    if not np.array_equal(score, s.score[0]):
        _fail(f"score is {s.score[0].tolist()}, R7 gives {score}", "the running R7 score of the table")


def _check_air(s: engine.State, config: NertzConfig, table: np.ndarray) -> None:
    air = s.air[0].astype(np.int64)
    longest = max(t for _, t in config.move_ticks)
    flying = air[:, AIR_TICKS] > 0
    if (air[:, AIR_TICKS] < 0).any() or (air[:, AIR_TICKS] >= longest).any():
        _fail(f"air ticks {air[:, AIR_TICKS].tolist()}", f"0..{longest - 1} under this config's move_ticks")
    if not flying.any():
        return
    act, card = air[flying, AIR_ACTION], air[flying, AIR_CARD]
    if (act < 0).any() or (act >= len(table)).any():
        _fail(f"an action in the air is {act.tolist()}", f"actions are 0..{len(table) - 1}")
    if (air[flying, AIR_KIND] != table[act, 0]).any() or (card < -1).any() or (card > 51).any():
        _fail("a move in the air has a kind or card that does not match its action", "a move saved by get_state()")


def check_table(state: Any, config: NertzConfig, table: np.ndarray, like: engine.State) -> None:
    """A table from ``Game.get_state()`` that a game of ``config`` can play on: its arrays' types
    and shapes, every length and counter in range and its end agreeing with R5, every card of every
    deck in exactly one pile (R1), work piles as runs (R4.3), foundations built by suit from the ace
    (R4.2), the R7 scores they give, and the moves in the air (R3 ``move_ticks``), the known stocks
    (R9) and the match (R8) in range (``check_table_rules``). ``table`` is the action catalogue,
    ``like`` a table of the same config."""
    check_table_shapes(state, config, like)
    check_flags(state)
    _check_ranges(state, config)
    _check_end(state, config)
    found_owner = _check_cards(state, config)
    _check_work(state)
    _check_scores(state, config, found_owner)
    _check_air(state, config, table)
    check_table_rules(state, config)

