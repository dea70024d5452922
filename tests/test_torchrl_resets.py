"""The native TorchRL env honours a ``"_reset"`` on any games, as TorchRL's batched envs must:
TorchRL's time limits (``StepCounter``, the collectors' ``max_frames_per_traj``) truncate games
out of step with one another, and the games not reset are left as they were."""

from __future__ import annotations

import numpy as np
import pytest

from nertz_env.vector import sample_legal

pytest.importorskip("torchrl", reason="needs torchrl: pip install 'nertz-env[torchrl]'")

import torch  # noqa: E402
from torchrl.envs import StepCounter, TransformedEnv  # noqa: E402

from nertz_env.integrations.torchrl import NertzTorchRLEnv  # noqa: E402


def legal_policy(td):
    """A random legal action for every seat, drawn from the tensordict's masks (a seeded draw)."""
    masks = td["agents", "action_mask"].numpy()
    td["agents", "action"] = torch.from_numpy(sample_legal(masks, int(masks.sum()) % 1000))
    return td


def played(env, td, ticks: int):
    for _ in range(ticks):
        _, td = env.step_and_maybe_reset(legal_policy(td))
    return td


def reset_some(env, td, games: list[bool]):
    return env.reset(td.clone().set("_reset", torch.tensor(games).reshape(-1, 1)))


def test_a_time_limit_truncates_games_out_of_step():
    """``StepCounter(max_steps)`` over games whose counters are out of phase (one was reset alone):
    each game is cut off after its own ``max_steps`` steps (the env raised here before)."""
    env = TransformedEnv(NertzTorchRLEnv(num_envs=4, num_players=2, seed=0), StepCounter(max_steps=10))
    td = played(env, env.reset(), 4)
    td = reset_some(env, td, [True, False, False, False])
    rollout = env.rollout(40, legal_policy, auto_reset=False, tensordict=td, break_when_any_done=False)
    truncated = rollout["next", "truncated"].squeeze(-1)
    assert truncated.sum(1).tolist() == [4, 4, 4, 4]
    assert truncated[0].nonzero().squeeze(-1).tolist() == [9, 19, 29, 39]  # 10 steps from its reset
    assert truncated[1].nonzero().squeeze(-1).tolist() == [5, 15, 25, 35]  # 4 played before
    assert (rollout["next", "step_count"] <= 10).all()
    assert not rollout["next", "terminated"].any()
    masks, actions = rollout["agents", "action_mask"], rollout["agents", "action"]
    assert torch.gather(masks, -1, actions.unsqueeze(-1)).all()


def test_games_not_reset_are_untouched():
    env = NertzTorchRLEnv(num_envs=4, num_players=2, seed=1)
    td = played(env, env.reset(), 6)
    table = {k: v.copy() for k, v in env.vector.state._asdict().items()}
    after = reset_some(env, td, [False, True, False, True])
    kept = [0, 2]
    for key in ("observation", "action_mask"):
        assert torch.equal(after["agents", key][kept], td["agents", key][kept])
    assert torch.equal(after["state"][kept], td["state"][kept])
    for key, before in table.items():
        assert np.array_equal(getattr(env.vector.state, key)[kept], before[kept]), key
    assert env.vector.ticks.tolist() == [6, 0, 6, 0]
    assert not torch.equal(after["agents", "observation"][1], td["agents", "observation"][1])
    assert not after["done"].any()
    played(env, after, 1)  # every game plays on
    assert env.vector.ticks.tolist() == [7, 1, 7, 1]


def test_the_same_seed_and_resets_give_the_same_rollout():
    runs = []
    for _ in range(2):
        env = TransformedEnv(NertzTorchRLEnv(num_envs=3, num_players=3, seed=4, max_cycles=15), StepCounter(9))
        env.set_seed(8)
        td = played(env, env.reset(), 5)
        td = reset_some(env, td, [False, True, False])
        runs.append(env.rollout(30, legal_policy, auto_reset=False, tensordict=td, break_when_any_done=False))
    assert runs[0]["next", "done"].any()
    assert (runs[0] == runs[1]).all()
