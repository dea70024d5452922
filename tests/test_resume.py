"""Both trainers resume exactly, with evaluations on, after a kill -9 at any moment: during an
evaluation, between two files of a checkpoint, or half-way through writing one. A checkpoint is one
file replaced atomically; evaluations draw from their own generators; the saved arguments hold
(a conflicting flag is an error naming it); a wrong or damaged file and a full disk give clear
errors and leave no partial file.

``NERTZ_KILL_LOOPS`` sets how many kills each loop test makes (default 4)."""

from __future__ import annotations

import errno
import importlib.util
import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="needs torch: pip install 'nertz-env[training]'")
pytest.importorskip("sb3_contrib")

SELFPLAY, SB3 = "nertz_env.training.train_selfplay", "nertz_env.training.train_sb3"
TINY = ["--num-envs", "4", "--num-steps", "8", "--progress", "false", "--snapshot-every", "2", "--threads", "1",
        "--bc-steps", "160", "--total-steps", "800", "--save-every", "3", "--eval-every", "2", "--eval-deals", "2",
        "--tensorboard", "false"]  # fmt: skip
SB3_TINY = ["--mode", "single", "--num-envs", "2", "--n-steps", "32", "--batch-size", "32", "--progress", "false",
            "--total-steps", "320", "--eval-every", "128", "--eval-deals", "2"]  # fmt: skip
KILLS = int(os.environ.get("NERTZ_KILL_LOOPS", "4"))

# Runs a trainer and SIGKILLs itself at the k-th call of a chosen function: os.replace (a
# checkpoint's files are renamed into place one by one; "before" leaves a finished .tmp behind)
# or the harness's evaluate (an evaluation half done).
DRIVER = r"""
import os, signal, sys
import importlib
where, k, module = sys.argv[1], int(sys.argv[2]), sys.argv[3]
calls = [0]
def counted(real):
    def wrapper(*args, **kwargs):
        calls[0] += 1
        if calls[0] == k:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(*args, **kwargs)
    return wrapper
if where == "replace":
    os.replace = counted(os.replace)
else:
    import nertz_env.training.evaluate as ev
    ev.evaluate = counted(ev.evaluate)
importlib.import_module(module).main(sys.argv[4:])
"""


def run(module, *args, ok=True):
    res = subprocess.run([sys.executable, "-W", "ignore", "-m", module, *args], capture_output=True, text=True,
                         timeout=600)  # fmt: skip
    if ok:
        assert res.returncode == 0, res.stderr[-3000:]
    return res


def weights(path):
    return torch.load(path, weights_only=False)["state_dict"]


def same_weights(a, b):
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def evals(run_dir):
    return [json.loads(line) for line in (run_dir / "evals.jsonl").read_text().splitlines()]


def eval_steps(stdout: str) -> list[int]:
    """The learner decisions at which a run printed an evaluation (``checkpoint.eval_line``)."""
    return [int(line.split()[2].replace(",", "")) for line in stdout.splitlines() if line.startswith("eval  step")]


def sb3_weights(path):
    from sb3_contrib import MaskablePPO

    return MaskablePPO.load(path).policy.state_dict()


def test_selfplay_stopped_at_an_evaluation_resumes_exactly(tmp_path):
    """The checkpoint of an evaluation's update resumes as the uninterrupted run goes on (the
    evaluation built a network and moved torch's generator before), and keeps its line."""
    a = run(SELFPLAY, *TINY, "--run-dir", str(tmp_path / "a"))
    run(SELFPLAY, *TINY, "--run-dir", str(tmp_path / "b"), "--stop-after", "2")
    assert len(evals(tmp_path / "b")) == 1
    resumed = run(SELFPLAY, "--resume", str(tmp_path / "b" / "checkpoint.pt"), "--progress", "false")
    # it goes on from update 3: a run that trained afresh from the same seed would end the same
    assert eval_steps(resumed.stdout) == [320, 480, 640, 800] and eval_steps(a.stdout) == [160, 320, 480, 640, 800]
    assert same_weights(weights(tmp_path / "a" / "policy.pt"), weights(tmp_path / "b" / "policy.pt"))
    assert evals(tmp_path / "a") == evals(tmp_path / "b")
    assert f"run directory: {tmp_path / 'a'}; 10 updates x 80 = 800 learner decisions\n" in a.stdout
    rounded = run(SELFPLAY, *TINY, "--total-steps", "820", "--eval-every", "0", "--run-dir", str(tmp_path / "r"))
    assert "10 updates x 80 = 800 learner decisions (--total-steps 820: whole updates only)" in rounded.stdout
    assert a.stdout.count("eval  step") == len(evals(tmp_path / "a")) == 5  # updates 2, 4, 6, 8 and the last, 10
    assert "win vs greedy" in a.stdout and a.stdout.strip().splitlines()[-1].split()[0] == "800"


