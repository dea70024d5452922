"""Every table the engine reaches by legal play, under every combination of rule options, is one its
own validator accepts (``nertz_env.checks.check_table``: R1 conservation, R4.2 foundations, R4.3
runs, R5 counters and ends, R7 scores, moves in the air, R8 match state), and a restored table plays
on exactly as the original: after every tick ``get_state()`` restores into a fresh ``Game``, every
card of every deck lies in exactly one pile (R1), and both games stepped with the same actions stay
byte-identical (tables, observations, masks, rewards), across hand ends and match continuations.

``NERTZ_REACH_EXAMPLES`` and ``NERTZ_REACH_TICKS`` widen the search for ad-hoc runs (the committed
run is derandomized and small)."""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from nertz_env.config import BLOCK_MOVES, FILL_EMPTY_FROM, MATCH_ENDS, MOVE_KINDS, PRESETS, REWARD_MODES, NertzConfig
from nertz_env.engine import AIR_TICKS
from nertz_env.engine.constants import CALL, DRAW, TO_FOUNDATION, TO_NERTZ, TO_WORK, UNDER, WAIT
from nertz_env.game import Game

EXAMPLES = int(os.environ.get("NERTZ_REACH_EXAMPLES", "16"))
TICKS = int(os.environ.get("NERTZ_REACH_TICKS", "120"))
WIDE = "NERTZ_REACH_EXAMPLES" in os.environ  # an ad-hoc search draws new examples each run
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=not WIDE, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])  # fmt: skip
# How each style of play weighs the action kinds (WAIT DRAW CALL TO_FOUNDATION TO_WORK UNDER TO_NERTZ):
# eager play empties Nertz piles and races; idle play stalls (R5); uniform is the masks' own mix.
STYLES = {
    "eager": (1, 4, 1, 40, 10, 10, 30),
    "uniform": (1, 1, 1, 1, 1, 1, 1),
    "idle": (4, 20, 0, 0.5, 2, 0.5, 0.5),
    "calling": (1, 3, 200, 40, 10, 10, 30),
}
assert tuple(range(7)) == (WAIT, DRAW, CALL, TO_FOUNDATION, TO_WORK, UNDER, TO_NERTZ)


@st.composite
def move_ticks(draw):
    """R3 ``move_ticks``: one tick (mostly), one number for every move, or a mapping by kind."""
    return draw(st.one_of(
        st.none(), st.none(), st.integers(1, 4),
        st.dictionaries(st.sampled_from(MOVE_KINDS), st.integers(1, 5), max_size=len(MOVE_KINDS)),
    ))  # fmt: skip


