"""Every env door takes the rules as one ``NertzConfig`` (``config=``) in place of the rule options,
as ``nertz_v0``'s envs do: the same config gives the same game as the same options, byte for byte,
and a config beside rule options, or a config that is not a ``NertzConfig``, is refused."""

from __future__ import annotations

import importlib.util

import gymnasium
import numpy as np
import pytest

from nertz_env import nertz_v0, tasks
from nertz_env.config import NertzConfig
from nertz_env.gym_vector import NertzGymVectorEnv
from nertz_env.vector import NertzVectorEnv

# Not the defaults in anything a door could fill in itself: players, the draw (R4.1), a preset's rules.
OPTIONS = {"num_players": 3, "stock_draw": 1, "nertz_penalty": 1}
CONFIG = NertzConfig(**OPTIONS)


def _first_observations(door: str, **rules):
    """The door built from ``rules`` (the options or ``config=``), its rules and first observations."""
    if door == "vector":
        env = NertzVectorEnv(2, seed=5, **rules)
        return env.config, env.reset()[0]
    if door == "gym_vector":
        env = NertzGymVectorEnv(2, None, seed=5, **rules)
        return env.vector.config, env.reset()[0]
    if door == "make_vec":
        env = gymnasium.make_vec("nertz_env/NertzSingle-v0", num_envs=2, opponents=["greedy"] * 2, seed=5, **rules)
        return env.vector.config, env.reset()[0]
    if door == "single":
        env = gymnasium.make("nertz_env/NertzSingle-v0", opponents=["greedy"] * 2, **rules)
        return env.unwrapped.config, env.reset(seed=5)[0]
    if door == "sb3":
        from nertz_env.sb3 import NertzSB3VecEnv

        env = NertzSB3VecEnv(2, seed=5, **rules)
        return env.vector.config, env.reset()
    from nertz_env.integrations.torchrl import NertzTorchRLEnv

    env = NertzTorchRLEnv(2, seed=5, **rules)
    return env.vector.config, env.reset()["agents", "observation"].numpy()


def _skip_without_extra(door: str) -> None:
    extra = {"sb3": ("stable_baselines3", "training"), "torchrl": ("torchrl", "torchrl")}.get(door)
    if extra and importlib.util.find_spec(extra[0]) is None:
        pytest.skip(f"needs {extra[0]}: pip install 'nertz-env[{extra[1]}]'")


DOORS = ["vector", "gym_vector", "make_vec", "single", "sb3", "torchrl"]


@pytest.mark.parametrize("door", DOORS)
def test_a_config_gives_the_game_its_options_give(door):
    _skip_without_extra(door)
    by_options, by_config = _first_observations(door, **OPTIONS), _first_observations(door, config=CONFIG)
    assert by_options[0] == by_config[0] == CONFIG
    assert np.array_equal(by_options[1], by_config[1])
    # the first observations are three players' (R1) under a one-card draw (R4.1): not the defaults'
    assert by_config[1].shape[-1] == nertz_v0.parallel_env(config=CONFIG).observation_layout.size


@pytest.mark.parametrize("door", DOORS)
def test_a_config_beside_rule_options_or_of_another_type_is_refused(door):
    _skip_without_extra(door)
    with pytest.raises(ValueError, match=r"pass either config=NertzConfig\(...\) or rule options, not both"):
        _first_observations(door, config=CONFIG, stock_draw=3)
    with pytest.raises(TypeError, match=r"invalid config=\{'num_players': 3\}: accepted None or a NertzConfig"):
        _first_observations(door, config={"num_players": 3})


def test_a_tasks_config_builds_the_batched_env():
    task = tasks.get("nertz-2p")
    env = NertzVectorEnv(4, config=task.config)
    assert env.config == task.config and env.num_players == 2
    assert NertzVectorEnv(4, **task.rules).config == task.config
