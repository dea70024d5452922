"""``train_selfplay``'s ``scalars.jsonl`` (``training.scalars``): one line per update with or without
TensorBoard, read back by ``read_scalars``, and trimmed on ``--resume`` to what the checkpoint holds."""

from __future__ import annotations

import json
import math

import pytest

torch = pytest.importorskip("torch", reason="needs torch: pip install 'nertz-env[training]'")

from nertz_env.training import plots  # noqa: E402
from nertz_env.training.scalars import FILE, TIMINGS, read_lines, read_scalars  # noqa: E402
from nertz_env.training.train_selfplay import main  # noqa: E402

TINY = ["--num-envs", "4", "--num-steps", "8", "--eval-every", "0", "--progress", "false", "--threads", "1",
        "--lookahead-features", "false", "--scripted", "greedy", "--snapshot-every", "2", "--bc-steps", "160",
        "--total-steps", "800", "--save-every", "3", "--tensorboard", "false"]  # fmt: skip


def lines(run_dir):
    return [json.loads(line) for line in (run_dir / FILE).read_text().splitlines()]


def without_timings(rows):
    return [{k: v for k, v in row.items() if k not in TIMINGS} for row in rows]


def test_every_update_writes_its_line_without_tensorboard(tmp_path):
    main([*TINY, "--run-dir", str(tmp_path)])
    rows = lines(tmp_path)
    assert [r["update"] for r in rows] == list(range(1, 11))  # 800 decisions, 80 an update
    assert [r["global_step"] for r in rows] == [80 * k for k in range(1, 11)]
    assert not list(tmp_path.glob("events.out.tfevents.*"))
    cloning, ppo = rows[1], rows[-1]  # 160 decisions of cloning: updates 1 and 2
    assert "losses/clipfrac" not in cloning and 0 <= ppo["losses/clipfrac"] <= 1
    assert ppo["losses/approx_kl"] >= 0 and ppo["charts/learning_rate"] < rows[2]["charts/learning_rate"]
    assert cloning["charts/bc_coef"] == 1.0 and 0 <= cloning["charts/teacher_agreement"] <= 1
    assert 0 <= ppo["pool/win_share/0_greedy"] <= 1
    assert rows[0]["charts/episode_score"] is None  # no hand ended yet: NaN, written as null
    scalars = read_scalars(tmp_path, ["charts/episode_score", "losses/entropy"])
    assert math.isnan(scalars["charts/episode_score"][1][0])
    assert scalars["losses/entropy"] == ([r["global_step"] for r in rows], [r["losses/entropy"] for r in rows])
    assert plots.read_scalars(tmp_path, ["losses/entropy"]) == {"losses/entropy": scalars["losses/entropy"]}
    with pytest.raises(KeyError, match=r"no scalars \['losses/nothing'\].*losses/entropy"):
        read_scalars(tmp_path, ["losses/nothing"])


def test_a_resumed_run_keeps_one_line_per_update_as_the_uninterrupted_one(tmp_path):
    """Stopped after 4 updates (the checkpoint of update 3 and 4's own: --stop-after saves), then a
    kill's traces added (a line of an update the checkpoint lacks, and a line cut short): the resumed
    run's file drops both and ends with the uninterrupted run's figures, timings aside."""
    main([*TINY, "--run-dir", str(tmp_path / "a")])
    main([*TINY, "--run-dir", str(tmp_path / "b"), "--stop-after", "4"])
    stopped = tmp_path / "b" / FILE
    assert [r["update"] for r in lines(tmp_path / "b")] == [1, 2, 3, 4]
    with stopped.open("a") as f:
        f.write(json.dumps({"global_step": 400, "update": 5, "losses/entropy": 9.0}) + "\n" + '{"global_step": 48')
    assert [r["update"] for r in read_lines(stopped)] == [1, 2, 3, 4, 5]  # the cut line left out
    main(["--resume", str(tmp_path / "b" / "checkpoint.pt"), "--progress", "false"])
    assert without_timings(lines(tmp_path / "b")) == without_timings(lines(tmp_path / "a"))


def test_damaged_or_missing_files_are_named(tmp_path):
    (tmp_path / FILE).write_text('{"global_step": 80, "update": 1}\nnot json\n{"global_step": 160, "update": 2}\n')
    with pytest.raises(ValueError, match=rf"{FILE}, line 2: not a JSON line"):
        read_lines(tmp_path / FILE)
    (tmp_path / FILE).write_text('{"global_step": 80, "update": 1}\n[1, 2]\n')  # JSON, but not a line of ours
    with pytest.raises(ValueError, match=r'line 2: .*an integer "global_step"'):
        read_lines(tmp_path / FILE)
    with pytest.raises(FileNotFoundError, match=r"neither scalars.jsonl nor a TensorBoard log"):
        read_scalars(tmp_path / "nothing")