@st.composite
def match_options(draw, penalty: int, size: int, bonus: int) -> dict:
    """R8: a short match (so several hands fit), to the target under each ``match_end`` or a fixed
    number of hands."""
    cap = max(1, min(8, 12799 // max(penalty * size, 52 + bonus)))
    out = {"episode": "match", "max_hands": draw(st.integers(1, cap)), "target_score": draw(st.integers(1, 60))}
    out["match_end"] = draw(st.sampled_from(MATCH_ENDS))
    if out["match_end"] == "highest" and draw(st.booleans()):
        out["hands"] = draw(st.integers(1, out["max_hands"]))
    return out


@st.composite
def configs(draw) -> NertzConfig:
    """Every option of ``NertzConfig`` at its standard value, its extremes and in between, and the
    named rule sets of ``PRESETS`` with some of their options overridden."""
    players = draw(st.integers(2, 8))
    work = draw(st.integers(4, 6))
    o: dict = {"num_players": players, "work_piles": work}
    o["nertz_pile_size"] = draw(st.sampled_from([13, 1, 2, 3, 5, 9, 20, 52 - work]))
    o["stock_draw"] = draw(st.sampled_from([3, 1]))
    for name in ("nertz_to_work", "aces_to_work", "slide_under", "auto_call", "nertz_builds"):
        o[name] = draw(st.booleans())
    o["turn_based"] = draw(st.sampled_from([False, False, True]))
    o["partners"] = players in (4, 6, 8) and draw(st.booleans())
    o["block_moves"] = draw(st.sampled_from(BLOCK_MOVES))
    o["fill_empty_from"] = draw(st.sampled_from(FILL_EMPTY_FROM))
    o["collision"] = draw(st.sampled_from(["random", "seat"]))
    if o["collision"] == "random" and draw(st.booleans()):
        o["speed"] = tuple(draw(st.lists(st.floats(0.01, 100.0), min_size=players, max_size=players)))
    o["nertz_penalty"], o["call_bonus"] = draw(st.integers(0, 5)), draw(st.sampled_from([0, 0, 1, 10, 25]))
    o["stall_ticks"] = draw(st.sampled_from(["auto", "auto", 1, 2, 3, 7, 40]))
    o["max_stall_rotations"] = draw(st.one_of(st.none(), st.integers(0, 4)))
    o["max_cycles"] = draw(st.sampled_from([2000, 2000, 1, 2, 3, 5, 17, 60]))
    o["reward"] = draw(st.sampled_from(REWARD_MODES))
    o["move_ticks"] = draw(move_ticks())
    if draw(st.booleans()):
        o.update(draw(match_options(o["nertz_penalty"], o["nertz_pile_size"], o["call_bonus"])))
    preset = draw(st.sampled_from([None, None, None, *PRESETS]))
    if preset is not None:  # the preset's own values where the draw lets them through
        o = {k: v for k, v in o.items() if k not in PRESETS[preset] or draw(st.booleans())}
        if PRESETS[preset].get("hands") and o.get("match_end", "highest") != "highest":
            o.pop("match_end")  # a fixed number of hands ends the match by its count (R8)
        work = {**PRESETS[preset], **o}["work_piles"]
        o["nertz_pile_size"] = min({**PRESETS[preset], **o}["nertz_pile_size"], 52 - work)
    try:
        return NertzConfig.from_kwargs(preset=preset, **o)
    except ValueError:  # a preset's match with a drawn cap it does not fit (R8 hands, max_hands)
        assume(False)


def assert_conserved(game: Game) -> None:
    """R1: every card of every deck lies in exactly one pile, counted straight from the arrays."""
    s, p = game.state, game.config.num_players
    counts = np.zeros((p, 52), np.int64)
    for name in ("nertz", "work", "stock", "waste"):
        piles, lens = getattr(s, name)[0], getattr(s, name + "_len")[0]
        used = np.arange(piles.shape[-1]) < lens[..., None]
        owners = np.argwhere(used)[:, 0]
        if game.config.nertz_builds and name in ("nertz", "work"):  # R4.8: a card keeps its owner
            owners = getattr(s, name + "_owner")[0][used]
        np.add.at(counts, (owners, piles[used]), 1)
    ids = s.foundations[0][np.arange(13) < s.foundation_len[0][:, None]]
    np.add.at(counts, (ids // 52, ids % 52), 1)
    assert (counts == 1).all(), f"cards not conserved (R1): {np.argwhere(counts != 1)[:4].tolist()}"


def assert_same(a: Game, b: Game, what: str) -> None:
    for name, x, y in zip(a.state._fields, a.get_state(), b.get_state()):
        assert x.tobytes() == y.tobytes(), f"{what}: {name} differs"
    assert a.obs.tobytes() == b.obs.tobytes() and a.masks.tobytes() == b.masks.tobytes(), what
    assert a.rewards.tobytes() == b.rewards.tobytes(), what


def choose(game: Game, rng: np.random.Generator, weights: np.ndarray) -> np.ndarray:
    """One legal action per seat, drawn from its mask with the style's weight per action kind."""
    kinds = game.catalogue.table[:, 0]
    w = game.masks * weights[kinds] + game.masks * 1e-9  # every legal action possible, WAIT always legal
    return np.array([rng.choice(len(kinds), p=row / row.sum()) for row in w], np.int64)


def built_on(game: Game) -> bool:
    """R4.8: some card lies on another player's Nertz pile."""
    s, seats = game.state, np.arange(game.config.num_players)[:, None]
    return bool((s.nertz_owner[0] != seats).any(where=np.arange(52) < s.nertz_len[0][:, None]))


def restored(config: NertzConfig, game: Game, into: Game | None = None) -> Game:
    """``game``'s table restored into ``into``, or a fresh game of ``config``: ``set_state`` runs
    every check of it (a game skips tables it handed out itself, so its memory of them goes first)."""
    twin = Game(config) if into is None else into
    twin._checked.clear()
    twin.set_state(game.get_state())
    return twin


def play_and_check(config: NertzConfig, seed: int, style: str, ticks: int = TICKS, fresh: int = 10) -> dict:
    """``ticks`` ticks of random legal play, a new hand (or match) after each end; after every tick
    the table restores into a twin (a fresh game every ``fresh`` ticks and at each new deal) that
    then plays the next tick exactly as the original. Returns what the run came through."""
    weights = np.asarray(STYLES[style], np.float64)
    game = Game(config)
    game.reset(seed=seed)
    rng = np.random.default_rng(seed)
    seen = {"ticks": 0, "hands": 0, "matches": 0, "air": 0, "built": 0, "collisions": 0}
    twin = restored(config, game)
    for t in range(ticks):
        if game.ended:
            seen["matches" if game.is_match else "hands"] += 1
            seen[game.end_reason] = seen.get(game.end_reason, 0) + 1
            game.reset()  # the next hand (match) from the stream saved in the table
            twin.reset()
            assert_same(game, twin, "a new deal from the restored stream")
            twin = restored(config, game)
        actions = choose(game, rng, weights)
        game.step(actions)
        twin.step(actions)
        seen["ticks"] += 1
        seen["hands"] += game.is_match and game.hand_over and not game.ended
        seen["air"] += bool((game.state.air[0, :, AIR_TICKS] > 0).any())
        seen["collisions"] += int(game.state.collision[0].sum())
        seen["built"] += config.nertz_builds and built_on(game)
        assert_same(game, twin, f"tick {game.tick} after a restore (actions {actions.tolist()})")
        assert_conserved(game)
        twin = restored(config, game, None if t % fresh == fresh - 1 else twin)
    return seen


# Rare corners, each with what it must come through (``play_and_check``'s counts).
FIXED = [
    pytest.param(  # partners with R4.8 builds and slow moves: builds race moves in the air
        NertzConfig(num_players=8, partners=True, nertz_builds=True, nertz_pile_size=3, move_ticks=3), 0, "eager",
        ("built", "air", "collisions"), id="partners-builds-move_ticks"),
    pytest.param(NertzConfig(num_players=8, turn_based=True, nertz_pile_size=2, stock_draw=1), 1, "eager", ("call",),
                 id="turn_based-8-players"),
    pytest.param(  # draw 1 with one-card Nertz piles, a stall after two idle ticks ends the hand (R5)
        NertzConfig(num_players=3, stock_draw=1, nertz_pile_size=1, stall_ticks=2, max_stall_rotations=0, max_cycles=5),
        2, "idle", ("stall", "max_cycles"), id="draw-1-tiny"),
    pytest.param(  # matches of short hands under partners and a spread end (R8), calls in the air
        NertzConfig(num_players=4, partners=True, episode="match", target_score=15, match_end="spread",
                    nertz_pile_size=2, auto_call=True, max_hands=6, move_ticks={"call": 2, "foundation": 3}),
        3, "calling", ("matches", "hands", "air"), id="partners-match"),
    pytest.param(  # stalls with slow draws under turn_based (R5 counts in whole turns)
        NertzConfig(num_players=5, turn_based=True, stall_ticks=3, move_ticks={"draw": 4}, max_stall_rotations=2),
        4, "idle", ("stall", "air"), id="turn_based-stalls"),
]  # fmt: skip


@pytest.mark.parametrize("config, seed, style, reached", FIXED)
def test_rare_corners_restore_and_play_on_identically(config, seed, style, reached):
    seen = play_and_check(config, seed, style)
    assert all(seen.get(what, 0) > 0 for what in reached), seen


@SETTINGS
@given(config=configs(), seed=st.integers(0, 2**32 - 1), style=st.sampled_from(sorted(STYLES)))
def test_every_reachable_table_restores_and_plays_on_identically(config, seed, style):
    seen = play_and_check(config, seed, style)
    assert seen["ticks"] == TICKS
