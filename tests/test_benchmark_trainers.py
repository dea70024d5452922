"""Every reference algorithm's entry point runs a few iterations on every benchmark task, from the
very command the results table gives (``training.reference.trainer_command``), and its policy
plays the protocol; and one reference run goes end to end (train, curve, final, exploitability)."""

from __future__ import annotations

import json
from importlib import import_module
from pathlib import Path

import pytest

pytest.importorskip("torch", reason="the trainers need torch (extra: training)")

from nertz_env import tasks  # noqa: E402
from nertz_env.training import reference  # noqa: E402
from nertz_env.training.benchmark import protocol  # noqa: E402

# Smaller batches than the reference's, appended to its command (the last flag wins).
SMALL = {
    "ippo": (["--num-envs", "4", "--num-steps", "4"], 64),
    "mappo": (["--num-envs", "4", "--num-steps", "4"], 64),
    "ppo": (["--num-envs", "4", "--num-steps", "8"], 160),
    "maskable_ppo": (["--num-envs", "2", "--n-steps", "16", "--batch-size", "32"], 128),
}


def _needs(algo: str) -> None:
    if algo in ("ippo", "mappo"):
        pytest.importorskip("torchrl", reason="IPPO and MAPPO run through TorchRL (extra: torchrl)")
    if algo == "maskable_ppo":
        pytest.importorskip("sb3_contrib", reason="MaskablePPO needs sb3-contrib (extra: training)")


@pytest.mark.parametrize("task", tasks.names())
@pytest.mark.parametrize("algo", reference.ALGOS)
def test_each_algorithm_trains_on_each_task_and_its_policy_plays(algo, task, tmp_path):
    _needs(algo)
    t = tasks.get(task)
    extra, steps = SMALL[algo]
    cmd = reference.trainer_command(algo, t, 1, steps, steps, tmp_path)
    assert cmd[1:3] == ["-m", cmd[2]] and cmd[2].startswith("nertz_env.training.")
    import_module(cmd[2]).main(cmd[3:] + extra)
    policy = reference.policy_file(algo, tmp_path)
    assert policy.exists()
    spec = [f"policy:path={policy}"]
    row = protocol(t, spec, deals=2, pool=["passive"], cross_play=False)["results"][0]
    assert row["hands"] == 2 * t.num_players and row["opponent"] == "passive"
    again = protocol(t, spec, deals=2, pool=["passive"], cross_play=False)["results"][0]
    played = ("score", "win_share", "margin", "score_ci", "margin_ci")
    assert {k: again[k] for k in played} == {k: row[k] for k in played}  # the saved policy plays, deterministically


def test_a_reference_run_goes_end_to_end_and_resumes(tmp_path, monkeypatch, capsys):
    tiny = tasks.Task("tiny-2p", 1, "a small test task", {"num_players": 2}, eval_deals=2, curve_deals=2,
                      pool=("passive",), agent_steps=2560, exploit_steps=1024, exploit_deals=2)
    monkeypatch.setitem(tasks.TASKS, "tiny-2p", tiny)
    results = tmp_path / "results"
    rec = reference.run("tiny-2p", "ppo", 1, checkpoints=1, runs=tmp_path / "runs", results=results)
    saved = json.loads((results / "tiny-2p__ppo__1.json").read_text())
    assert saved["schema"] == reference.SCHEMA and saved == json.loads(json.dumps(rec, default=float))
    # An update of the ppo recipe at 2 players is 32 ticks x 48 learner seats: the curve holds the
    # 1,536 decisions trained (before, it held the 2,560 asked for, an update's size at 4 players).
    assert reference.ppo_update_decisions(2) == 1536 and reference.ppo_update_decisions(4) == 2560
    assert [c["steps"] for c in saved["curve"]] == [1536] and saved["train_s"] > 0 and saved["train_cpu_s"] > 0
    assert saved["final"]["deals"] == 2 and saved["final"]["results"][0]["opponent"] == "passive"
    ex = saved["exploit"]
    assert ex["steps"] == 1024 and ex["deals"] == 2 and ex["score_gain_ci"][0] <= ex["score_gain"]
    assert ex["trained_steps"] == 1024  # whole updates of 32 ticks x 32 learner seats (seat 0 of 32 games)
    assert saved["command"] == "python -m nertz_env.training.reference --task tiny-2p --algo ppo --seed 1"
    # Run again: everything is there, nothing is trained or measured anew.
    capsys.readouterr()
    again = reference.run("tiny-2p", "ppo", 1, checkpoints=1, runs=tmp_path / "runs", results=results)
    assert again["train_s"] == saved["train_s"]
    assert "already holds this run, complete: nothing trained" in capsys.readouterr().err
    with pytest.raises(ValueError, match="not 999"):
        reference.run("tiny-2p", "ppo", 1, steps=999, checkpoints=1, runs=tmp_path / "runs", results=results)
    assert Path(results / "tiny-2p__ppo__1.json").exists()


