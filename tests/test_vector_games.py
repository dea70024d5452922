"""``NertzVectorEnv.reset(games=...)`` deals some games anew (a time limit of one game): the chosen
games end the hand they were in and are dealt from their own streams (or a seed's), the others
are left byte for byte as they were, and the same seed and calls give the same games."""

from __future__ import annotations

import numpy as np
import pytest

from nertz_env import engine
from nertz_env.vector import NertzVectorEnv

ACCEPTED = r"games must be a bool mask shaped \(4,\) or integer game indices from 0 to 3"


def played(seed: int = 3, ticks: int = 12, **rules) -> NertzVectorEnv:
    env = NertzVectorEnv(4, 2, seed=seed, **rules)
    env.reset()
    for _ in range(ticks):
        env.step(env.sample_actions())
    return env


def rows_of(env: NertzVectorEnv, games: list[int]) -> dict[str, np.ndarray]:
    """Every array of games ``games``: the engine's table, the buffers ``step`` returns, the
    sampler's streams."""
    table = {f"state.{k}": v[games].copy() for k, v in env.state._asdict().items()}
    out = {f"out.{k}": v[games].copy() for k, v in env.buffers._asdict().items() if v.ndim and len(v) == env.num_envs}
    return {**table, **out, "sampler": env._sampler[games].copy()}


def assert_same(before: dict[str, np.ndarray], after: dict[str, np.ndarray]) -> None:
    for key, value in before.items():
        assert np.array_equal(value, after[key]), key


@pytest.mark.parametrize("games", [[0, 2], [2, 0, 2], np.array([True, False, True, False]), np.array([0, 2], np.uint8)])
def test_only_the_chosen_games_are_dealt_anew(games):
    env = played()
    assert (env.ticks > 0).all()
    kept = rows_of(env, [1, 3])
    moved = rows_of(env, [0, 2])
    obs, masks = env.reset(games=games)
    assert_same(kept, rows_of(env, [1, 3]))  # untouched: table, streams, what step returned
    dealt = NertzVectorEnv(4, 2, seed=0)
    dealt.reset()
    assert env.ticks.tolist() == [0, 12, 0, 12] and np.array_equal(env.scores[[0, 2]], dealt.scores[[0, 2]])
    assert not np.array_equal(moved["state.rng"], env.state.rng[[0, 2]])  # the deal drew from the streams
    assert np.array_equal(moved["sampler"], env._sampler[[0, 2]])  # ... the sampler's were not reseeded
    assert not np.array_equal(moved["out.obs"], obs[[0, 2]])
    assert obs is env.observations and masks is env.action_masks
    assert not env.infos["episode"]["done"].any() and not env.infos["illegal"][[0, 2]].any()
    env.step(env.sample_actions())  # all four play on
    assert env.ticks.tolist() == [1, 13, 1, 13]


def test_a_chosen_game_is_dealt_the_hand_its_stream_deals_next():
    """Dealt anew, game ``i`` gets the hand its stream gives next, the one the same-step reset of
    an ended hand deals."""
    ended = played(ticks=12, max_cycles=12)  # every hand cut off at tick 12 and dealt again at once
    cut = played(ticks=12, max_cycles=13)
    assert ended.infos["episode"]["done"].all() and (cut.ticks == 12).all()
    cut.reset(games=[1])
    for key in ("nertz", "work", "stock", "rng"):
        assert np.array_equal(getattr(cut.state, key)[1], getattr(ended.state, key)[1]), key
        assert not np.array_equal(getattr(cut.state, key)[0], getattr(ended.state, key)[0]), key


def test_with_a_seed_a_chosen_game_deals_what_reset_seed_deals_it():
    env, fresh = played(), NertzVectorEnv(4, 2, seed=9)
    fresh.reset()
    env.reset(seed=9, games=[2])
    assert np.array_equal(env.observations[2], fresh.observations[2])
    assert np.array_equal(env.states()[2], fresh.states()[2])
    assert env._sampler[2] == fresh._sampler[2]
    assert not np.array_equal(env.states()[0], fresh.states()[0])
    assert np.array_equal(env.sample_actions()[2], fresh.sample_actions()[2])


def test_the_same_seed_and_calls_give_the_same_games_byte_for_byte():
    runs = []
    for _ in range(2):
        env = played(seed=5, max_cycles=30, nertz_builds=True)
        seen = []
        for t in range(40):
            if t % 7 == 3:
                env.reset(games=[t % 4, (t + 2) % 4])
            obs, masks, rewards, *_ = env.step(env.sample_actions())
            seen.append((obs.copy(), masks.copy(), rewards.copy(), env.states()))
        runs.append(seen)
    for a, b in zip(*runs):
        for x, y in zip(a, b):
            assert np.array_equal(x, y)


def test_a_chosen_game_starts_a_new_match():
    env = played(ticks=40, episode="match", max_cycles=10, target_score=1000)
    assert (env.totals[1] != 0).any() and env.state.match_info[1, engine.MI_HANDS] > 0
    totals = env.totals.copy()
    env.reset(games=np.array([False, True, False, False]))
    assert (env.totals[1] == 0).all() and np.array_equal(env.totals[[0, 2, 3]], totals[[0, 2, 3]])
    assert env.state.match_info[1, engine.MI_HANDS] == 0


@pytest.mark.parametrize(
    "games, error",
    [
        (np.array([True, False]), ValueError),  # a mask of another length
        (np.ones((4, 1), bool), ValueError),  # TorchRL's [B, 1] shape: flatten it first
        ([0, 4], ValueError),
        ([-1], ValueError),
        (2, ValueError),  # a single index: [2]
        ([[0, 1]], ValueError),
        ([0.0, 1.0], TypeError),
        (np.array([0, 1], "m8"), TypeError),  # a duration is no game index
        ("0", TypeError),
        ([0, None], TypeError),
    ],
)
def test_bad_games_are_refused_by_name_and_change_nothing(games, error):
    env = played()
    before = rows_of(env, [0, 1, 2, 3])
    with pytest.raises(error, match=ACCEPTED):
        env.reset(games=games)
    assert_same(before, rows_of(env, [0, 1, 2, 3]))


def test_games_need_a_table_dealt_first():
    env = NertzVectorEnv(4, 2, seed=0)
    with pytest.raises(RuntimeError, match=r"call reset\(\) before reset\(games=...\)"):
        env.reset(games=[0])
    env.reset()
    for _ in range(2):
        env.step(env.sample_actions())
    before = rows_of(env, [0, 1, 2, 3])
    env.reset(games=[])  # no game: nothing to do
    assert env.ticks.tolist() == [2, 2, 2, 2]
    assert_same(before, rows_of(env, [0, 1, 2, 3]))


def test_the_plain_python_engine_deals_the_same_games():
    """While a first start compiles, the env plays ``engine.python_engine()`` (``nertz_env.interim``):
    its ``deal_games`` deals what the compiled one does."""
    compiled, plain = played(seed=1, ticks=5), played(seed=1, ticks=5)
    plain._engine = engine.python_engine()
    for env in (compiled, plain):
        env.reset(games=[0, 2])
    for key, value in compiled.state._asdict().items():
        assert np.array_equal(value, getattr(plain.state, key)), key
    assert np.array_equal(compiled.observations, plain.observations)
    assert np.array_equal(compiled.action_masks, plain.action_masks)
