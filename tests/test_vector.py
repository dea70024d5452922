"""The batched env plays the single game's hands: same seeds and actions give the same
observations, masks, rewards and outcomes (R3 to R9), across hands and same-step resets, with one
thread or several; its compiled sampler only picks legal actions."""

from __future__ import annotations

import pickle

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nertz_env import engine
from nertz_env.config import NertzConfig
from nertz_env.engine import AIR_CARD, AIR_KIND, AIR_TICKS, legal_mask, mask_plan
from nertz_env.engine import masks as masks_module
from nertz_env.engine.masks import legal_masks, standard_layout
from nertz_env.engine.views import raw, raw_state
from nertz_env.game import Game
from nertz_env.vector import NertzVectorEnv, sample_legal

RULES = [
    {"max_cycles": 150},
    {"num_players": 2, "stock_draw": 1, "work_piles": 6, "slide_under": False, "reward": "relative", "max_cycles": 250},
    {"num_players": 3, "nertz_pile_size": 4, "auto_call": True, "reward": "sparse", "collision": "seat"},
    {
        "num_players": 5,
        "nertz_to_work": False,
        "fill_empty_from": "nertz",
        "stall_ticks": 3,
        "reward": "lead",
        "max_cycles": 300,
    },
    {"num_players": 3, "nertz_builds": True, "nertz_pile_size": 6, "max_cycles": 200},  # R4.8
    # R3 timing options
    {"num_players": 3, "turn_based": True, "reward": "relative", "max_cycles": 240},
    {"move_ticks": {"foundation": 3, "draw": 2, "work": 2}, "max_cycles": 200},
    {"num_players": 2, "turn_based": True, "move_ticks": 2, "nertz_pile_size": 4, "auto_call": True, "max_cycles": 300},
]


