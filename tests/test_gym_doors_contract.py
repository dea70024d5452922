"""The Gymnasium doors as other libraries open them: an unknown keyword is the ``TypeError``
Python's own is (TorchRL's ``GymEnv`` drops ``frameskip`` on it), the batched env carries
``autoreset_mode`` as an attribute (TorchRL's ``GymWrapper`` reads it), its info masks are int8
(Gymnasium's ``Discrete.sample``) and its infos hold the single-seat env's keys."""

from __future__ import annotations

import numpy as np
import pytest

from nertz_env.config import NertzConfig
from nertz_env.config_values import UnknownOptionError
from nertz_env.vector import sample_legal

KEYS = ("action_mask", "score", "illegal_action", "end_reason", "seat")


def test_an_unknown_option_is_a_type_and_a_value_error_in_python_s_words():
    import gymnasium

    with pytest.raises(UnknownOptionError) as err:
        NertzConfig.from_kwargs(num_players=2, frameskip=4, zzz=1)
    assert isinstance(err.value, TypeError) and isinstance(err.value, ValueError)
    said = str(err.value)
    assert said.startswith("unknown option(s) frameskip, zzz; known options: aces_to_work, ")
    assert "unexpected keyword argument 'frameskip'" in said and "unexpected keyword argument 'zzz'" in said
    with pytest.raises(TypeError, match="unexpected keyword argument 'frameskip'"):
        gymnasium.make("nertz_env/NertzSingle-v0", opponents=["random"], num_players=2, frameskip=4)
    with pytest.raises(ValueError, match=r"unknown option\(s\) frameskip"):
        gymnasium.make_vec("nertz_env/NertzSingle-v0", num_envs=2, opponents=["random"], frameskip=4)


def test_the_batched_env_says_its_autoreset_mode_as_an_attribute():
    import gymnasium
    from gymnasium.vector import AutoresetMode

    env = gymnasium.make_vec("nertz_env/NertzSingle-v0", num_envs=2, opponents=["random"], num_players=2)
    assert env.autoreset_mode is AutoresetMode.SAME_STEP is env.metadata["autoreset_mode"]


def test_info_masks_are_int8_and_gymnasium_samples_legal_actions_from_them():
    """``Discrete.sample(mask=...)`` asserts an int8 mask (bool ones failed); ``action_masks()``
    stays bool, as sb3-contrib reads it."""
    import gymnasium

    env = gymnasium.make_vec("nertz_env/NertzSingle-v0", num_envs=4, opponents=["random"], num_players=2)
    _, infos = env.reset(seed=2)
    env.action_space.seed(2)
    for _ in range(30):
        masks = infos["action_mask"]
        assert masks.dtype == np.int8 and np.array_equal(masks, env.unwrapped.action_masks())
        assert env.unwrapped.action_masks().dtype == np.bool_
        actions = env.action_space.sample(mask=tuple(masks))
        assert masks[np.arange(4), actions].all()
        _, _, _, _, infos = env.step(actions)
        assert not infos["illegal_action"].any()


