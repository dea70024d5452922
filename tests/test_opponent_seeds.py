"""The single-seat and batched doors with fixed opponents: a seeded ``reset`` replays the whole
episode, random opponents included (Gymnasium's ``reset`` contract), and what the doors refuse."""

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from nertz_env import agents
from nertz_env.agents.single_env import NertzSingleAgentEnv
from nertz_env.config import NertzConfig
from nertz_env.gym_vector import NertzGymVectorEnv
from nertz_env.vector import sample_legal


def _single_episode(env, seed: int, ticks: int = 60) -> list[np.ndarray]:
    obs, _ = env.reset(seed=seed)
    seen, chooser = [obs.copy()], np.random.default_rng(0)
    for _ in range(ticks):
        obs, reward, terminated, truncated, _ = env.step(chooser.choice(np.flatnonzero(env.action_masks())))
        seen += [obs.copy(), np.array([reward])]
        if terminated or truncated:
            break
    return seen


def _vector_episode(env, seed: int, ticks: int = 40) -> list[np.ndarray]:
    obs, infos = env.reset(seed=seed)
    seen = [obs.copy()]  # the doors write their buffers in place
    for t in range(ticks):
        obs, rewards, _, _, infos = env.step(sample_legal(infos["action_mask"], rng=t))
        seen += [obs.copy(), rewards.copy()]
    return seen


def test_a_seeded_reset_replays_a_single_seat_episode_with_random_opponents():
    env = NertzSingleAgentEnv(opponents=["random", "random", "random"], seat=0)
    first = _single_episode(env, seed=4)
    _single_episode(env, seed=9)  # the opponents' generators move on in between
    again = _single_episode(env, seed=4)
    assert len(first) == len(again) and all(np.array_equal(a, b) for a, b in zip(first, again))
    # the opponents do draw: another seed plays them otherwise on the same deal's first ticks
    assert not all(np.array_equal(a, b) for a, b in zip(first, _single_episode(env, seed=5)))


def test_gymnasium_check_env_passes_with_random_opponents():
    check_env(gymnasium.make("nertz_env/NertzSingle-v0", opponents=["random"] * 3).unwrapped, skip_render_check=True)


def test_a_seeded_reset_replays_the_vector_env_with_random_opponents():
    env = gymnasium.make_vec("nertz_env/NertzSingle-v0", num_envs=4, opponents=["random"] * 3, max_cycles=30)
    first = _vector_episode(env, seed=0)
    again = _vector_episode(env, seed=0)
    assert all(np.array_equal(a, b) for a, b in zip(first, again))


def test_a_seeded_sb3_reset_replays_random_opponents():
    pytest.importorskip("stable_baselines3", reason="the SB3 door needs the training extra")
    from nertz_env.sb3 import NertzSB3VecEnv

    config = NertzConfig(num_players=3)
    env = NertzSB3VecEnv(3, {1: agents.make("random", config=config), 2: agents.make("random", config=config, seed=5)},
                         num_players=3, max_cycles=30)  # fmt: skip

    def run() -> list[np.ndarray]:
        env.seed(7)
        seen = [env.reset().copy()]
        for t in range(40):
            obs, rewards, _, _ = env.step(sample_legal(env.action_masks(), rng=t))
            seen += [obs.copy(), rewards.copy()]
        return seen

    first, again = run(), run()
    assert all(np.array_equal(a, b) for a, b in zip(first, again))


def test_a_constructor_seed_plays_the_episode_of_that_seed_given_to_reset():
    """The constructor's seed is the first ``reset``'s (``NertzGymVectorEnv``'s ``seed``, and
    ``make_vec(..., seed=)``, which passes it there): the opponents are reseeded from it too, as by
    ``reset(seed=...)`` (before, they kept the seeds they were built with)."""
    pytest.importorskip("stable_baselines3", reason="the SB3 door needs the training extra")
    from nertz_env.sb3 import NertzSB3VecEnv

    def gym_run(env, seed):
        obs, infos = env.reset(seed=seed)
        seen = [obs.copy()]
        for t in range(30):
            obs, rewards, _, _, infos = env.step(sample_legal(infos["action_mask"], rng=t))
            seen += [obs.copy(), rewards.copy()]
        return seen

    def sb3_run(env):
        seen = [env.reset().copy()]
        for t in range(30):
            obs, rewards, _, _ = env.step(sample_legal(env.action_masks(), rng=t))
            seen += [obs.copy(), rewards.copy()]
        return seen

    def same(a, b):
        return len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b))

    opponents = lambda: {1: agents.make("random", config=NertzConfig(num_players=2))}  # noqa: E731
    given = gym_run(NertzGymVectorEnv(3, opponents(), num_players=2, seed=4), None)
    assert same(given, gym_run(NertzGymVectorEnv(3, opponents(), num_players=2), 4))
    assert not same(given, gym_run(NertzGymVectorEnv(3, opponents(), num_players=2), 5))
    first = sb3_run(NertzSB3VecEnv(3, opponents(), num_players=2, seed=4))
    later = NertzSB3VecEnv(3, opponents(), num_players=2)
    later.seed(4)
    assert same(first, sb3_run(later))


