"""Each RL library runs the env through its own entry point, with no glue, and samples only legal
actions (R4): TorchRL (its PettingZoo wrapper and the native batched env), Tianshou, SuperSuit with
sb3-contrib's MaskablePPO, SB3's make_vec_env, Gymnasium's make_vec, and AgileRL when installed.
Every library is optional: its tests skip, naming the extra, when it is absent."""

from __future__ import annotations

import numpy as np
import pytest

from nertz_env import nertz_v0
from nertz_env.vector import NertzVectorEnv, sample_legal


def legal_taken(masks, actions) -> bool:
    """Every action (``[...]``) is allowed by its mask (``[..., N]``)."""
    masks, actions = np.asarray(masks).astype(bool), np.asarray(actions)
    return bool(np.take_along_axis(masks, actions[..., None], axis=-1).all())


def test_vector_states_are_the_parallel_env_state():
    """``NertzVectorEnv.states()`` row 0 is ``nertz_v0``'s ``state()`` of the same hand (the
    TorchRL env's ``"state"``)."""
    env = nertz_v0.parallel_env(num_players=3, nertz_builds=True)
    venv = NertzVectorEnv(2, 3, seed=11, nertz_builds=True)
    env.reset(seed=11)
    venv.reset()
    for t in range(60):
        assert np.array_equal(venv.states()[0], env.state())
        actions = sample_legal(venv.action_masks, t)
        env.step({a: int(actions[0, p]) for p, a in enumerate(env.agents)})
        venv.step(actions)
    with pytest.raises(ValueError, match=r"out must be a contiguous int8 array shaped \(2, "):
        venv.states(np.zeros((2, 3), np.int8))


# -- TorchRL ----------------------------------------------------------------------------------


def test_torchrl_pettingzoo_wrapper_rollout_is_legal_and_stacks_infos():
    pytest.importorskip("torchrl", reason="needs torchrl: pip install 'nertz-env[torchrl]'")
    from torchrl.envs.libs.pettingzoo import PettingZooWrapper

    par = nertz_v0.parallel_env(num_players=2, max_cycles=30, observation_dtype="float32")
    env = PettingZooWrapper(par, use_mask=True, seed=0)
    rollout = env.rollout(80, break_when_any_done=False)  # random actions from the masked spec
    group = rollout["player"]
    assert group["observation"].dtype.is_floating_point
    assert legal_taken(group["action_mask"].numpy(), group["action"].numpy())
    assert rollout["next", "done"].sum() >= 2  # hands ended and were dealt again
    info = rollout["next", "player", "info"]
    assert not info["illegal_action"].any()
    assert set(info.keys()) >= {"score", "end_reason", "final_score"}


def test_torchrl_native_env_specs_rollout_and_resets():
    pytest.importorskip("torchrl", reason="needs torchrl: pip install 'nertz-env[torchrl]'")
    from torchrl.envs.utils import check_env_specs

    from nertz_env.integrations.torchrl import NertzTorchRLEnv

    env = NertzTorchRLEnv(num_envs=6, num_players=3, seed=0, max_cycles=25)
    check_env_specs(env)
    env.set_seed(3)
    rollout = env.rollout(60, break_when_any_done=False)
    agents = rollout["agents"]
    assert legal_taken(agents["action_mask"].numpy(), agents["action"].numpy())
    assert agents["observation"].shape == (6, 60, 3, env.vector.obs_dim)
    assert rollout["state"].shape == (6, 60, env.vector.layout.state_size)
    done = rollout["next", "done"].squeeze(-1)
    assert done.sum() >= 12  # every game ran past max_cycles twice
    # A hand that ended shows its last observation in "next"; the reset then deals the new hand.
    g, t = (int(x) for x in done.nonzero()[0])
    assert rollout["next", "agents", "action_mask"][g, t, :, 0].all()  # WAIT only
    assert not rollout["next", "agents", "action_mask"][g, t, :, 1:].any()
    assert not torch_equal(rollout["next", "agents", "observation"][g, t], agents["observation"][g, t + 1])
    assert not torch_equal(rollout["next", "state"][g, t], rollout["state"][g, t + 1])


def torch_equal(a, b) -> bool:
    return bool((a == b).all())


