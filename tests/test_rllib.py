"""The RLlib integration: the env under RLlib's multi-agent conventions, one short shared-policy PPO
run on a local Ray instance with two env runners, and its checkpoint playing as an agent.

Runs only where Ray RLlib is installed (``pip install 'nertz-env[rllib]'``, in a venv of its own).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("ray.rllib")

import ray  # noqa: E402
from ray.rllib.utils.pre_checks.env import check_multiagent_environments  # noqa: E402

import nertz_env.agents.rllib_policy  # noqa: E402, F401  (registers "rllib")
from nertz_env import (  # noqa: E402
    NertzConfig,
    agents,  # noqa: E402
    nertz_v0,
)
from nertz_env.integrations import rllib as nertz_rllib  # noqa: E402
from nertz_env.training import train_rllib  # noqa: E402


def play_adapter(env, seed):
    """Random legal play through the adapter; every tick's dicts, checked against RLlib's rules."""
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    space = env.get_observation_space("player_0")
    ticks = 0
    while True:
        assert set(obs) == set(env.agents) == set(env.possible_agents)  # simultaneous: everyone acts (R3)
        assert all(space.contains(o) for o in obs.values())
        actions = {a: int(rng.choice(np.flatnonzero(o["action_mask"]))) for a, o in obs.items()}
        obs, rewards, terms, truncs, infos = env.step(actions)
        ticks += 1
        assert set(rewards) == set(env.possible_agents)
        assert set(terms) == set(truncs) == {*env.possible_agents, "__all__"}
        flags = {terms[a] or truncs[a] for a in env.possible_agents}
        assert len(flags) == 1, "all agents end in the same tick (R5)"
        if flags.pop():
            assert terms["__all__"] or truncs["__all__"]
            assert env.agents == []
            return ticks, infos
        assert not terms["__all__"] and not truncs["__all__"]


def test_adapter_follows_rllib_multi_agent_conventions():
    env = nertz_rllib.make_env({"num_players": 3, "reward": "relative"})
    check_multiagent_environments(env)
    space = env.get_observation_space("player_1")
    assert set(space.spaces) == {"observations", "action_mask"}  # the action-masking RLModule's keys
    assert space["action_mask"].shape == (len(env.par_env.action_names),)
    assert space["observations"].shape == (env.par_env.observation_layout.size,)
    ticks, infos = play_adapter(env, seed=4)
    assert nertz_v0.END_REASONS[infos["player_0"]["end_reason"]] in ("call", "stall", "max_cycles")

    short = nertz_rllib.make_env({"num_players": 2, "max_cycles": 5})  # R5: truncation at max_cycles
    ticks, infos = play_adapter(short, seed=0)
    assert ticks == 5 and nertz_v0.END_REASONS[infos["player_1"]["end_reason"]] == "max_cycles"


def test_config_options_reach_the_env():
    config = NertzConfig(num_players=2, stock_draw=1)
    env = nertz_rllib.make_env(nertz_rllib.env_options(config=config))
    assert env.config == config
    with pytest.raises(ValueError, match="unknown option"):
        nertz_rllib.ppo_config(num_env_runners=0, no_such_rule=1)


def test_train_checkpoint_and_play_as_agent(tmp_path, capsys):
    """One short iteration through the training script (two env runners), its checkpoint as an
    agent in the evaluation harness and at a strict table."""
    config = NertzConfig(num_players=2)
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)  # never a running cluster
    try:
        checkpoint = train_rllib.main([
            "--iterations", "1", "--num-env-runners", "2", "--num-players", "2", "--reward", "dense",
            "--train-batch-size", "256", "--minibatch-size", "128", "--num-epochs", "1", "--hidden", "32",
            "--checkpoint-dir", str(tmp_path), "--eval-deals", "1",
        ])
    finally:
        ray.shutdown()
    out = capsys.readouterr().out
    assert "iter    1  ticks     256" in out and "env steps/s" in out and "loss" in out
    assert "rllib" in out and "greedy" in out  # the harness's table
    assert checkpoint == tmp_path
    assert NertzConfig(**json.loads((tmp_path / "nertz_config.json").read_text())) == config

    assert nertz_rllib.module_path(tmp_path).name == nertz_rllib.POLICY_ID
    player = agents.make("rllib", path=tmp_path, config=config)
    opponent = agents.make("greedy", config=config)
    env = nertz_v0.parallel_env(config=config.replace(max_cycles=300), strict=True)  # strict: illegal raises
    for seed in range(3):
        obs, _ = env.reset(seed=seed)
        seats = [player, opponent] if seed % 2 == 0 else [opponent, player]
        while env.agents:
            actions = {a: seats[i].act(obs[a]) for i, a in enumerate(env.agents)}
            for a, act in actions.items():
                assert obs[a]["action_mask"][act] == 1
            obs, _, _, _, infos = env.step(actions)
        assert nertz_v0.END_REASONS[infos["player_0"]["end_reason"]] in ("call", "stall", "max_cycles")

    rows = np.stack([obs["player_0"]["observation"], obs["player_1"]["observation"]])
    masks = np.zeros((2, len(env.action_names)), np.int8)
    masks[:, env.action_index("wait")] = 1
    masks[1, env.action_index("draw")] = 1
    assert set(player.act_batch(rows, masks)[:1]) == {env.action_index("wait")}  # only WAIT legal

    with pytest.raises(ValueError, match="trained for observations"):
        agents.make("rllib", path=tmp_path, config=NertzConfig(num_players=3))