def test_a_reseeded_agent_chooses_as_one_built_with_that_seed():
    config = NertzConfig(num_players=2)
    env = NertzSingleAgentEnv(opponents=["greedy"], num_players=2)
    obs, _ = env.reset(seed=0)
    rows, masks = np.repeat(obs[None], 50, 0), np.repeat(env.game.masks[0][None], 50, 0)
    used = agents.make("random", config=config, seed=1)
    used.act_batch(rows, masks)
    used.reseed(123)
    fresh = agents.make("random", config=config, seed=123)
    assert np.array_equal(used.act_batch(rows, masks), fresh.act_batch(rows, masks))
    with pytest.raises(TypeError, match="agent seed"):
        used.reseed(1.5)


def test_a_plain_callable_opponent_keeps_its_own_chance():
    calls = []

    def opponent(obs, masks):
        calls.append(len(obs))
        return np.argmax(masks, axis=1)

    env = NertzGymVectorEnv(2, {1: opponent}, num_players=2)
    _vector_episode(env, seed=1, ticks=3)
    assert calls == [2, 2, 2]


@pytest.mark.parametrize("action, error", [(3.7, TypeError), (True, TypeError), ("2", TypeError), (10_000, ValueError)])
def test_the_single_seat_env_refuses_actions_that_are_not_catalogue_integers(action, error):
    env = NertzSingleAgentEnv(opponents=["greedy"], num_players=2)
    env.reset(seed=0)
    with pytest.raises(error, match="action"):
        env.step(action)
    env.step(np.int64(0))  # a numpy integer is an action


@pytest.mark.parametrize("options, error, words", [
    ({"illegal_action_penalty": float("nan")}, ValueError, "illegal_action_penalty"),
    ({"illegal_action_penalty": True}, ValueError, "illegal_action_penalty"),
    ({"seat": True}, ValueError, "seat"),
    ({"seat": "0"}, ValueError, "seat"),
    ({"opponents": "greedy"}, TypeError, "list of agents"),
])  # fmt: skip
def test_the_single_seat_env_refuses_bad_options(options, error, words):
    kwargs = {"opponents": ["greedy"], "num_players": 2, **options}
    with pytest.raises(error, match=words):
        NertzSingleAgentEnv(**kwargs)


def test_the_single_seat_env_takes_a_numpy_seat_and_refuses_list_reset_options():
    env = NertzSingleAgentEnv(opponents=["greedy"], num_players=2, seat=np.int64(1))
    env.reset(seed=0)
    assert env.seat == 1
    with pytest.raises(TypeError, match="reset options must be a dict"):
        env.reset(options=["decks"])


def test_an_opponent_returning_a_float_is_refused():
    class Floats:
        def act_batch(self, obs, masks):
            return np.full(len(obs), 2.7)

    env = NertzSingleAgentEnv(opponents=[Floats()], num_players=2)
    env.reset(seed=0)
    with pytest.raises(TypeError, match="opponent of seat"):
        env.step(0)


def test_the_batched_doors_refuse_a_list_of_opponents_and_a_step_before_reset():
    with pytest.raises(TypeError, match=r"opponents must be a dict \{seat: agent\}"):
        NertzGymVectorEnv(2, ["greedy"] * 3)
    with pytest.raises(TypeError, match="list of agents"):
        gymnasium.make_vec("nertz_env/NertzSingle-v0", num_envs=2, opponents="greedy")
    env = NertzGymVectorEnv(2, {1: agents.make("greedy", config=NertzConfig(num_players=2))}, num_players=2)
    with pytest.raises(RuntimeError, match=r"call reset\(\) before step\(\)"):
        env.step(np.zeros(2, np.int64))