@pytest.mark.parametrize("agents", [["--scripted", "random"], ["--scripted", "greedy", "--teacher", "random"]])
def test_selfplay_with_agents_that_draw_resumes_exactly(tmp_path, agents):
    """A scripted pool member or a teacher with chance goes on drawing where it stopped (the
    checkpoint keeps the agents; before, a resumed run built them afresh and drew their draws again)."""
    fast = [*TINY, "--eval-every", "0", "--save-every", "1", *agents]
    run(SELFPLAY, *fast, "--run-dir", str(tmp_path / "a"))
    run(SELFPLAY, *fast, "--run-dir", str(tmp_path / "b"), "--stop-after", "3")
    run(SELFPLAY, "--resume", str(tmp_path / "b" / "checkpoint.pt"), "--progress", "false")
    assert same_weights(weights(tmp_path / "a" / "policy.pt"), weights(tmp_path / "b" / "policy.pt"))


def kill_loop(tmp_path, module, fresh, find_checkpoint, seed):
    """Kill the run at random moments (at a rename, in an evaluation, or from outside after a
    random delay) and resume it until it finishes; returns the number of kills (``KILLS``, or
    fewer when the run ends before a kill comes)."""
    rng = np.random.default_rng(seed)
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER)
    kills = 0
    while True:
        ckpt = find_checkpoint()
        rest = ["--resume", str(ckpt), "--progress", "false"] if ckpt is not None else fresh
        if kills >= KILLS:
            run(module, *rest)
            return kills
        where = ("replace", "evaluate", "outside")[kills % 3]
        k = int(rng.integers(1, 6 if where == "replace" else 3))
        cmd = [sys.executable, "-W", "ignore", str(driver), where, str(k), module, *rest]
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if where == "outside":
            time.sleep(float(rng.uniform(3.0, 12.0)))
            proc.send_signal(signal.SIGKILL)
        _, err = proc.communicate(timeout=600)
        if proc.returncode == 0:
            return kills  # it finished before the kill came
        assert proc.returncode == -signal.SIGKILL, err[-3000:]
        kills += 1


def test_selfplay_survives_kill_9_anywhere(tmp_path):
    run(SELFPLAY, *TINY, "--run-dir", str(tmp_path / "a"))
    ckpt = tmp_path / "k" / "checkpoint.pt"
    found = lambda: ckpt if ckpt.exists() else None  # noqa: E731
    kills = kill_loop(tmp_path, SELFPLAY, [*TINY, "--run-dir", str(tmp_path / "k")], found, seed=0)
    print(f"selfplay: {kills} kills")
    assert kills >= min(KILLS, 3)
    assert same_weights(weights(tmp_path / "a" / "policy.pt"), weights(tmp_path / "k" / "policy.pt"))
    assert evals(tmp_path / "a") == evals(tmp_path / "k")
    assert not list((tmp_path / "k").glob("*.tmp"))