def test_torchrl_native_env_plays_the_vector_env_game():
    """The same seed and actions give the vector env's observations, states, rewards and ends."""
    pytest.importorskip("torchrl", reason="needs torchrl: pip install 'nertz-env[torchrl]'")
    import torch

    from nertz_env.integrations.torchrl import NertzTorchRLEnv

    env = NertzTorchRLEnv(num_envs=4, num_players=2, seed=7, observation_dtype="int8", max_cycles=20)
    twin = NertzVectorEnv(4, 2, seed=7, max_cycles=20)
    td = env.reset()
    obs, masks = twin.reset()
    for t in range(45):
        assert np.array_equal(td["agents", "observation"].numpy(), obs)
        assert np.array_equal(td["state"].numpy(), twin.states())
        actions = sample_legal(masks, t)
        td["agents", "action"] = torch.from_numpy(actions)
        td_next, td = env.step_and_maybe_reset(td)
        obs, masks, rewards, terminated, truncated, infos = twin.step(actions)
        assert np.array_equal(td_next["next", "agents", "reward"].squeeze(-1).numpy(), rewards)
        assert np.array_equal(td_next["next", "agents", "truncated"].squeeze(-1).numpy(), truncated)
        ended = infos["episode"]["done"]
        assert np.array_equal(td_next["next", "done"].squeeze(-1).numpy(), ended)
        final = td_next["next", "agents", "observation"].numpy()[ended]
        assert np.array_equal(final, infos["final_observation"][ended])
        # the cut-off hand's last table (a critic bootstraps a truncation from it), not zeros
        final_state = td_next["next", "state"].numpy()[ended]
        assert np.array_equal(final_state, infos["final_state"][ended]) and (final_state != 0).any(axis=1).all()


def test_torchrl_native_env_refuses_steps_it_cannot_play_and_bad_seeds():
    """A game whose hand ended is stepped only after its reset, every game steps together (no
    partial ``_step``), the action must be there, and ``set_seed`` checks the seed it keeps."""
    pytest.importorskip("torchrl", reason="needs torchrl: pip install 'nertz-env[torchrl]'")
    import torch

    from nertz_env.integrations.torchrl import NertzTorchRLEnv

    env = NertzTorchRLEnv(num_envs=3, num_players=2, seed=0, max_cycles=2)
    td = env.reset()
    with pytest.raises(KeyError, match=r"\('agents', 'action'\)"):
        env.step(td.clone())  # was an AttributeError on None
    waits = torch.zeros(3, 2, dtype=torch.long)
    partial = td.clone().set(("agents", "action"), waits).set("_step", torch.tensor([True, False, False]))
    with pytest.raises(RuntimeError, match="partial steps"):
        env.step(partial)  # stepped all three games
    assert env.vector.ticks.tolist() == [0, 0, 0]
    for _ in range(2):
        td = env.step(td.set(("agents", "action"), waits))["next"].clone()
    assert td["done"].all()
    with pytest.raises(RuntimeError, match=r"games \[0, 1, 2\] ended"):
        env.step(td.set(("agents", "action"), waits))  # played the new deal unseen
    td = env.reset(td.set("_reset", torch.tensor([[True], [False], [False]])))
    with pytest.raises(RuntimeError, match=r"games \[1, 2\] ended"):
        env.step(td.set(("agents", "action"), waits))
    td = env.reset()
    env.step(td.set(("agents", "action"), waits))  # after a reset it plays on
    for seed in (-1, 1.5, True, 2**200, "3"):
        with pytest.raises((TypeError, ValueError), match="seed"):
            env.set_seed(seed)
        env.reset()  # the refused seed was not kept
    with pytest.raises(TypeError, match="include_state"):
        NertzTorchRLEnv(num_envs=2, include_state="no")


# -- Tianshou ---------------------------------------------------------------------------------


