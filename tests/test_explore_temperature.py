"""``train_selfplay --explore-temperature``: in the PPO phase the learner's moves are drawn from its
softmax at that temperature (``pair_policy.draw``), while the log-probabilities the update compares
against stay the policy's own; cloning draws from the policy itself; bad values are refused."""

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the trainer needs torch (the training extra)")

from test_training_schedule import TINY  # noqa: E402

from nertz_env.agents.features import ActionFeatures  # noqa: E402
from nertz_env.agents.policy import build_scorer  # noqa: E402
from nertz_env.training import selfplay_ppo  # noqa: E402
from nertz_env.training.loss_gradients import measure  # noqa: E402
from nertz_env.training.pair_policy import draw, pair_log_softmax, pair_of, sample_pairs  # noqa: E402
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
        train_one(t, buf, loop, update, bar=_NoBar(), writer=None)
    steps = t.args.num_steps
    assert seen == [1.0] * (2 * steps) + [1.5] * steps
    seen.clear()  # the tool that measures a trainer's updates draws as the trainer does
    measure([*TINY, "--explore-temperature", "1.5"], updates=3)
    assert seen == [1.0] * (2 * steps) + [1.5] * steps


class _NoBar:
    def update(self, n):
        pass

    def set_postfix(self, **kwargs):
        pass


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--explore-temperature", "0"], "--explore-temperature 0.0: accepted a finite number > 0"),
        (["--explore-temperature", "inf"], "--explore-temperature inf: accepted a finite number > 0"),
        (["--explore-temperature", "2", "--sampler", "catalogue"],
         "--explore-temperature 2.0: accepted only with --sampler pairs"),
    ],
)  # fmt: skip
def test_bad_temperatures_are_refused_by_name(flags, message):
    with pytest.raises(ValueError, match=message):
        open_trainer([*TINY, *flags])