def test_sb3_survives_kill_9_anywhere_with_evaluations(tmp_path):
    run(SB3, *SB3_TINY, "--out-dir", str(tmp_path / "a"))
    run_a = next((tmp_path / "a").iterdir())
    out = tmp_path / "k"

    def found():
        runs = [p / "checkpoint.zip" for p in out.iterdir() if (p / "checkpoint.zip").exists()] if out.exists() else []
        return runs[0] if runs else None

    kills = kill_loop(tmp_path, SB3, [*SB3_TINY, "--out-dir", str(out)], found, seed=1)
    print(f"sb3: {kills} kills")
    assert kills >= min(KILLS, 3)
    run_k = found().parent
    assert same_weights(sb3_weights(run_a / "policy.zip"), sb3_weights(run_k / "policy.zip"))
    assert evals(run_a) == evals(run_k) and len(evals(run_a)) == 2  # at 128 and 256 steps (rollouts of 64)
    assert not [p for p in run_k.iterdir() if ".tmp" in p.name]


def test_sb3_resume_without_total_steps_keeps_the_saved_budget(tmp_path):
    run(SB3, *SB3_TINY, "--out-dir", str(tmp_path), "--total-steps", "128", "--eval-every", "0")
    run_dir = next(tmp_path.iterdir())
    run(SB3, "--resume", str(run_dir / "checkpoint.zip"), "--progress", "false")  # trained on to 500,000 before
    from sb3_contrib import MaskablePPO

    assert MaskablePPO.load(run_dir / "checkpoint.zip").num_timesteps == 128


@pytest.mark.parametrize("flag, value", [("--num-players", "3"), ("--seed", "5"), ("--num-envs", "8")])
def test_a_conflicting_flag_on_resume_is_an_error_naming_it(tmp_path, flag, value):
    run(SELFPLAY, *TINY, "--total-steps", "80", "--eval-every", "0", "--run-dir", str(tmp_path))
    res = run(SELFPLAY, "--resume", str(tmp_path / "checkpoint.pt"), flag, value, ok=False)
    assert res.returncode != 0 and f"{flag} {value} conflicts with the resumed run's {flag}" in res.stderr


def test_a_checkpoint_from_before_the_sampler_flag_resumes_with_the_catalogue_sampler(tmp_path):
    """Runs saved before ``--sampler`` drew with torch's Categorical over the catalogue: resumed,
    they go on drawing so; a run saved with the flag keeps its own value."""
    from nertz_env.training import train_selfplay

    run(SELFPLAY, *TINY, "--total-steps", "80", "--eval-every", "0", "--run-dir", str(tmp_path))
    path = tmp_path / "checkpoint.pt"
    assert train_selfplay.start(["--resume", str(path)])[0].sampler == "pairs"
    saved = torch.load(path, weights_only=False)
    del saved["args"]["sampler"]
    torch.save(saved, path)
    assert train_selfplay.start(["--resume", str(path)])[0].sampler == "catalogue"


def test_sb3_conflicting_mode_is_an_error(tmp_path):
    run(SB3, *SB3_TINY, "--out-dir", str(tmp_path), "--total-steps", "64", "--eval-every", "0")
    ckpt = next(tmp_path.iterdir()) / "checkpoint.zip"
    res = run(SB3, "--resume", str(ckpt), "--mode", "selfplay", ok=False)
    assert "--mode selfplay conflicts with the resumed run's --mode single" in res.stderr
    policy = ckpt.with_name("policy.zip")
    res = run(SB3, "--resume", str(policy), ok=False)
    assert "a model file without the run state" in res.stderr


def said_as_a_flag_error(res) -> str:
    """The command line reports bad input as argparse does: ``prog: error: ...``, status 2, no traceback."""
    assert res.returncode == 2 and "Traceback" not in res.stderr, res.stderr[-3000:]
    (line,) = [x for x in res.stderr.splitlines() if ": error: " in x]
    return line


