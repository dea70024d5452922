"""Results do not depend on the batch size: every agent with chance draws for a decision from its
seed and the decision's key (hand, seat, tick), never from which tables share a batch; nor on the
vector env's threads."""

from __future__ import annotations

import numpy as np
import pytest

from nertz_env import NertzConfig, agents
from nertz_env.game import Game
from nertz_env.training.evaluate import evaluate
from nertz_env.vector import NertzVectorEnv


def summaries(lineup, batch_size):
    result = evaluate(lineup, hands=12, seed=3, batch_size=batch_size, progress=False)
    return [{k: v for k, v in row.items() if k not in ("mu", "sigma")} for row in result["summary"]]


def test_random_agents_give_the_same_result_for_any_batch_size():
    lineup = ["random", "greedy", "random", "heuristic"]
    assert summaries(lineup, 64) == summaries(lineup, 7) == summaries(lineup, 1)


def test_a_sampling_policy_gives_the_same_result_for_any_batch_size(tmp_path):
    torch = pytest.importorskip("torch", reason="needs torch: pip install 'nertz-env[training]'")
    from nertz_env.agents.policy import build_scorer, save_policy

    cfg = NertzConfig()
    net = build_scorer(cfg, (16,), 8)
    torch.nn.init.normal_(net.move_out.weight, std=0.5)
    save_policy(tmp_path / "p.pt", net, cfg, (16,), action_hidden=8)

    def lineup():
        return [agents.make("policy", path=str(tmp_path / "p.pt"), greedy=False, seed=4), "random", "greedy", "random"]

    assert summaries(lineup(), 48) == summaries(lineup(), 5)


def test_keys_make_a_row_independent_of_its_batch():
    agent = agents.make("random", seed=9)
    game = Game(NertzConfig())
    game.reset(seed=0)
    obs, masks = np.repeat(game.obs[:1], 6, axis=0), np.repeat(game.masks[:1], 6, axis=0)  # one decision, 6 times
    keys = np.arange(6, dtype=np.uint64) * 977
    whole = agent.act_batch(obs, masks, keys=keys)
    parts = np.concatenate([agent.act_batch(obs[i : i + 1], masks[i : i + 1], keys=keys[i : i + 1]) for i in range(6)])
    assert (whole == parts).all() and len(set(whole.tolist())) > 1


@pytest.mark.parametrize("rules", [{"max_cycles": 100},
                                   {"num_players": 3, "episode": "match", "target_score": 5, "max_cycles": 25,
                                    "max_hands": 3}])  # fmt: skip
def test_threads_give_the_same_games(rules):
    """Every buffer the step writes, the episode's and hand's records in ``infos`` included (before,
    numba's parfor pass dropped ``_settle``'s stores when inlined into the threaded loop, and
    ``num_threads=2`` never reported an episode's end: ``done`` stayed False)."""
    runs, ended = [], 0
    for threads in (1, 2):
        env = NertzVectorEnv(16, seed=3, num_threads=threads, **rules)
        obs, masks = env.reset()
        seen = [obs.copy(), masks.copy()]
        for _ in range(250):
            env.step(env.sample_actions())
            seen += [getattr(env.buffers, name).copy() for name in env.buffers._fields]
            ended += int(env.buffers.done.sum())
        runs.append(seen)
    assert ended > 16 and len(runs[0]) == len(runs[1])
    assert all(a.shape == b.shape and (a == b).all() for a, b in zip(*runs))
