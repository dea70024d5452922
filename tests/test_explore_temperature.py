"""``train_selfplay --explore-temperature``: in the PPO phase the learner's moves are drawn from its
softmax at that temperature (``pair_policy.draw``), while the log-probabilities the update compares
against stay the policy's own; ``--explore-correction importance`` weights each move's clipped term
by its importance weight (decoupled PPO); cloning draws from the policy itself; bad values are
refused."""

from types import SimpleNamespace

import numpy as np
import pytest
from tqdm import tqdm

torch = pytest.importorskip("torch", reason="the trainer needs torch (the training extra)")

from test_training_schedule import TINY  # noqa: E402

from nertz_env.agents.features import ActionFeatures  # noqa: E402
from nertz_env.agents.policy import build_scorer  # noqa: E402
from nertz_env.training import selfplay_ppo  # noqa: E402
from nertz_env.training.loss_gradients import measure  # noqa: E402
from nertz_env.training.pair_policy import draw, pair_log_softmax, pair_of, sample_pairs  # noqa: E402
from nertz_env.training.selfplay_ppo import _policy_loss  # noqa: E402
from nertz_env.training.train_selfplay import open_trainer, train_one  # noqa: E402
from nertz_env.vector import NertzVectorEnv  # noqa: E402


@pytest.fixture(scope="module")
def batch():
    env = NertzVectorEnv(8, seed=11)
    obs, masks = env.reset()
    obs, masks = obs.reshape(32, -1), masks.reshape(32, -1)
    rows, acts, feats = ActionFeatures(env.config, lookahead=False)(obs, masks)
    net = build_scorer(env.config, (16,), 8, lookahead=False)
    return net, obs, masks, rows, acts, feats


@pytest.mark.parametrize("temperature", [1.0, 2.5])
def test_draws_follow_the_tempered_softmax_and_report_the_policys_own_log_probability(batch, temperature):
    """The moves are ``sample_pairs`` over scores / T (draw for draw, torch seeded alike); the
    log-probabilities are the untempered log-softmax of the moves drawn; T = 1 is the policy."""
    net, obs, masks, rows, acts, feats = batch
    inputs = [torch.from_numpy(x) for x in (obs, rows, acts, feats)]
    with torch.no_grad():
        scores, value = net.pair_scores(*inputs)
        logp, _ = pair_log_softmax(scores, inputs[1], len(obs))
    torch.manual_seed(9)
    expected = acts[sample_pairs(scores / temperature, rows, len(obs))]
    torch.manual_seed(9)
    moves, logprob, values = draw(net, "pairs", obs, rows, acts, feats, "cpu", temperature=temperature)
    np.testing.assert_array_equal(moves, expected)
    assert masks[np.arange(len(obs)), moves].all() and torch.equal(values, value)
    torch.testing.assert_close(logprob, logp[torch.from_numpy(pair_of(rows, acts, moves))])


def test_weighed_draws_give_the_policy_over_the_tempered_probability_of_each_move(batch):
    """``weigh=True``: the same moves and log-probabilities, and a weight exp(log pi - log mu) per
    move, mu the softmax of scores / T; all 1 at T = 1."""
    net, obs, masks, rows, acts, feats = batch
    inputs = [torch.from_numpy(x) for x in (obs, rows, acts, feats)]
    with torch.no_grad():
        scores, _ = net.pair_scores(*inputs)
        logp, _ = pair_log_softmax(scores, inputs[1], len(obs))
        logmu, _ = pair_log_softmax(scores / 2.0, inputs[1], len(obs))
    torch.manual_seed(4)
    plain = draw(net, "pairs", obs, rows, acts, feats, "cpu", temperature=2.0)
    torch.manual_seed(4)
    moves, logprob, _, weights = draw(net, "pairs", obs, rows, acts, feats, "cpu", temperature=2.0, weigh=True)
    np.testing.assert_array_equal(moves, plain[0])
    assert torch.equal(logprob, plain[1])
    drawn = torch.from_numpy(pair_of(rows, acts, moves))
    torch.testing.assert_close(weights, (logp[drawn] - logmu[drawn]).exp())
    assert torch.equal(draw(net, "pairs", obs, rows, acts, feats, "cpu", weigh=True)[3], torch.ones(len(obs)))