def test_wrong_or_damaged_files_give_clear_errors(tmp_path):
    run(SELFPLAY, *TINY, "--total-steps", "80", "--eval-every", "0", "--run-dir", str(tmp_path))
    res = run(SELFPLAY, "--resume", str(tmp_path / "policy.pt"), ok=False)  # was KeyError: 'args'
    assert "this is a policy file" in said_as_a_flag_error(res) and "checkpoint.pt" in res.stderr
    blob = (tmp_path / "checkpoint.pt").read_bytes()
    (tmp_path / "cut.pt").write_bytes(blob[: len(blob) // 2])
    res = run(SELFPLAY, "--resume", str(tmp_path / "cut.pt"), ok=False)
    assert "not a readable checkpoint" in said_as_a_flag_error(res) and "damaged" in res.stderr
    res = run(SELFPLAY, "--resume", str(tmp_path / "missing.pt"), ok=False)
    assert "no such file" in said_as_a_flag_error(res)


def test_bad_flags_and_specs_end_the_command_with_their_reason_and_raise_in_process(tmp_path):
    """On the command line (``python -m`` and ``nertz train``) a flag out of range, an unknown agent
    spec or a bad rule option is one line and status 2; called in-process, ``main`` raises."""
    from nertz_env.training import train_selfplay

    res = run(SELFPLAY, *TINY, "--pfsp-rate", "0", "--run-dir", str(tmp_path / "a"), ok=False)
    assert "--pfsp-rate 0.0: accepted a number in (0, 1]" in said_as_a_flag_error(res)
    res = run(SELFPLAY, *TINY, "--scripted", "heuristic:depth=9", "--run-dir", str(tmp_path / "b"), ok=False)
    assert "depth" in said_as_a_flag_error(res)
    assert not (tmp_path / "b").exists()  # the specs are checked before the run directory is made
    res = run(SELFPLAY, *TINY, "--scripted", f"policy:path={tmp_path / 'none.pt'}", "--run-dir", str(tmp_path / "f"),
              ok=False)  # fmt: skip
    assert f"no policy file at {tmp_path / 'none.pt'}" in said_as_a_flag_error(res) and not (tmp_path / "f").exists()
    res = run("nertz_env.training.cli", "train", "selfplay", *TINY, "--rules", "partners=maybe", "--run-dir",
              str(tmp_path / "c"), ok=False)  # fmt: skip
    assert "partners" in said_as_a_flag_error(res)
    res = run(SB3, *SB3_TINY, "--num-envs", "0", "--out-dir", str(tmp_path / "d"), ok=False)
    assert "--num-envs" in said_as_a_flag_error(res)
    with pytest.raises(ValueError, match="--pfsp-rate 0.0"):
        train_selfplay.main([*TINY, "--pfsp-rate", "0", "--run-dir", str(tmp_path / "e")])


@pytest.mark.skipif(importlib.util.find_spec("torchrl") is None, reason="needs torchrl: nertz-env[torchrl]")
def test_the_torchrl_trainer_reports_a_bad_flag_in_one_line(tmp_path):
    res = run("nertz_env.training.train_torchrl", "--num-envs", "0", "--out-dir", str(tmp_path), ok=False)
    assert "--num-envs 0: accepted an integer >= 1" in said_as_a_flag_error(res)
    assert not any(tmp_path.iterdir())


@pytest.mark.skipif(importlib.util.find_spec("ray") is not None, reason="checks the message where ray is absent")
def test_the_rllib_trainer_without_ray_names_the_extra(tmp_path):
    res = run("nertz_env.training.train_rllib", "--out-dir", str(tmp_path), ok=False)
    assert "needs ray" in said_as_a_flag_error(res) and "pip install 'nertz-env[rllib]'" in res.stderr
    assert not any(tmp_path.iterdir())


def test_total_steps_below_one_update_is_an_error(tmp_path):
    res = run(SELFPLAY, *TINY, "--total-steps", "0", "--run-dir", str(tmp_path), ok=False)  # trained 10,240 before
    assert "--total-steps 0 is less than one update" in res.stderr
    res = run(SB3, *SB3_TINY, "--total-steps", "0", "--out-dir", str(tmp_path), ok=False)
    assert "--total-steps 0" in res.stderr


def test_a_small_budget_clones_an_eighth_and_trains_ppo_after():
    from nertz_env.training.train_selfplay import Seats, start

    args, _, _ = start(["--total-steps", "200000", "--run-dir", "unused"])
    batch = Seats.update_decisions(args)
    assert args.bc_steps == 25000 and args.bc_steps // batch < args.total_steps // batch  # PPO updates follow
    args, _, _ = start(["--run-dir", "unused"])
    assert args.bc_steps == 1_000_000  # the default run: 1 M of 8 M, as before


def test_a_full_disk_is_reported_and_leaves_no_partial_file(tmp_path, monkeypatch):
    from nertz_env.training import checkpoint, train_selfplay

    real_save = torch.save

    def save(obj, path, *args, **kwargs):
        if str(path).endswith("checkpoint.pt.tmp") and full[0]:
            with open(path, "wb") as fh:
                fh.write(b"partial")
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_save(obj, path, *args, **kwargs)

    full = [False]
    monkeypatch.setattr(checkpoint.torch, "save", save)
    args = [*TINY, "--total-steps", "160", "--eval-every", "0", "--save-every", "1", "--run-dir", str(tmp_path)]
    train_selfplay.main([*args, "--stop-after", "1"])
    before = (tmp_path / "checkpoint.pt").read_bytes()
    full[0] = True
    with pytest.raises(OSError, match="no space left on the device while writing .*checkpoint.pt") as err:
        train_selfplay.main(["--resume", str(tmp_path / "checkpoint.pt")])
    assert err.value.errno == errno.ENOSPC
    assert not list(tmp_path.glob("*.tmp")) and (tmp_path / "checkpoint.pt").read_bytes() == before


def test_sb3_full_disk_is_reported(tmp_path, monkeypatch):
    import zipfile

    from nertz_env.training import train_sb3

    def full(self, *args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(zipfile.ZipFile, "writestr", full)
    with pytest.raises(OSError, match="no space left on the device while writing .*checkpoint.zip"):
        train_sb3.main([*SB3_TINY, "--total-steps", "64", "--eval-every", "0", "--out-dir", str(tmp_path)])
    run_dir = next(tmp_path.iterdir())
    assert not list(run_dir.glob("*.tmp*")) and not (run_dir / "checkpoint.zip").exists()


def test_sb3_trains_with_its_default_progress_bar(tmp_path):
    """``--progress true`` (the default) needs SB3's progress-bar libraries (tqdm and rich, both in
    the ``training`` extra): the README's command runs as written."""
    from nertz_env.training import train_sb3

    flags = [f for f in SB3_TINY if f not in ("--progress", "false")]
    train_sb3.main([*flags, "--total-steps", "64", "--eval-every", "0", "--out-dir", str(tmp_path)])
    run_dir = next(tmp_path.iterdir())
    assert (run_dir / "checkpoint.zip").exists()


def test_sb3_trains_on_the_threads_it_is_given(tmp_path):
    """MaskablePPO's run is the same on any machine only on a fixed number of torch threads (a sum
    split over threads rounds differently: the reference runs of 2026-11-23, on one thread, were not
    repeated bit for bit on two). ``--threads`` defaults to 1, is kept in the run's configuration and
    is set before the model is built; 0 leaves torch's default."""
    from nertz_env.training import train_sb3

    before = torch.get_num_threads()
    try:
        for given, used in ((None, 1), ("2", 2)):
            torch.set_num_threads(3)
            flags = [] if given is None else ["--threads", given]
            out = tmp_path / f"threads_{given}"
            run_dir = train_sb3.main([*SB3_TINY, "--total-steps", "64", "--eval-every", "0", "--out-dir", str(out),
                                      *flags])  # fmt: skip
            assert torch.get_num_threads() == used
            assert json.loads((run_dir / "config.json").read_text())["args"]["threads"] == used
        torch.set_num_threads(3)
        train_sb3.main([*SB3_TINY, "--total-steps", "64", "--eval-every", "0", "--out-dir", str(tmp_path / "t0"),
                        "--threads", "0"])  # fmt: skip
        assert torch.get_num_threads() == 3
        with pytest.raises(ValueError, match="--threads"):
            train_sb3.main([*SB3_TINY, "--threads", "-1", "--out-dir", str(tmp_path / "bad")])
    finally:
        torch.set_num_threads(before)
