"""``ensemble``: trained policies voting by the mean of their log-probabilities over the legal
moves (``agents.policy.EnsembleAgent``)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="needs torch: pip install 'nertz-env[training]'")

from conftest import mid_hand  # noqa: E402

from nertz_env import NertzConfig, agents  # noqa: E402
from nertz_env.agents.features import ActionFeatures  # noqa: E402
from nertz_env.agents.policy import SHIPPED_POLICIES, EnsembleAgent, PolicyAgent  # noqa: E402
from nertz_env.training.evaluate import evaluate  # noqa: E402

PPO, LEAGUE = (str(SHIPPED_POLICIES[name][0]) for name in ("ppo", "ppo-league"))


def tables(num_envs: int = 64) -> tuple[np.ndarray, np.ndarray]:
    """Every seat's observation and mask rows of ``conftest.mid_hand``'s tables."""
    obs, masks = mid_hand(num_envs=num_envs)
    return obs.reshape(-1, obs.shape[-1]), masks.reshape(-1, masks.shape[-1])


def test_one_member_plays_as_the_policy_and_two_play_the_mean_of_their_log_probabilities():
    obs, masks = tables()
    alone = agents.make_spec(f"ensemble:paths={PPO}")
    np.testing.assert_array_equal(alone.act_batch(obs, masks), agents.make("ppo").act_batch(obs, masks))
    pair = agents.make_spec(f"ensemble:paths={PPO}+{LEAGUE}")
    by_hand = sum(torch.log_softmax(PolicyAgent(p).scores(obs, masks)[0].double(), -1) for p in (PPO, LEAGUE)) / 2
    chosen = pair.act_batch(obs, masks)
    np.testing.assert_array_equal(chosen, by_hand.argmax(-1).numpy())
    assert masks[np.arange(len(chosen)), chosen].all()
    # the two members disagree somewhere, and the vote then follows neither one blindly
    assert (agents.make("ppo").act_batch(obs, masks) != agents.make("ppo-league").act_batch(obs, masks)).any()


def test_members_that_read_the_same_features_share_one_computation_and_score_as_alone(monkeypatch):
    obs, masks = tables(num_envs=24)
    trio = EnsembleAgent([PPO, LEAGUE, PPO])  # ppo's two copies read the same columns; ppo-league fewer
    alone = [member.scores(obs, masks)[0] for member in trio.members]
    computed, compute = [], ActionFeatures.__call__
    monkeypatch.setattr(ActionFeatures, "__call__", lambda self, o, m: computed.append(self) or compute(self, o, m))
    shared = trio.member_logits(obs, masks)
    assert computed == [member._net.features for member in trio.members[:2]]  # the third reads the first's
    for mine, its_own in zip(shared, alone):
        torch.testing.assert_close(mine, its_own, rtol=0, atol=0)
    assert not torch.equal(shared[0], shared[1])


def test_a_sampling_ensemble_draws_legal_moves_the_same_under_its_seed_and_keys():
    obs, masks = tables(num_envs=20)
    keys = np.arange(len(obs), dtype=np.uint64) * np.uint64(7919)
    draws = [agents.make_spec(f"ensemble:paths={PPO}+{LEAGUE},greedy=false", seed=5).act_batch(obs, masks, keys=keys)
             for _ in range(2)]  # fmt: skip
    np.testing.assert_array_equal(draws[0], draws[1])
    assert masks[np.arange(len(obs)), draws[0]].all()


def test_it_plays_through_the_harness():
    report = evaluate([f"ensemble:paths={PPO}+{LEAGUE}", "greedy", "heuristic", "random"], hands=2, seed=1,
                      progress=False)  # fmt: skip
    assert report["summary"][0]["agent"].startswith("ensemble") and report["hands_played"] == 8


@pytest.mark.parametrize(
    "spec, error, message",
    [
        ("ensemble", ValueError, "agent 'ensemble' needs paths=A.pt"),
        ("ensemble:paths=model.zip", ValueError, "invalid paths='model.zip': accepted one or more .pt policies"),
        (f"ensemble:paths={PPO}+missing.pt", FileNotFoundError, "no policy file at missing.pt"),
        (f"ensemble:paths={PPO},depth=3", ValueError, "depth"),
    ],
)
def test_bad_specs_are_refused_by_name(spec, error, message):
    with pytest.raises(error, match=message):
        agents.make_spec(spec)


def test_members_must_fit_the_rules():
    with pytest.raises(ValueError, match="trained for 4 players"):
        EnsembleAgent([PPO, LEAGUE], config=NertzConfig(num_players=2))