def test_tianshou_collector_with_masked_random_policies_is_legal():
    pytest.importorskip("tianshou", reason="needs tianshou: pip install 'nertz-env[tianshou]'")
    from tianshou.algorithm.multiagent.marl import MultiAgentPolicy
    from tianshou.algorithm.random import MARLRandomDiscreteMaskedOffPolicyAlgorithm
    from tianshou.data import Collector, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv, PettingZooEnv

    def make():
        return PettingZooEnv(nertz_v0.env(num_players=2, max_cycles=40))

    first = make()
    policy = MultiAgentPolicy(
        {a: MARLRandomDiscreteMaskedOffPolicyAlgorithm(first.action_space).policy for a in first.agents}
    )
    envs = DummyVectorEnv([make, make])
    envs.seed(0)
    buffer = VectorReplayBuffer(1000, 2)
    collector = Collector(policy, envs, buffer)
    collector.reset()
    stats = collector.collect(n_step=200)
    assert stats.n_collected_episodes >= 2
    batch = buffer.sample(0)[0]
    assert legal_taken(batch.obs.mask, batch.act)
    assert not np.asarray(batch.info.illegal_action).any()


# -- SuperSuit and Stable-Baselines3 ----------------------------------------------------------


def test_supersuit_masked_vec_env_trains_maskable_ppo_with_legal_actions():
    ss = pytest.importorskip("supersuit", reason="needs supersuit: pip install 'nertz-env[supersuit]'")
    sb3_contrib = pytest.importorskip("sb3_contrib", reason="needs sb3-contrib: pip install 'nertz-env[training]'")
    from nertz_env.integrations.supersuit import MaskedVecEnv

    par = nertz_v0.parallel_env(num_players=2, max_cycles=50)
    venv = MaskedVecEnv(ss.concat_vec_envs_v1(ss.pettingzoo_env_to_vec_env_v1(par), 2, base_class="stable_baselines3"))
    assert venv.num_envs == 4 and venv.observation_space == par.observation_space("player_0")["observation"]
    checked, flags, step_async, step_wait = [], [], venv.step_async, venv.step_wait

    def async_watched(actions):
        checked.append(legal_taken(venv.action_masks(), actions))
        step_async(actions)

    def wait_watched():
        out = step_wait()
        flags.extend(info["illegal_action"] for info in out[3])
        return out

    venv.step_async, venv.step_wait = async_watched, wait_watched
    model = sb3_contrib.MaskablePPO("MlpPolicy", venv, n_steps=32, batch_size=64, n_epochs=1, seed=0,
                                    policy_kwargs={"net_arch": [32]})  # fmt: skip
    model.learn(256)
    assert len(checked) == 64 and all(checked)
    assert len(flags) == 256 and not any(flags)
    obs = venv.reset()
    actions, _ = model.predict(obs, action_masks=venv.action_masks())
    assert legal_taken(venv.action_masks(), actions)


def test_masked_vec_env_checks_seeds_and_actions_before_supersuit_casts_them():
    ss = pytest.importorskip("supersuit", reason="needs supersuit: pip install 'nertz-env[supersuit]'")
    from nertz_env.integrations.supersuit import MaskedVecEnv

    par = nertz_v0.parallel_env(num_players=2, max_cycles=20)
    venv = MaskedVecEnv(ss.concat_vec_envs_v1(ss.pettingzoo_env_to_vec_env_v1(par), 2, base_class="stable_baselines3"))
    for seed in (True, "3", -1, 1.5):
        with pytest.raises((TypeError, ValueError), match="seed must be"):
            venv.seed(seed)  # True seeded 1, '3' failed inside SuperSuit
    venv.seed(np.int64(4))
    first = venv.reset().copy()
    venv.seed(4)
    assert np.array_equal(venv.reset(), first)
    for bad in (np.ones(4, bool), np.full(4, 0.5)):
        with pytest.raises(TypeError, match="MaskedVecEnv.step must be integers"):
            venv.step(bad)  # True was played as action 1
    with pytest.raises(ValueError, match=r"one action per env, shaped \(4,\)"):
        venv.step(np.zeros(3, np.int64))  # "Output array is the wrong shape"
    venv.step(np.zeros(4, np.int64))


def test_masked_vec_env_refuses_observations_without_masks():
    pytest.importorskip("stable_baselines3", reason="needs stable-baselines3: pip install 'nertz-env[training]'")
    from stable_baselines3.common.env_util import make_vec_env

    from nertz_env.integrations.supersuit import MaskedVecEnv

    with pytest.raises(ValueError, match="'observation' and 'action_mask'"):
        MaskedVecEnv(make_vec_env("CartPole-v1", n_envs=1))