def actions_for(env_masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Mostly random legal actions, some illegal (played as WAIT, R4.7; out of range raises)."""
    games, players, n = env_masks.shape
    acts = np.zeros((games, players), np.int64)
    for g in range(games):
        for p in range(players):
            roll = rng.random()
            acts[g, p] = rng.integers(0, n) if roll < 0.05 else rng.choice(np.flatnonzero(env_masks[g, p]))
    return acts


def game_on_stream(config: NertzConfig, stream: np.uint64) -> Game:
    """A Game whose random stream is ``stream`` (what ``reset(seed)`` does with stream 0)."""
    game = Game(config)
    game.state.rng[0] = stream
    game.seeded = True
    game.reset()
    return game


def check_same_play(rules: dict, seed: int, ticks: int, num_envs: int) -> int:
    env = NertzVectorEnv(num_envs, seed=seed, **rules)
    obs, masks = env.reset()
    games = [game_on_stream(env.config, w) for w in engine.seed_streams(seed, num_envs)]
    assert all((g.obs == obs[i]).all() and (g.masks == masks[i]).all() for i, g in enumerate(games))
    rng = np.random.default_rng(seed)
    hands = 0
    for t in range(ticks):
        acts = actions_for(masks, rng)
        obs, masks, rewards, terminated, truncated, infos = env.step(acts)
        episode = infos["episode"]
        for i, g in enumerate(games):
            g.step(acts[i])
            assert (rewards[i] == g.rewards.astype(np.float32)).all(), (t, i)
            assert (infos["illegal"][i] == g.state.illegal[0]).all()
            assert (infos["collision"][i] == g.state.collision[0]).all()
            assert bool(episode["done"][i]) == g.ended, (t, i)
            if g.ended:  # R5: a call or a stall terminates, max_cycles truncates
                hands += 1
                assert (terminated[i] == (g.end_reason in ("call", "stall"))).all()
                assert (truncated[i] == (g.end_reason == "max_cycles")).all()
                assert engine.END_REASONS[episode["end_reason"][i]] == g.end_reason
                assert episode["scores"][i].tolist() == g.scores.tolist()
                assert episode["length"][i] == g.tick
                assert np.flatnonzero(episode["callers"][i]).tolist() == g.callers()
                assert (infos["final_observation"][i] == g.obs).all()
                assert (infos["final_state"][i] == g.state_vector()).all()  # the ended table, not the new deal
                g.reset()  # the next hand from the game's own stream, as the batch does
            else:
                assert not terminated[i].any() and not truncated[i].any()
            assert (obs[i] == g.obs).all() and (masks[i] == g.masks).all(), (t, i)
    return hands


@pytest.mark.parametrize("rules", RULES)
def test_one_game_plays_as_game(rules):
    assert check_same_play(rules, seed=11, ticks=700, num_envs=1) >= 2


def test_game_i_of_a_batch_plays_on_stream_i():
    assert check_same_play({"max_cycles": 120}, seed=5, ticks=300, num_envs=5) >= 5


def test_reset_seeds_game_0_as_game_reset():
    env = NertzVectorEnv(3, seed=42)
    obs, masks = env.reset()
    game = Game(env.config)
    game.reset(seed=42)
    assert (obs[0] == game.obs).all() and (masks[0] == game.masks).all()
    obs, _ = env.reset()  # no seed: a new hand from where each stream stands, as Game.reset()
    game.reset()
    assert (obs[0] == game.obs).all()
    obs, _ = env.reset(seed=42)
    game.reset(seed=42)
    assert (obs[0] == game.obs).all()


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="numba has one thread here")
def test_buffers_are_written_in_place_and_illegal_actions_wait():
    env = NertzVectorEnv(2, seed=0, illegal_action_penalty=0.5)
    obs, masks = env.reset()
    before = env.state.tick.copy()
    with pytest.raises(ValueError, match="action 10000 at \\(0, 0\\) is out of range"):
        env.step(np.full((2, 4), 10_000))  # out of range raises, as in nertz_v0
    out = env.step(np.full((2, 4), env.catalogue.index("call")))  # illegal at the deal (R4.6): waits, flagged
    assert out[0] is obs and out[1] is masks
    assert out[5]["illegal"].all() and (out[2] == -0.5).all()
    assert (env.state.tick == before + 1).all()
    out = env.step(np.zeros(8, np.int32))  # WAIT, as a flat array of all seats
    assert not out[5]["illegal"].any() and (out[2] == 0).all()
    with pytest.raises(ValueError, match="actions must be integers"):
        env.step(np.zeros((3, 4), np.int64))
    with pytest.raises(ValueError, match="actions must be integers"):
        env.step(np.zeros((2, 4), np.float32))


def test_pickled_env_goes_on_identically():
    env = NertzVectorEnv(4, seed=9, max_cycles=60)
    env.reset()
    for _ in range(30):
        env.step(env.sample_actions())
    twin = pickle.loads(pickle.dumps(env))
    assert twin.infos["final_observation"] is twin.buffers.final_obs
    # read-only as before, and as Game passes them: the twin calls the kernels already compiled
    for mine, its in ((env._cfg, twin._cfg), (env._table, twin._table)):
        assert not its.flags.writeable and numba.typeof(its) == numba.typeof(mine)
    assert numba.typeof(env._cfg) == numba.typeof(NertzConfig().packed)
    for _ in range(100):
        a, b = env.step(env.sample_actions()), twin.step(twin.sample_actions())
        assert all((x == y).all() for x, y in zip(a[:5], b[:5]))
        assert (a[5]["episode"]["scores"] == b[5]["episode"]["scores"]).all()


def test_fast_masks_and_observations_match_the_rules():
    """``legal_masks`` equals ``core.legal_mask`` row by row (R4), and the observation equals one
    built here from the table by the layout's names (R9)."""
    env = NertzVectorEnv(6, seed=1, work_piles=5, max_cycles=400)
    obs, masks = env.reset()
    cfg, table = env.config.packed, env.catalogue.table
    for t in range(400):
        obs, masks, *_ = env.step(env.sample_actions())
        s = env.state
        for g in range(env.num_envs):
            assert_masks_and_observations(env, g, obs, masks, observations=t % 20 == 0)
    plan = mask_plan(table)  # runs cover the catalogue in order, block moves of a pile pair together
    assert plan[0, 0] == 0 and (plan[1:, 0] == np.cumsum(plan[:-1, 5])).all() and plan[:, 5].sum() == len(table)
    assert len(plan) == len(table) - 4 * 5 * 12 and (plan[:, 5] > 1).sum() == 5 * 4
    shuffled = np.random.default_rng(0).permutation(len(table))  # any catalogue order works
    again = np.zeros_like(masks[0])
    legal_masks(s, 0, cfg, table[shuffled].copy(), mask_plan(table[shuffled].copy()), again)
    assert (again == masks[0][:, shuffled]).all()


@pytest.mark.parametrize(
    "rules, standard",
    [({"slide_under": False, "work_piles": 4}, True), ({"work_piles": 6, "num_players": 2}, True),
     ({"nertz_to_work": False}, False), ({"nertz_builds": True}, False)],
)  # fmt: skip
def test_the_standard_path_of_the_masks_matches_the_rules(rules, standard):
    """The standard game's masks go per source and target (``masks._standard_mask``), every other
    through the plan; both equal ``core.legal_mask`` (R4) on every table of random play."""
    env = NertzVectorEnv(4, seed=5, max_cycles=300, **rules)
    work, _under = standard_layout(env.catalogue.table)
    assert (work == env.config.work_piles) == ("nertz_builds" not in rules)  # R4.8 rows: another catalogue
    assert masks_module._standard_game(env.config.packed, mask_plan(env.catalogue.table)) == standard
    obs, masks = env.reset()
    for _ in range(300):
        for g in range(env.num_envs):
            assert_masks_and_observations(env, g, obs, masks, observations=False)
        obs, masks, *_ = env.step(env.sample_actions())


def _run(bottom_rank: int, length: int, first_red: bool, suits: list[int]) -> list[int]:
    """A work pile built down from ``bottom_rank`` in alternating colours (R4.3), bottom first."""
    cards = []
    for t in range(length):
        red = first_red != (t % 2 == 1)
        suit = (1, 2)[suits[t] % 2] if red else (0, 3)[suits[t] % 2]  # R1: D, H red; C, S black
        cards.append(suit * 13 + bottom_rank - t - 1)
    return cards


_RUNS = st.tuples(st.integers(1, 13), st.integers(0, 13), st.booleans(), st.lists(st.integers(0, 1), min_size=13,
                                                                                 max_size=13))  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(piles=st.lists(st.lists(_RUNS, min_size=4, max_size=4), min_size=2, max_size=2))
def test_the_standard_masks_judge_blocks_of_any_run_by_the_rules(piles):
    """``masks._standard_blocks`` finds the one block of a run that can build on a work pile by
    rank; on work piles of any runs (R4.3, up to 13 cards, spaces included) every player's mask
    still equals ``core.legal_mask`` row by row."""
    env = NertzVectorEnv(1, seed=3, num_players=2)
    env.reset()
    s, cfg, table = env.state, env.config.packed, env.catalogue.table
    for p, runs in enumerate(piles):
        for j, (bottom, length, first_red, suits) in enumerate(runs):
            cards = _run(bottom, min(length, bottom), first_red, suits)
            s.work_len[0, p, j] = len(cards)
            s.work[0, p, j, : len(cards)] = cards
    assert masks_module._standard_game(cfg, mask_plan(table))
    fast = np.zeros((2, env.num_actions), np.int8)
    legal_masks(s, 0, cfg, table, mask_plan(table), fast)
    one = np.zeros(env.num_actions, np.int8)
    for p in range(2):
        legal_mask(s, 0, p, cfg, table, one)
        assert (fast[p] == one).all()


@pytest.mark.parametrize("timing", [{"turn_based": True}, {"move_ticks": {"foundation": 3, "call": 2, "draw": 2}},
                                    {"turn_based": True, "move_ticks": 3, "num_players": 3}])  # fmt: skip
def test_fast_masks_and_observations_match_the_rules_under_the_timing_options(timing):
    env = NertzVectorEnv(4, seed=2, **{"max_cycles": 300, **timing})
    cfg, layout = env.config.packed, env.layout
    state_vector = np.zeros(layout.state_size, np.int8)
    timed = sum(len(range(layout.size)[layout.slices[n]]) for n in ("on_turn", "air_ticks", "air_kind", "air_card")
                if n in layout.slices)  # fmt: skip
    env.reset()
    for t in range(300):
        obs, masks, *_ = env.step(env.sample_actions())
        s = env.state
        for g in range(env.num_envs):
            assert_masks_and_observations(env, g, obs, masks, observations=t % 10 == 0)
            if t % 10 == 0:
                engine.state_vector(s, g, cfg, state_vector)
                tail = reference_observation(s, g, 0, env.config, layout)[-timed:]  # seat order = seat 0's view
                assert (state_vector[-timed:] == tail).all()


def assert_masks_and_observations(env, g, obs, masks, observations: bool) -> None:
    """Game ``g``'s fast masks equal ``core.legal_mask`` (R4); with ``observations``, every
    player's observation equals ``reference_observation`` (R9)."""
    s, cfg, table = env.state, env.config.packed, env.catalogue.table
    one = np.zeros(env.num_actions, np.int8)
    for p in range(env.num_players):
        legal_mask(s, g, p, cfg, table, one)
        assert (masks[g, p] == one).all()
    if observations:
        for v in range(env.num_players):
            assert (obs[g, v] == reference_observation(s, g, v, env.config, env.layout)).all()


def reference_observation(s, g, viewer, config, layout) -> np.ndarray:
    out = np.zeros(layout.size, np.int8)
    players = config.num_players
    for k in range(players):
        p = (viewer + k) % players
        name = "self" if k == 0 else f"opp{k}"
        view = lambda part: layout.view(out, f"{name}.{part}")  # noqa: B023
        if s.nertz_len[g, p]:
            view("nertz_top")[s.nertz[g, p, s.nertz_len[g, p] - 1]] = 1
        for j in range(config.work_piles):
            view(f"work{j}")[s.work[g, p, j, : s.work_len[g, p, j]]] = 1
        if s.waste_len[g, p]:
            view("waste_top")[s.waste[g, p, s.waste_len[g, p] - 1]] = 1
        for f in range(s.n_foundations[g]):
            for card in s.foundations[g, f, : s.foundation_len[g, f]]:
                if card // 52 == p:
                    view("foundation")[card % 52] = 1
        view("nertz_count")[0] = s.nertz_len[g, p]
        view("stock_count")[0] = s.stock_len[g, p]
        view("waste_count")[0] = s.waste_len[g, p]
        view("called")[0] = s.called[g, p]
    waste = s.waste[g, viewer, : s.waste_len[g, viewer]]
    layout.view(out, "own_waste_order")[waste] = np.arange(len(waste), 0, -1)
    if s.stock_known[g, viewer]:
        stock = s.stock[g, viewer, : s.stock_len[g, viewer]]
        layout.view(out, "own_stock_order")[stock] = np.arange(len(stock), 0, -1)
        layout.view(out, "own_stock_known")[0] = 1
    layout.view(out, "foundation_tops")[:] = s.foundation_tops[g, :, 1:].reshape(-1)
    layout.view(out, "since_progress")[0] = min(s.since_progress[g], 127)
    layout.view(out, "stall_rotations")[0] = min(s.rotations[g], 127)
    seats = [(viewer + k) % players for k in range(players)]  # R3 timing options, egocentric
    if config.turn_based:
        layout.view(out, "on_turn")[:] = [p == s.tick[g] % players for p in seats]
    if not config.is_default_timing:
        flying = s.air[g, seats, AIR_TICKS] > 0
        layout.view(out, "air_ticks")[:] = s.air[g, seats, AIR_TICKS]
        layout.view(out, "air_kind")[:] = np.where(flying, s.air[g, seats, AIR_KIND], 0)
        layout.view(out, "air_card")[:] = np.where(flying, s.air[g, seats, AIR_CARD] + 1, 0)
    return out


def test_sample_legal_picks_uniformly_among_legal_actions():
    masks = np.zeros((3, 2, 7), np.int8)
    masks[..., [1, 4, 6]] = 1
    masks[2, 1] = 0  # nothing legal: -1
    a = sample_legal(masks, 0)
    assert a.shape == (3, 2) and a[2, 1] == -1
    assert np.isin(a.reshape(-1)[:-1], [1, 4, 6]).all()
    assert (sample_legal(masks, 0) == a).all() and (sample_legal(masks.astype(bool), 0) == a).all()
    many = np.ones((30_000, 5), np.float32)
    many[:, 2] = 0
    counts = np.bincount(sample_legal(many, np.random.default_rng(1)), minlength=5)
    assert counts[2] == 0 and (np.abs(counts[[0, 1, 3, 4]] - 7500) < 400).all()


def test_sample_legal_counts_the_same_up_to_and_past_255_actions():
    """Up to 255 actions the compiled sampler counts the legal ones in a byte, past that in an int:
    either way the same draw picks the same legal action, and any nonzero int8 is legal."""
    rng = np.random.default_rng(4)
    narrow = (rng.random((64, 200)) < 0.05).astype(np.int8)
    narrow[:, 7] = 2
    narrow[0] = 0
    wide = np.zeros((64, 400), np.int8)
    wide[:, :200] = narrow
    a, b = sample_legal(narrow, 9), sample_legal(wide, 9)
    assert (a == b).all() and a[0] == -1
    assert narrow[np.arange(1, 64), a[1:]].all()
    full = sample_legal(np.ones((20_000, 255), np.int8), 3)  # 255 legal: the byte's largest count
    assert full.min() == 0 and full.max() == 254 and abs(full.mean() - 127) < 3


def test_sample_legal_streams_advance_in_place_and_split_rows():
    masks = np.ones((8, 4, 50), np.int8)
    streams = engine.seed_streams(3, 8)
    first = sample_legal(masks, streams)
    assert (streams != engine.seed_streams(3, 8)).all()
    assert (sample_legal(masks, streams) != first).any()
    threads = min(2, numba.config.NUMBA_NUM_THREADS)
    again = sample_legal(masks, engine.seed_streams(3, 8), num_threads=threads)
    assert (again == first).all()
    with pytest.raises(ValueError, match="cannot share"):
        sample_legal(masks, engine.seed_streams(3, 5))


def test_env_sampler_is_seeded_by_reset():
    env = NertzVectorEnv(4, seed=2)
    env.reset()
    a = env.sample_actions().copy()
    assert np.take_along_axis(env.action_masks, a[..., None], axis=2).all()
    env.reset(seed=2)
    assert (env.sample_actions() == a).all()


def test_raw_views_keep_their_writes():
    """Numba's dead-code pass must not drop writes through ``raw`` views (engine/views.py)."""

    @numba.njit
    def write(a, s, b):
        raw(a)[b] = 5
        view = raw(a)
        view[b + 1] = 6
        raw_state(s).tick[b] = 9

    a, s = np.zeros(3, np.int32), engine.new_state(2, 2, 4)
    write(a, s, 1)
    assert a.tolist() == [0, 5, 6] and s.tick.tolist() == [0, 9]


def test_arguments_are_checked():
    with pytest.raises(ValueError, match="num_envs"):
        NertzVectorEnv(0)
    with pytest.raises(ValueError, match="num_threads"):
        NertzVectorEnv(2, num_threads=10_000)
    with pytest.raises(ValueError, match="unknown option"):
        NertzVectorEnv(2, colour="red")
    with pytest.raises(RuntimeError, match="reset"):
        NertzVectorEnv(2).step(np.zeros((2, 4), np.int64))


def test_observe_batch_writes_what_a_step_leaves():
    """``engine.observe_batch`` is the observation and mask passes of ``step_batch`` on its own."""
    env = NertzVectorEnv(16, num_players=3, seed=4)
    env.reset()
    for _ in range(30):
        env.step(env.sample_actions())
    obs, masks = np.zeros_like(env.observations), np.zeros_like(env.action_masks)
    cfg, table = env.config.packed.copy(), env.catalogue.table.copy()
    engine.observe_batch(env.state, cfg, table, engine.mask_plan(table), obs, masks)
    assert np.array_equal(obs, env.observations) and np.array_equal(masks, env.action_masks)


def test_tick_parts_benchmark_adds_up():
    from nertz_env.benchmarks import tick_parts

    parts = tick_parts.measure(batch=8, players=2, repeats=1)
    assert parts["whole"] > 0 and parts["rules"] > 0 and parts["observations_and_masks"] > 0
    assert parts["rest"] == pytest.approx(parts["whole"] - parts["rules"] - parts["observations_and_masks"])
    assert parts["agent_steps_per_cpu_s"] == pytest.approx(2e6 / parts["whole"])
