"""The SB3 adapter: sb3-contrib's MaskablePPO learns on it (self-play and against fixed seats),
never picks an illegal action (R4), and sees SB3's episode bookkeeping when hands end (R5)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")
from sb3_contrib import MaskablePPO  # noqa: E402
from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported  # noqa: E402
from stable_baselines3.common.callbacks import BaseCallback  # noqa: E402

from nertz_env.sb3 import NertzSB3VecEnv  # noqa: E402
from nertz_env.vector import sample_legal  # noqa: E402


class Watch(BaseCallback):
    """Checks every step: no learning seat played an illegal action; collects episode infos."""

    def __init__(self):
        super().__init__()
        self.episodes: list[dict] = []
        self.steps = 0

    def _on_step(self) -> bool:
        env = self.training_env
        illegal = env.vector.infos["illegal"][:, env.learning_seats]
        assert not illegal.any(), "MaskablePPO chose an illegal action"
        self.steps += 1
        for done, info in zip(self.locals["dones"], self.locals["infos"]):
            if done:
                self.episodes.append(info)
        return True


def learn(env: NertzSB3VecEnv, steps: int) -> Watch:
    model = MaskablePPO(
        "MlpPolicy", env, n_steps=16, batch_size=64, n_epochs=1, seed=0, device="cpu",
        policy_kwargs={"net_arch": [32]},
    )  # fmt: skip
    watch = Watch()
    model.learn(total_timesteps=steps, callback=watch)
    return watch


def test_maskable_ppo_self_play_learns_legal_moves_only():
    env = NertzSB3VecEnv(num_games=2, seed=0, max_cycles=40)
    assert env.num_envs == 8 and is_masking_supported(env)
    obs = env.reset()
    assert obs.shape == (8, env.vector.obs_dim) and obs.dtype == np.int8
    assert env.observation_space.contains(obs[0])
    masks = get_action_masks(env)
    assert masks.shape == (8, env.vector.num_actions) and masks[:, 0].all()  # WAIT (R4.7)
    watch = learn(env, 8 * 16 * 3)
    assert watch.steps == 48 and len(watch.episodes) >= 8
    for info in watch.episodes:  # max_cycles truncates (R5): SB3 bootstraps from the final obs
        assert info["TimeLimit.truncated"] and info["episode"]["l"] == 40
        assert info["terminal_observation"].shape == (env.vector.obs_dim,)
        assert set(info) >= {"episode", "score", "end_reason"}


def test_fixed_opponent_seats_are_hidden_and_played():
    calls = []

    def waits(obs, masks):
        calls.append(obs.shape[0])
        return np.zeros(obs.shape[0], np.int64)

    def random_legal(obs, masks):
        return sample_legal(masks, 7)

    env = NertzSB3VecEnv(num_games=3, opponents={1: waits, 2: random_legal, 3: random_legal}, seed=1, max_cycles=30)
    assert env.num_envs == 3 and env.learning_seats.tolist() == [0]
    env.reset()
    learn(env, 3 * 16 * 2)
    assert calls and set(calls) == {3}
    v = env.vector
    assert v.state.nertz_len[:, 1].tolist() == [13, 13, 13] and (v.state.waste_len[:, 1] == 0).all()  # only waits
    assert not v.infos["illegal"][:, 1:].any()


def test_agent_objects_and_checks():
    class Agent:
        def act_batch(self, observations, action_masks):
            return np.zeros(len(observations), np.int64)

    agent = Agent()
    env = NertzSB3VecEnv(num_games=2, num_players=3, opponents={0: agent, 2: agent}, seed=2)
    env.reset()
    obs, rewards, dones, infos = env.step(np.zeros(env.num_envs, np.int64))
    assert obs.shape == (2, env.vector.obs_dim) and rewards.dtype == np.float32 and len(infos) == 2
    assert env.learning_rows.tolist() == [1, 4]
    with pytest.raises(ValueError, match="leave at least one seat"):
        NertzSB3VecEnv(num_games=1, num_players=2, opponents={0: agent, 1: agent})
    with pytest.raises(ValueError, match=r"opponent seat 4 is not a seat of a 4-player game \(0\.\.3\)"):
        NertzSB3VecEnv(num_games=1, opponents={4: agent})
    with pytest.raises(TypeError, match="callable"):
        NertzSB3VecEnv(num_games=1, opponents={1: "random"})


def test_actions_seeds_options_and_opponent_actions_are_checked():
    env = NertzSB3VecEnv(num_games=2, num_players=2, seed=0)
    env.reset()
    for bad in (np.full(4, 0.7), np.ones(4, bool), np.array([0, 0, 0, None])):
        with pytest.raises(TypeError, match="NertzSB3VecEnv.step must be integers"):
            env.step(bad)  # 0.7 and True were cast to 0 and 1
    with pytest.raises(ValueError, match=r"action -1 at \(2,\) is out of range"):
        env.step(np.array([0, 0, -1, 0]))
    for seed in (True, "3", -1, 1.5):
        with pytest.raises((TypeError, ValueError), match="seed must be"):
            env.seed(seed)  # True seeded 1; '3' failed adding an int
    assert env.seed(np.int64(5)) == [5, 6, 7, 8]
    env.set_options(None)
    env.set_options({})
    for options in ({"x": 1}, "abc", [{}, {"x": 1}, {}, {}]):
        with pytest.raises((TypeError, ValueError), match="takes no options"):
            env.set_options(options)  # were kept and never used
    env.reset()
    for returned in (0.9, True):
        opponent = lambda obs, masks, r=returned: np.full(len(obs), r)  # noqa: E731
        env = NertzSB3VecEnv(num_games=2, num_players=2, opponents={1: opponent}, seed=0)
        env.reset()
        with pytest.raises(TypeError, match=r"the opponent of seat\(s\) \[1\] must be integers"):
            env.step(np.zeros(2, np.int64))
    with pytest.raises(ValueError, match="opponent seat True"):
        NertzSB3VecEnv(num_games=1, num_players=2, opponents={True: sample_legal})


def test_sb3s_num_envs_is_refused_naming_num_games():
    """SB3 calls its envs ``num_envs``; here they are the games times the learning seats, and the
    games are ``num_games`` (before: NertzVectorEnv's 'got multiple values for argument')."""
    with pytest.raises(ValueError, match=r"invalid num_envs=2: NertzSB3VecEnv takes num_games, the games played"):
        NertzSB3VecEnv(num_envs=2, num_players=2)


def test_get_attr_reads_the_table_and_set_attr_changes_only_the_penalty_on_every_env():
    """SB3's ``get_attr``/``set_attr`` reach the sub-envs' attributes: the table's ``config`` is read
    through; ``illegal_action_penalty`` changes the reward of an illegal move (R4.7); anything else,
    or some sub-envs alone, is refused by name (it used to be written onto the VecEnv unnoticed)."""
    env = NertzSB3VecEnv(num_games=2, num_players=2, seed=0)
    assert env.get_attr("config") == [env.vector.config] * 4 and env.has_attr("illegal_action_penalty")
    env.set_attr("illegal_action_penalty", 7.0)
    assert env.get_attr("illegal_action_penalty", indices=[1]) == [7.0]
    env.reset()
    illegal = int(np.flatnonzero(env.action_masks()[0] == 0)[0])
    env.step_async(np.array([illegal, 0, 0, 0]))
    _, rewards, _, _ = env.step_wait()
    assert rewards[0] == -7.0 and env.vector.infos["illegal"][0, 0]
    with pytest.raises(AttributeError, match="cannot set 'num_envs': only 'illegal_action_penalty'"):
        env.set_attr("num_envs", 99)
    with pytest.raises(ValueError, match=r"every sub-env together .* got \[0\]"):
        env.set_attr("illegal_action_penalty", 1.0, indices=[0])
    with pytest.raises(ValueError, match="illegal_action_penalty"):
        env.set_attr("illegal_action_penalty", float("nan"))
    assert env.num_envs == 4 and env.vector.illegal_action_penalty == 7.0
    with pytest.raises(AttributeError, match="'NertzSB3VecEnv' object has no attribute '_no_such_attribute'"):
        env.get_attr("_no_such_attribute")


def test_actions_are_one_per_sub_env_and_observations_int8_by_name():
    """``step_async`` takes ``(num_envs,)`` or ``(num_envs, 1)`` (it used to reshape any array of the
    right size, ``(2, 2)`` too); ``observation_dtype`` is refused unless ``'int8'``, by name."""
    env = NertzSB3VecEnv(num_games=2, num_players=2, seed=0)
    env.reset()
    with pytest.raises(ValueError, match=r"shaped \(4,\) or \(4, 1\), got shape \(2, 2\)"):
        env.step_async(np.zeros((2, 2), np.int64))
    env.step_async(np.zeros((4, 1), np.int64))
    assert env.step_wait()[0].shape == (4, env.vector.obs_dim)
    with pytest.raises(ValueError, match="invalid observation_dtype='float32': NertzSB3VecEnv gives int8"):
        NertzSB3VecEnv(num_games=2, num_players=2, observation_dtype="float32")
    assert NertzSB3VecEnv(num_games=2, num_players=2, observation_dtype="int8").observation_space.dtype == np.int8