def test_sb3_make_vec_env_of_the_single_seat_env_trains_maskable_ppo():
    sb3_contrib = pytest.importorskip("sb3_contrib", reason="needs sb3-contrib: pip install 'nertz-env[training]'")
    pytest.importorskip("PIL", reason="make_vec_env asks for rgb_array rendering: pip install 'nertz-env[render]'")
    from sb3_contrib.common.maskable.utils import get_action_masks
    from stable_baselines3.common.env_util import make_vec_env

    venv = make_vec_env("nertz_env/NertzSingle-v0", n_envs=2, seed=0,
                        env_kwargs={"opponents": ["random"], "max_cycles": 60})  # fmt: skip
    model = sb3_contrib.MaskablePPO("MlpPolicy", venv, n_steps=32, batch_size=32, n_epochs=1, seed=0,
                                    policy_kwargs={"net_arch": [32]})  # fmt: skip
    model.learn(64)
    obs = venv.reset()
    for _ in range(40):
        masks = get_action_masks(venv)
        actions, _ = model.predict(obs, action_masks=masks)
        assert legal_taken(masks, actions)
        obs, _, _, infos = venv.step(actions)
        assert not any(info["illegal_action"] for info in infos)


# -- Gymnasium ----------------------------------------------------------------------------------


def test_gymnasium_make_vec_reaches_the_batched_env():
    import gymnasium

    from nertz_env.gym_vector import NertzGymVectorEnv

    env = gymnasium.make_vec("nertz_env/NertzSingle-v0", num_envs=6, opponents=["greedy", "random"], max_cycles=40)
    assert isinstance(env, NertzGymVectorEnv) and env.num_envs == 6
    obs, infos = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    ended = 0
    for t in range(100):
        actions = sample_legal(infos["action_mask"], t)
        obs, rewards, terms, truncs, infos = env.step(actions)
        assert obs.shape == (6, env.single_observation_space.shape[0]) and rewards.shape == (6,)
        assert infos["_action_mask"].all()  # every info key paired with its mask, as Gymnasium's own
        if "_final_obs" in infos:
            assert np.array_equal(infos["_final_obs"], terms | truncs)
            final = infos["final_info"]  # SAME_STEP: the ended hands' last infos, as SyncVectorEnv gives
            assert np.array_equal(infos["_final_info"], infos["_final_obs"]) and final["_end_reason"].any()
            assert np.array_equal(final["final_score"], infos["final_score"])
            assert set(final["end_reason"][infos["_final_obs"]].tolist()) <= {1, 2, 3}  # call, stall, max_cycles (R5)
            ended += int(infos["_final_obs"].sum())
    assert ended >= 12
    assert not env.vector.infos["illegal"].any()


def test_gym_vector_self_play_exposes_every_seat_and_matches_the_vector_env():
    from nertz_env.gym_vector import NertzGymVectorEnv

    env = NertzGymVectorEnv(num_games=3, num_players=2, seed=5, observation_dtype="float32")
    twin = NertzVectorEnv(3, 2, seed=5)
    obs, infos = env.reset()
    tobs, tmasks = twin.reset()
    assert env.num_envs == 6 and obs.dtype == np.float32
    for t in range(50):
        assert np.array_equal(obs, tobs.reshape(6, -1)) and np.array_equal(infos["action_mask"], tmasks.reshape(6, -1))
        actions = sample_legal(tmasks, t)
        obs, rewards, *_, infos = env.step(actions.reshape(-1))
        tobs, tmasks, trewards, *_ = twin.step(actions)
        assert np.array_equal(rewards, trewards.reshape(-1))
    with pytest.raises(ValueError, match=r"actions must be integers shaped \(6,\)"):
        env.step(np.zeros(5, np.int64))
    with pytest.raises(TypeError, match="opponent of seat 1 must be callable"):
        NertzGymVectorEnv(2, opponents={1: "greedy"}, num_players=2)
    with pytest.raises(ValueError, match="leave at least one seat to learn"):
        NertzGymVectorEnv(2, opponents={0: sample_legal, 1: sample_legal}, num_players=2)