def test_cross_play_among_the_finished_runs_and_its_matrix(tmp_path, monkeypatch):
    from nertz_env.training import bench_table

    tiny = tasks.Task("tiny-2p", 1, "a small test task", {"num_players": 2}, eval_deals=2, curve_deals=2,
                      pool=("passive",), agent_steps=2560, exploit_steps=1024, exploit_deals=2)
    monkeypatch.setitem(tasks.TASKS, "tiny-2p", tiny)
    runs, out = tmp_path / "runs", tmp_path / "crossplay"
    with pytest.raises(ValueError, match="no finished run of ippo on tiny-2p"):
        reference.cross_play("tiny-2p", 1, runs, out)
    command = reference.trainer_command("ppo", tiny, 1, 160, 160, tmp_path / "ppo")
    import_module(command[2]).main(command[3:] + ["--num-envs", "4", "--num-steps", "8"])
    policy = (tmp_path / "ppo" / "policy.pt").read_bytes()
    for algo in reference.ALGOS:  # one policy under every algorithm's name: the matrix's shape is what is checked
        (runs / f"tiny-2p__{algo}__1").mkdir(parents=True)
        for k in (1, 2):
            (runs / f"tiny-2p__{algo}__1" / f"checkpoint_{k}.pt").write_bytes(policy)
    rec = reference.cross_play("tiny-2p", 1, runs, out)
    assert sorted(rec["labels"].values()) == sorted(reference.ALGOS) and rec["results"] == []
    assert all(spec.endswith("checkpoint_2.pt") for spec in rec["labels"])
    assert len(rec["cross_play"]) == 12 and all(r["hands"] == 4 for r in rec["cross_play"])
    (matrix,) = bench_table.cross_tables(out)
    lines = matrix.splitlines()
    assert lines[2] == "| row vs column | " + " | ".join(reference.ALGOS) + " |"
    assert len(lines) == 4 + len(reference.ALGOS) and lines[4].startswith("| ippo |  | ")
    assert reference.cross_play_command("tiny-2p", 1) in lines[0]


def test_a_self_play_run_against_a_torchrl_policy_checkpoints_and_resumes(tmp_path):
    """The exploitability proxy trains ``train_selfplay`` against a reference policy: its checkpoint
    keeps where each scripted member's draws stand (``Agent.chance_state``), not the agents
    themselves, which a TorchRL policy's network class (local to its builder) cannot be pickled as."""
    from nertz_env.training import train_selfplay

    _needs("ippo")
    task = tasks.get("nertz-2p")
    extra, steps = SMALL["ippo"]
    cmd = reference.trainer_command("ippo", task, 1, steps, steps, tmp_path / "ippo")
    import_module(cmd[2]).main(cmd[3:] + extra)
    frozen = f"policy:path={reference.policy_file('ippo', tmp_path / 'ippo')},greedy=false"  # one that draws
    tiny = ["--num-players", "2", "--num-envs", "4", "--num-steps", "8", "--bc-steps", "0", "--lookahead-features",
            "false", "--eval-every", "0", "--save-every", "1", "--progress", "false", "--tensorboard", "false",
            "--scripted", frozen, "--self-play-fraction", "0"]  # fmt: skip
    whole = train_selfplay.main([*tiny, "--total-steps", "128", "--run-dir", str(tmp_path / "a")])
    train_selfplay.main([*tiny, "--total-steps", "128", "--run-dir", str(tmp_path / "b"), "--stop-after", "2"])
    resumed = train_selfplay.main(["--resume", str(tmp_path / "b" / "checkpoint.pt"), "--progress", "false"])
    import torch

    a, b = (torch.load(p / "policy.pt", weights_only=False)["state_dict"] for p in (whole, resumed))
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
