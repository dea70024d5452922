"""``training.profile_selfplay`` times the trainer's own steps: every part of an update is counted
once, so the shares add up to the whole, and bad flags are refused."""

import pytest

pytest.importorskip("torch", reason="the trainer needs torch (the training extra)")

from nertz_env.training.profile_selfplay import PARTS, main, profile  # noqa: E402

TINY = ["--num-envs", "2", "--num-steps", "4", "--lookahead-features", "false", "--bc-steps", "0",
        "--bc-coef", "0", "--total-steps", "1000"]  # fmt: skip


def test_the_shares_of_an_update_add_up_to_the_whole():
    result = profile(TINY, updates=2)
    assert result["decisions_per_s"] > 0
    assert set(PARTS) <= set(result) and result["teacher"] < 0.01  # --bc-coef 0: no labels asked
    assert 0.5 < sum(result[k] for k in PARTS) <= 1.0 + 1e-9  # the rest is Python between the parts


def test_bad_flags_are_refused(capsys):
    with pytest.raises(SystemExit):
        main(["--updates", "0", "--", *TINY])
    assert "--updates 0" in capsys.readouterr().err