def test_gym_vector_refuses_bad_seeds_options_and_opponent_actions():
    from nertz_env.gym_vector import NertzGymVectorEnv

    env = NertzGymVectorEnv(num_games=2, num_players=2, seed=0)
    obs, _ = env.reset(seed=np.int64(3))  # a numpy integer is a seed, as for every other door
    assert np.array_equal(obs, NertzGymVectorEnv(num_games=2, num_players=2).reset(seed=3)[0])
    for seed in (-1, 1.5, True, 2**200, "3"):
        with pytest.raises((TypeError, ValueError), match="seed must be"):
            env.reset(seed=seed)
    for options in (0, "", [], "ab", {"x": 1}):
        with pytest.raises((TypeError, ValueError), match="takes no options"):
            env.reset(options=options)
    env.reset(options={})
    with pytest.raises(TypeError, match=r"NertzGymVectorEnv.step must be integers"):
        env.step(np.zeros(4, bool))
    for returned in (0.9, True, None):
        opponent = lambda obs, masks, r=returned: np.full(len(obs), r)  # noqa: E731
        env = NertzGymVectorEnv(num_games=2, opponents={1: opponent}, num_players=2, seed=0)
        env.reset()
        with pytest.raises(TypeError, match=r"the opponent of seat\(s\) \[1\] must be integers"):
            env.step(np.zeros(2, np.int64))  # 0.9 and True were cast to 0 and 1
    with pytest.raises(ValueError, match="opponent seat True"):
        NertzGymVectorEnv(2, opponents={True: sample_legal}, num_players=2)


# -- AgileRL -------------------------------------------------------------------------------------


def test_agilerl_ippo_reads_the_mask_from_the_infos():
    """AgileRL wants the mask in the infos and not in the observation: ``info_action_mask="only"``."""
    pytest.importorskip("agilerl", reason="needs agilerl (its own venv): pip install 'nertz-env[agilerl]'")
    from agilerl.algorithms import IPPO

    env = nertz_v0.parallel_env(num_players=2, max_cycles=30, info_action_mask="only", observation_dtype="float32")
    ids = env.possible_agents
    ippo = IPPO(observation_spaces=[env.observation_space(a) for a in ids],
                action_spaces=[env.action_space(a) for a in ids], agent_ids=ids)  # fmt: skip
    obs, infos = env.reset(seed=0)
    ends = 0
    for _ in range(70):
        action, *_ = ippo.get_action(obs=obs, infos=infos)
        actions = {a: int(np.asarray(action[a]).reshape(-1)[0]) for a in env.agents}
        assert all(infos[a]["action_mask"][actions[a]] for a in env.agents)
        obs, _, _, _, infos = env.step(actions)
        assert not any(i["illegal_action"] for i in infos.values())
        if not env.agents:
            ends += 1
            obs, infos = env.reset()
    assert ends >= 2


# -- BenchMARL ---------------------------------------------------------------------------------


def test_benchmarl_mappo_trains_on_the_batched_env_with_masks(tmp_path):
    pytest.importorskip("benchmarl", reason="needs benchmarl (its own venv): pip install 'nertz-env[benchmarl]'")
    from benchmarl.algorithms import MappoConfig
    from benchmarl.experiment import Experiment, ExperimentConfig
    from benchmarl.models.mlp import MlpConfig

    from nertz_env.integrations.benchmarl import nertz_task

    config = ExperimentConfig.get_from_yaml()
    small = dict(max_n_iters=1, max_n_frames=None, on_policy_collected_frames_per_batch=240,
                 on_policy_n_envs_per_worker=4, on_policy_minibatch_size=60, on_policy_n_minibatch_iters=1,
                 evaluation=False, render=False, loggers=[], create_json=False, checkpoint_interval=0,
                 save_folder=str(tmp_path))  # fmt: skip
    for key, value in small.items():
        setattr(config, key, value)
    model = MlpConfig.get_from_yaml()
    model.num_cells = [32]
    experiment = Experiment(task=nertz_task(num_players=2, max_cycles=30), algorithm_config=MappoConfig.get_from_yaml(),
                            model_config=model, critic_model_config=model, seed=0, config=config)  # fmt: skip
    experiment.run()
    assert experiment.n_iters_performed == 1
    rollout = experiment.env_func().rollout(60, policy=experiment.policy, break_when_any_done=False)
    agents = rollout["agents"]
    assert legal_taken(agents["action_mask"].numpy(), agents["action"].numpy())
    assert rollout["next", "done"].any()