def test_step_infos_hold_the_single_seat_env_keys_as_sync_mode_does():
    """``score``, ``illegal_action``, ``end_reason`` and ``seat`` at every row, with the dtypes
    ``vectorization_mode="sync"`` gives them; an ended row's are the new hand's (SAME_STEP), the
    ended hand's ``illegal_action`` and ``seat`` in ``final_info``."""
    import gymnasium

    make = lambda mode: gymnasium.make_vec("nertz_env/NertzSingle-v0", num_envs=3, vectorization_mode=mode,
                                           opponents=["random"], num_players=2, seat=1, max_cycles=3)  # fmt: skip
    env, sync = make("vector_entry_point"), make("sync")
    _, infos = env.reset(seed=0)
    _, sync_infos = sync.reset(seed=0)
    for key in KEYS[1:]:
        assert infos[key].dtype == sync_infos[key].dtype and infos[f"_{key}"].all(), key
    table = env.unwrapped.vector
    assert infos["seat"].tolist() == [1, 1, 1] and np.array_equal(infos["score"], table.scores[:, 1])
    for t in range(3):
        actions = sample_legal(infos["action_mask"], t)
        if t >= 1:  # an illegal move (WAIT played) in row 2: a foundation move while none is legal
            actions[2] = int(np.flatnonzero(infos["action_mask"][2] == 0)[0])
        _, _, terminations, truncations, infos = env.step(actions)
        assert not infos["end_reason"].any() and np.array_equal(infos["score"], table.scores[:, 1])
        if t == 1:
            assert infos["illegal_action"].tolist() == [False, False, True]
    assert truncations.all()  # max_cycles: every hand ended at the third step and was dealt again
    assert not infos["illegal_action"].any()  # the new hands' flags, as a reset's
    final = infos["final_info"]
    assert final["illegal_action"].tolist() == [False, False, True] and final["_illegal_action"].all()
    assert final["seat"].tolist() == [1, 1, 1] and final["end_reason"].tolist() == [3, 3, 3]


def test_observation_wrappers_take_the_sync_vector_env():
    """Gymnasium's vector observation wrappers refuse SAME_STEP autoreset (an ``AssertionError``
    before Gymnasium 1.3, a ``ValueError`` naming ``autoreset_mode`` since); the recipe the docs
    give, ``vectorization_mode="sync"``, works."""
    import gymnasium
    from gymnasium.vector import AutoresetMode
    from gymnasium.wrappers.vector import NormalizeObservation

    options = dict(num_envs=2, opponents=["random"], num_players=2, observation_dtype="float32")
    same_step = gymnasium.make_vec("nertz_env/NertzSingle-v0", **options)
    assert same_step.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    with pytest.raises((ValueError, AssertionError)) as refusal:
        NormalizeObservation(same_step)
    assert refusal.type is AssertionError or "autoreset_mode" in str(refusal.value)
    env = NormalizeObservation(gymnasium.make_vec("nertz_env/NertzSingle-v0", vectorization_mode="sync", **options))
    obs, _ = env.reset(seed=0)
    obs, *_ = env.step(sample_legal(np.stack(env.unwrapped.call("action_masks")), 0))
    assert obs.shape == (2, env.single_observation_space.shape[0]) and np.isfinite(obs).all()


def test_torchrl_gym_env_opens_the_single_seat_env():
    """TorchRL passes ``frameskip`` and drops it on Python's unknown-keyword ``TypeError``."""
    pytest.importorskip("torchrl", reason="needs torchrl: pip install 'nertz-env[torchrl]'")
    from torchrl.envs import GymEnv
    from torchrl.envs.utils import check_env_specs

    env = GymEnv("nertz_env/NertzSingle-v0", opponents=["random"], num_players=2, max_cycles=8)
    check_env_specs(env)
    rollout = env.rollout(20, break_when_any_done=False)
    assert int(rollout["next", "done"].sum()) == 2


def test_torchrl_gym_wrapper_takes_the_batched_env_and_keeps_final_observations():
    pytest.importorskip("torchrl", reason="needs torchrl: pip install 'nertz-env[torchrl]'")
    import gymnasium
    import torch
    from torchrl.envs import GymWrapper
    from torchrl.envs.utils import check_env_specs

    env = GymWrapper(gymnasium.make_vec("nertz_env/NertzSingle-v0", num_envs=3, opponents=["random"],
                                        num_players=2, max_cycles=8))  # fmt: skip
    check_env_specs(env)
    torch.manual_seed(0)
    rollout = env.rollout(20, break_when_any_done=False)
    done = rollout["next", "done"].squeeze(-1)
    assert int(done.sum()) == 6
    g, t = (int(x) for x in done.nonzero()[0])
    assert not (rollout["next", "observation"][g, t] == rollout["observation"][g, t + 1]).all()  # the final obs
