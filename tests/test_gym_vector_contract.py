"""The Gymnasium doors keep Gymnasium's vector contract: ``reset``'s seeding and info masks, the
``final_*`` arrays of a step where some hands end (SAME_STEP, as ``SyncVectorEnv``), and the same
keyword arguments for ``gymnasium.make_vec`` in either ``vectorization_mode``."""

from __future__ import annotations

import numpy as np
import pytest

from nertz_env.vector import sample_legal


def test_gym_vector_reset_and_final_infos_follow_the_vector_env_conventions():
    """``reset`` keeps ``np_random_seed`` and pairs ``action_mask`` with ``_action_mask``; in a step
    where some hands end, the rows that did not end read 0 in every ``final_*`` array (they kept the
    previous hand's values), as SyncVectorEnv's fresh arrays do."""
    import gymnasium

    env = gymnasium.make_vec("nertz_env/NertzSingle-v0", num_envs=8, opponents=["greedy"], num_players=2,
                             nertz_pile_size=3, auto_call=True, max_cycles=80)  # fmt: skip
    obs, infos = env.reset(seed=4)
    keys = {"action_mask", "score", "illegal_action", "end_reason", "seat"}
    assert env.np_random_seed == 4 and set(infos) == keys | {f"_{key}" for key in keys}
    assert all(infos[f"_{key}"].all() for key in keys)
    partial = 0
    for t in range(300):
        obs, rewards, terms, truncs, infos = env.step(sample_legal(infos["action_mask"], t))
        if "_final_obs" in infos and not infos["_final_obs"].all():
            partial += 1
            rest, final = ~infos["_final_obs"], infos["final_info"]
            assert not infos["final_obs"][rest].any() and not infos["final_score"][rest].any()
            assert not final["end_reason"][rest].any() and not final["final_score"][rest].any()
            assert (final["end_reason"][infos["_final_obs"]] > 0).all()
    assert partial >= 5


def test_reset_seed_gives_the_action_space_a_stream_of_its_own():
    """``reset(seed=s)`` seeds ``action_space`` from ``s`` (the same samples after each such reset)
    on a stream other than ``np_random``'s, so the two do not draw the same numbers."""
    import gymnasium

    env = gymnasium.make_vec("nertz_env/NertzSingle-v0", num_envs=6, opponents=["greedy"], num_players=2)
    draws = []
    for _ in range(2):
        env.reset(seed=5)
        draws.append(env.action_space.sample().tolist())
    assert draws[0] == draws[1]
    env.reset(seed=5)
    assert env.action_space.np_random.random(4).tolist() != env.np_random.random(4).tolist()
    env.reset(seed=6)
    assert env.action_space.sample().tolist() != draws[0]


@pytest.mark.parametrize("mode", ["vector_entry_point", "sync"])
def test_make_vec_takes_the_same_options_in_either_mode(mode):
    """``gymnasium.make_vec`` passes its keyword arguments to the env whichever ``vectorization_mode``
    builds it: the batched env takes a fixed ``seat`` and ``render_mode=None``, the single env
    ``observation_dtype``, and each refuses what it cannot do by name."""
    import gymnasium

    env = gymnasium.make_vec("nertz_env/NertzSingle-v0", num_envs=2, vectorization_mode=mode, opponents=["greedy"],
                             num_players=2, seat=1, render_mode=None, observation_dtype="float32")  # fmt: skip
    obs, infos = env.reset(seed=1)
    assert obs.dtype == np.float32 and env.observation_space.contains(obs)
    masks = infos["action_mask"] if mode == "vector_entry_point" else np.stack(env.call("action_masks"))
    obs, *_ = env.step(sample_legal(masks, 0))
    assert obs.dtype == np.float32
    if mode == "vector_entry_point":
        assert env.learning_seats.tolist() == [1]
        with pytest.raises(ValueError, match=r"invalid seat='random': .* accepted 0\.\.1"):
            gymnasium.make_vec("nertz_env/NertzSingle-v0", num_envs=2, opponents=["greedy"], num_players=2,
                               seat="random")
        with pytest.raises(ValueError, match="invalid render_mode='ansi': make_vec's batched env does not render"):
            gymnasium.make_vec("nertz_env/NertzSingle-v0", num_envs=2, opponents=["greedy"], render_mode="ansi")
    else:
        assert all(seat == 1 for seat in env.get_attr("seat"))
    env.close()


def test_every_gymnasium_and_sb3_door_refuses_an_opponent_built_for_other_rules():
    """An agent object reads its own rules' observation layout and plays by its own rules: one built
    for draw-1 stocks (``stock_draw=1``) at a draw-3 table is refused by name in the batched env,
    its SB3 form and the single-seat env (it used to play on unnoticed); one built for another
    reward or ``max_cycles`` (``options.OTHER_RULES``) plays."""
    import gymnasium

    from nertz_env import agents
    from nertz_env.config import NertzConfig
    from nertz_env.gym_vector import NertzGymVectorEnv

    other = agents.make("heuristic", config=NertzConfig(num_players=2, stock_draw=1))
    message = r"built for other rules: stock_draw=1 \(the env's 3\); build it with the env's config"
    with pytest.raises(ValueError, match="opponent of seat 1 .*" + message):
        NertzGymVectorEnv(2, opponents={1: other}, num_players=2)
    with pytest.raises(ValueError, match=r"opponents\[0\] .*" + message):
        gymnasium.make("nertz_env/NertzSingle-v0", opponents=[other])
    with pytest.raises(ValueError, match="opponent of seat 1 .*" + message):
        gymnasium.make_vec("nertz_env/NertzSingle-v0", num_envs=2, opponents=[other])
    same = agents.make("heuristic", config=NertzConfig(num_players=2, stock_draw=1))
    env = NertzGymVectorEnv(2, opponents={1: same}, num_players=2, stock_draw=1)  # its own rules: played
    assert env.learning_seats.tolist() == [0]
    default = agents.make("heuristic", config=NertzConfig(num_players=2))  # the reward and the cut-off
    env = NertzGymVectorEnv(2, opponents={1: default}, num_players=2, max_cycles=30, reward="sparse")  # steer no play
    assert env.learning_seats.tolist() == [0]
    sb3 = pytest.importorskip("nertz_env.sb3", reason="needs stable-baselines3: pip install 'nertz-env[training]'")
    with pytest.raises(ValueError, match="opponent of seat 1 .*" + message):
        sb3.NertzSB3VecEnv(2, opponents={1: other}, num_players=2)


def test_the_single_seat_env_checks_its_seed_and_takes_decks_as_nertz_v0_does():
    """``reset(seed=True)`` is refused as every other door refuses it (Gymnasium's own check read
    it as 1), a numpy integer seed is taken, and R10's fixed decks may be one 2-D array."""
    import gymnasium

    from nertz_env import nertz_v0

    env = gymnasium.make("nertz_env/NertzSingle-v0", opponents=["greedy"], seat=0)
    with pytest.raises(TypeError, match="seed must be None or an integer from 0 to 2\\*\\*128 - 1, got True"):
        env.reset(seed=True)
    assert env.reset(seed=np.int64(5))[0].tolist() == env.reset(seed=5)[0].tolist()
    decks = np.stack([np.arange(52), np.arange(52)[::-1]])
    obs, _ = env.reset(seed=1, options={"decks": decks})
    twin = nertz_v0.parallel_env(num_players=2)
    assert obs.tolist() == twin.reset(seed=1, options={"decks": decks})[0]["player_0"]["observation"].tolist()
