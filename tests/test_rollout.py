"""The learned search ``rollout``: determinised tables (R9's hidden cards dealt at random) and the
agent that plays candidates out on them with the shipped policy."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nertz_env import NertzConfig, agents, engine
from nertz_env.actions import ActionCatalogue
from nertz_env.agents.determinise import Determiniser
from nertz_env.checks import check_table
from nertz_env.vector import NertzVectorEnv


def _tables(seed: int, ticks: int, num_players: int = 4, games: int = 4):
    """A vector env after ``ticks`` ticks of uniformly random legal play."""
    env = NertzVectorEnv(games, num_players, seed=seed)
    env.reset()
    for _ in range(ticks):
        env.step(env.sample_actions())
    return env


def _observe(state: engine.State, config: NertzConfig):
    table = ActionCatalogue(config).table
    n, p = state.score.shape
    buffers = engine.new_buffers(n, p, env_obs_dim(config), len(table))
    engine.observe_batch(state, config.packed, table, engine.mask_plan(table), buffers.obs, buffers.masks)
    return buffers.obs, buffers.masks


def env_obs_dim(config: NertzConfig) -> int:
    from nertz_env.layout import ObservationLayout

    return ObservationLayout(config).size


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), ticks=st.integers(0, 120), players=st.sampled_from([2, 3, 4]),
       draw=st.integers(0, 2**32 - 1))  # fmt: skip
def test_a_determinised_table_is_legal_and_shows_the_viewer_exactly_what_they_saw(seed, ticks, players, draw):
    """R9: the table dealt from an observation passes every check of a saved table (card
    conservation, R4.3 work piles, R4.2 foundations, R7 scores), and its seat-0 observation and
    mask equal the observation and mask it was dealt from, for every viewer of every game."""
    env = _tables(seed, ticks, players)
    config = env.config
    det = Determiniser(config)
    rng = np.random.default_rng(draw)
    like = engine.new_state(1, players, config.work_piles)
    for g in range(env.num_envs):
        for viewer in range(players):
            state = engine.new_state(1, players, config.work_piles)
            det.fill(state, 0, env.observations[g, viewer], rng)
            check_table(state, config, ActionCatalogue(config).table, like)
            obs, masks = _observe(state, config)
            np.testing.assert_array_equal(obs[0, 0], env.observations[g, viewer])
            np.testing.assert_array_equal(masks[0, 0], env.action_masks[g, viewer])


def test_determinised_tables_differ_only_in_what_is_hidden():
    """Two draws for one observation agree on every face-up card and every count and differ in
    the hidden order (R9); the same draw seed gives the same table."""
    env = _tables(seed=3, ticks=30)
    det = Determiniser(env.config)
    obs = env.observations[0, 1]
    a, b, c = (engine.new_state(1, 4, 4) for _ in range(3))
    det.fill(a, 0, obs, np.random.default_rng(1))
    det.fill(b, 0, obs, np.random.default_rng(2))
    det.fill(c, 0, obs, np.random.default_rng(1))
    for x, y in zip(a, c):
        np.testing.assert_array_equal(x, y)
    for name in ("work", "work_len", "nertz_len", "stock_len", "waste_len", "foundation_tops", "on_foundations"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    assert (a.stock[0, 1:] != b.stock[0, 1:]).any() or (a.nertz[0, 1:] != b.nertz[0, 1:]).any()
    viewer_waste = a.waste[0, 0, : a.waste_len[0, 0]]  # the viewer remembers its own waste in order
    np.testing.assert_array_equal(viewer_waste, env.state.waste[0, 1, : env.state.waste_len[0, 1]])


def test_an_observation_that_fits_no_table_is_refused():
    env = _tables(seed=4, ticks=10)
    det = Determiniser(env.config)
    obs = env.observations[0, 0].copy()
    obs[env.layout.slices["opp1.stock_count"]] += 1  # one card more than the deck holds
    with pytest.raises(ValueError, match="opp1's piles hold 53 cards"):
        det.fill(engine.new_state(1, 4, 4), 0, obs, np.random.default_rng(0))
    obs = env.observations[0, 0].copy()
    obs[env.layout.slices["foundation_tops"].start] += 1  # an ace pile nobody's ace is on
    with pytest.raises(ValueError, match=r"foundation_tops counts (\d+) piles of suit C reaching AC but the "
                                         r"players' foundation parts show (?!\1)\d+ AC"):  # fmt: skip
        det.fill(engine.new_state(1, 4, 4), 0, obs, np.random.default_rng(0))
    with pytest.raises(ValueError, match="standard timing only"):
        Determiniser(NertzConfig(move_ticks=2))


def _marked_state(games: int) -> engine.State:
    """A table of ``games`` games whose foundation rows all hold the mark 77, to see writes land."""
    state = engine.new_state(games, 4, 4)
    state.foundation_suit[:] = 77
    state.foundation_len[:] = 77
    return state


def test_foundation_tops_of_more_piles_than_the_row_holds_write_nothing_outside_it():
    """Every value of foundation_tops inside the space [0, 4] but 52 piles a suit: the piles were
    written past game 0's 16 and into the next games' rows (heap corruption at the last game)."""
    env = _tables(seed=4, ticks=0)
    det = Determiniser(env.config)
    obs = env.observations[0, 0].copy()
    obs[env.layout.slices["foundation_tops"]] = 4
    state = _marked_state(3)
    with pytest.raises(ValueError, match="foundation_tops counts 52 foundation piles of suit C; accepted at most 4"):
        det.fill(state, 0, obs, np.random.default_rng(0))
    assert (state.foundation_suit[1:] == 77).all() and (state.foundation_len[1:] == 77).all()
    from nertz_env.agents.determinise import _fill_foundations  # called directly: its own bound holds

    draws = np.random.default_rng(0).random((4, 52))
    with pytest.raises(ValueError, match="more piles than the 4 \\* P a table has"):
        _fill_foundations(state, 0, obs, det.offsets, draws)
    assert (state.foundation_suit[1:] == 77).all() and (state.foundation_len[1:] == 77).all()


@pytest.mark.parametrize("b", [3, 5, -1, 10**7, True, 1.0])
def test_fill_writes_only_a_game_of_the_state(b):
    env = _tables(seed=4, ticks=5)
    det = Determiniser(env.config)
    state = _marked_state(3)
    with pytest.raises(ValueError, match=f"game b={b!r} is not one of the state's 3 games; accepted 0..2"):
        det.fill(state, b, env.observations[0, 0], np.random.default_rng(0))
    assert (state.foundation_suit == 77).all()
    from nertz_env.agents.determinise import _fill  # called directly: its own bound holds

    with pytest.raises(IndexError, match="not one of the state's games"):
        _fill(state, 3, env.observations[0, 0], det.offsets, np.random.default_rng(0).random((2, 4, 52)))


def test_fill_takes_a_state_and_an_observation_of_its_config():
    env = _tables(seed=4, ticks=5)
    det = Determiniser(env.config)
    with pytest.raises(ValueError, match="state.nertz is int8 \\(1, 3, 52\\); accepted games of this config"):
        det.fill(engine.new_state(1, 3, 4), 0, env.observations[0, 0], np.random.default_rng(0))
    with pytest.raises(ValueError, match="Determiniser.fill was built for observations of size 1631"):
        det.fill(engine.new_state(1, 4, 4), 0, env.observations[0, 0, :100], np.random.default_rng(0))


torch = pytest.importorskip("torch", reason="needs torch: pip install 'nertz-env[training]'")


@pytest.fixture(scope="module")
def rollout():
    return agents.make("rollout", seed=5, candidates=3, samples=3, horizon=4)


def test_rollout_plays_legal_moves_and_is_deterministic_per_decision_key(rollout):
    env = _tables(seed=6, ticks=12, games=6)
    obs = env.observations.reshape(-1, env.obs_dim)
    masks = env.action_masks.reshape(-1, env.num_actions)
    keys = np.arange(len(obs), dtype=np.uint64) * np.uint64(7919)
    first = rollout.act_batch(obs, masks, keys)
    assert masks[np.arange(len(obs)), first].all()
    again = agents.make("rollout", seed=5, candidates=3, samples=3, horizon=4, chunk=5)
    np.testing.assert_array_equal(again.act_batch(obs[::-1], masks[::-1], keys[::-1])[::-1], first)


def test_rollout_with_one_candidate_is_its_policy(rollout):
    env = _tables(seed=8, ticks=20, games=4)
    obs = env.observations.reshape(-1, env.obs_dim)
    masks = env.action_masks.reshape(-1, env.num_actions)
    ppo = agents.make("ppo")
    one = agents.make("rollout", candidates=1, samples=2, horizon=2, policy=ppo)
    np.testing.assert_array_equal(one.act_batch(obs, masks), ppo.act_batch(obs, masks))


def _one_tick_by_hand(agent, state, first):
    """One engine tick of a one-game ``state``: seat 0 plays ``first``, the others the policy."""
    config = agent.config
    obs, masks = _observe(state, config)
    logits, _ = agent.policy.scores(obs[0], masks[0])
    actions = logits.argmax(-1).numpy()[None].astype(np.int64)
    actions[0, 0] = first
    table = ActionCatalogue(config).table
    out = engine.new_buffers(1, config.num_players, obs.shape[2], len(table))
    engine.step_batch(state, actions, config.packed, table, config.speed_weights, engine.mask_plan(table), 0.0, out)
    return out


def test_a_play_out_ends_with_the_hand_or_at_the_horizon_with_the_policys_value():
    """The outcome of a play-out: where the hand ends (R4.6: a CALL ends it after the tick) seat
    0's final R7 score minus the others' mean; where the horizon cuts it, that difference of the
    running scores plus the critic's value of seat 0's observation there."""
    from nertz_env.actions import ACTION_CALL, ACTION_DRAW

    agent = agents.make("rollout", seed=1, candidates=2, samples=2, horizon=1)
    env = NertzVectorEnv(64, 4, seed=9)
    env.reset()
    for _ in range(600):  # random play until some seat may call
        obs, masks, *_ = env.step(env.sample_actions())
        where = np.argwhere(masks[:, :, ACTION_CALL] == 1)
        if len(where):
            break
    g, v = where[0]
    for first in (ACTION_CALL, ACTION_DRAW):
        state = engine.new_state(1, 4, 4)
        agent.determiniser.fill(state, 0, env.observations[g, v], np.random.default_rng(0))
        mine = engine.copy_state(state)
        out = engine.new_buffers(1, 4, env.obs_dim, env.num_actions)
        outcome = agent._run(state, out, np.array([first]))
        by_hand = _one_tick_by_hand(agent, mine, first)
        if first == ACTION_CALL:
            assert by_hand.done[0]
            final = by_hand.final_score[0].astype(float)
            expected = final[0] - final[1:].mean()
        else:
            assert not by_hand.done[0]
            running = mine.score[0].astype(float)
            _, value = agent.policy.scores(by_hand.obs[0, :1], by_hand.masks[0, :1])
            expected = running[0] - running[1:].mean() + float(value[0])
        np.testing.assert_allclose(outcome[0], expected, rtol=1e-6)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"candidates": 0}, "candidates=0"),
        ({"samples": "x"}, "samples='x'"),
        ({"horizon": True}, "horizon=True"),
        ({"margin": -1}, "margin=-1"),
        ({"margin": "wide"}, "margin='wide'"),
        ({"policy": "greedy"}, "is not a trained .pt policy"),
        ({"candidates": 64, "samples": 1024, "chunk": 64}, "candidates x samples x chunk = 4,194,304 tables"),
    ],
)
def test_rollout_refuses_bad_options_with_what_is_accepted(options, message):
    with pytest.raises(ValueError, match=message):
        agents.make("rollout", **options)


def test_rollout_refuses_foundation_tops_beyond_the_table_before_it_deals(rollout):
    """The fuzzing's case: the search raised a clean-looking error after its determinisation had
    written past its state; within a few calls the process died (double free)."""
    env = _tables(seed=4, ticks=0)
    obs, masks = env.observations[0, :1].copy(), env.action_masks[0, :1]
    obs[:, env.layout.slices["foundation_tops"]] = 4
    for _ in range(50):
        with pytest.raises(ValueError, match="foundation_tops counts 52 foundation piles of suit C"):
            rollout.act_batch(obs, masks)
