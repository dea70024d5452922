"""Random actions and the mask in the native TorchRL env: every illegal action is flagged in
``("agents", "illegal")`` whatever wraps the env, the bare env's spec carries the mask, and the
recipes the docs give (``ActionMask`` over a wrapped env, a mask-reading policy for collectors)
play only legal moves."""

from __future__ import annotations

import pytest

pytest.importorskip("torchrl", reason="needs torchrl: pip install 'nertz-env[torchrl]'")

import torch  # noqa: E402
from torchrl.envs import ActionMask, Compose, SerialEnv, StepCounter, TransformedEnv  # noqa: E402
from torchrl.envs.utils import check_env_specs  # noqa: E402

from nertz_env.integrations.torchrl import NertzTorchRLEnv  # noqa: E402

KEYS = (("agents", "action"), ("agents", "action_mask"))


def make(**rules):
    return NertzTorchRLEnv(num_envs=4, num_players=2, seed=0, **rules)


def illegal_by_mask(rollout) -> torch.Tensor:
    """Where the action taken is not allowed by the mask the policy saw: ``[..., P]``."""
    taken = torch.gather(rollout["agents", "action_mask"], -1, rollout["agents", "action"].unsqueeze(-1))
    return ~taken.squeeze(-1)


def random_legal(td):
    """The docs' policy for collectors: a uniform legal action, read from the tensordict's mask."""
    mask = td["agents", "action_mask"]
    td["agents", "action"] = torch.multinomial(mask.flatten(0, -2).float(), 1).view(mask.shape[:-1])
    return td


def test_the_illegal_flag_says_which_actions_were_played_as_wait():
    env = make(illegal_action_penalty=0.5)
    check_env_specs(env)
    td = env.reset()
    assert td["agents", "illegal"].shape == (4, 2, 1) and not td["agents", "illegal"].any()
    actions = torch.zeros(4, 2, dtype=torch.long)
    illegal = int((~td["agents", "action_mask"][0, 1]).nonzero()[0])  # a move seat 1 of game 0 cannot make
    actions[0, 1] = illegal
    out = env.step(td.set(("agents", "action"), actions))["next"]
    flags = out["agents", "illegal"].squeeze(-1)
    assert flags.tolist() == [[False, True], [False, False], [False, False], [False, False]]
    assert out["agents", "reward"][0, 1, 0] == -0.5 + out["agents", "reward"][0, 0, 0]  # WAIT both, penalised


def test_wrapped_envs_draw_random_actions_from_a_stale_mask_and_flag_them():
    """What the docs say holds without ``ActionMask``: the bare env plays legal random moves, a
    ``TransformedEnv`` or a ``SerialEnv`` does not, and ``("agents", "illegal")`` marks exactly
    the moves outside the mask."""
    torch.manual_seed(0)
    bare = make().rollout(60, break_when_any_done=False)
    assert not illegal_by_mask(bare).any() and not bare["next", "agents", "illegal"].any()
    for env in (TransformedEnv(make(), StepCounter(25)), SerialEnv(2, lambda: make(max_cycles=25))):
        rollout = env.rollout(60, break_when_any_done=False)
        wrong = illegal_by_mask(rollout)
        assert wrong.any()
        assert torch.equal(rollout["next", "agents", "illegal"].squeeze(-1), wrong)


def test_action_mask_transform_makes_random_actions_legal_when_wrapped():
    env = TransformedEnv(make(), Compose(StepCounter(25), ActionMask(*KEYS)))
    check_env_specs(env)
    torch.manual_seed(1)
    rollout = env.rollout(120, break_when_any_done=False)
    assert rollout["next", "truncated"].sum() >= 16  # StepCounter's resets, out of step with nothing
    assert not illegal_by_mask(rollout).any() and not rollout["next", "agents", "illegal"].any()
    td = env.reset()
    actions = env.rand_action(td)["agents", "action"]
    assert torch.gather(td["agents", "action_mask"], -1, actions.unsqueeze(-1)).all()


def test_collectors_play_legal_moves_with_a_policy_that_reads_the_mask():
    """TorchRL's ``RandomPolicy`` (no policy given) clones the spec's mask once, ``ActionMask`` or
    not; a policy reading ``("agents", "action_mask")`` plays legal moves."""
    from torchrl.collectors import Collector

    torch.manual_seed(2)
    for policy, legal in ((None, False), (random_legal, True)):
        env = TransformedEnv(make(max_cycles=30), ActionMask(*KEYS))
        collector = Collector(env, policy, frames_per_batch=160, total_frames=160)
        batch = next(iter(collector))
        collector.shutdown()
        flags = batch["next", "agents", "illegal"]
        assert torch.equal(flags.squeeze(-1), illegal_by_mask(batch))
        assert bool(flags.any()) is not legal


def test_action_mask_over_a_parallel_env_keeps_random_actions_legal():
    """Over a ``ParallelEnv`` whose workers reset at different steps (their own ``max_cycles``)."""
    from functools import partial

    from torchrl.envs import ParallelEnv

    workers = [partial(NertzTorchRLEnv, num_envs=2, num_players=2, seed=s, max_cycles=c) for s, c in ((0, 5), (1, 50))]
    env = TransformedEnv(ParallelEnv(2, workers), ActionMask(*KEYS))
    try:
        torch.manual_seed(3)
        rollout = env.rollout(30, break_when_any_done=False)
    finally:
        env.close()
    assert rollout["next", "done"][0].sum() == 12 and rollout["next", "done"][1].sum() == 0
    assert not illegal_by_mask(rollout).any() and not rollout["next", "agents", "illegal"].any()