def test_the_weighted_loss_is_each_moves_clipped_term_times_its_weight():
    """Decoupled PPO: with weights, the loss is the mean of weight x PPO's clipped term per move;
    all-1 weights give PPO's loss."""
    args = SimpleNamespace(clip_coef=0.2)
    new, old = torch.tensor([-0.1, -1.0, -2.0, -0.5]), torch.tensor([-0.2, -0.6, -2.0, -1.0])
    adv, weights = torch.tensor([1.0, -1.0, 0.5, 2.0]), torch.tensor([0.5, 2.0, 1.0, 0.25])
    stats = {"clipfracs": []}
    plain = _policy_loss(args, new, old, adv, stats)
    assert torch.equal(_policy_loss(args, new, old, adv, stats, torch.ones(4)), plain)
    ratio, norm = (new - old).exp(), (adv - adv.mean()) / (adv.std() + 1e-8)
    per_move = torch.max(-norm * ratio, -norm * ratio.clamp(0.8, 1.2))
    torch.testing.assert_close(_policy_loss(args, new, old, adv, stats, weights), (weights * per_move).mean())


def test_catalogue_draws_refuse_a_temperature(batch):
    net, obs, masks, rows, acts, feats = batch
    with pytest.raises(ValueError, match="temperature 2.0: accepted only with the pairs sampler"):
        draw(net, "catalogue", obs, rows, acts, feats, "cpu", temperature=2.0)


def test_the_trainer_draws_at_the_temperature_in_the_ppo_phase_only(monkeypatch):
    """TINY's first 2 updates clone, the next ones are PPO: ``collect`` draws at 1.0, then at the
    flag, in the trainer and in ``loss_gradients.measure``."""
    seen = []

    def recording_draw(*args, temperature=1.0, **kwargs):
        seen.append(temperature)
        return draw(*args, temperature=temperature, **kwargs)

    monkeypatch.setattr(selfplay_ppo, "draw", recording_draw)
    t, loop, buf, first = open_trainer([*TINY, "--explore-temperature", "1.5"])
    for update in (first, first + 1, first + 2):
        train_one(t, buf, loop, update, bar=tqdm(disable=True))
    steps = t.args.num_steps
    assert seen == [1.0] * (2 * steps) + [1.5] * steps
    assert t.args.explore_correction == "none" and buf.weights is None
    seen.clear()  # the tool that measures a trainer's updates draws as the trainer does
    measure([*TINY, "--explore-temperature", "1.5"], updates=3)
    assert seen == [1.0] * (2 * steps) + [1.5] * steps


def test_with_importance_correction_the_rollout_keeps_each_moves_weight():
    """``--explore-correction importance``: the PPO rollout's weights are the draws' importance
    weights (not all 1 at T = 3), the cloning rollouts' all 1."""
    t, loop, buf, first = open_trainer([*TINY, "--explore-temperature", "3", "--explore-correction", "importance"])
    train_one(t, buf, loop, first, bar=tqdm(disable=True))
    assert torch.equal(buf.weights, torch.ones_like(buf.weights))
    train_one(t, buf, loop, first + 2, bar=tqdm(disable=True))
    assert (buf.weights > 0).all() and not torch.equal(buf.weights, torch.ones_like(buf.weights))


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--explore-temperature", "0"], "--explore-temperature 0.0: accepted a finite number > 0"),
        (["--explore-temperature", "inf"], "--explore-temperature inf: accepted a finite number > 0"),
        (["--explore-temperature", "2", "--sampler", "catalogue"],
         "--explore-temperature 2.0: accepted only with --sampler pairs"),
        (["--explore-correction", "importance"],
         "--explore-correction importance: accepted only with an --explore-temperature other than 1"),
    ],
)  # fmt: skip
def test_bad_temperatures_are_refused_by_name(flags, message):
    with pytest.raises(ValueError, match=message):
        open_trainer([*TINY, *flags])
