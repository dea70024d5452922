"""The benchmark's reference results: one algorithm on one task with one seed, as a resumable run
whose JSON lands in ``docs/benchmark/results/`` (``training.bench_table`` draws the table and the
learning curves from those files).

    python -m nertz_env.training.reference --task nertz-4p --algo mappo --seed 1
    python -m nertz_env.training.reference --task nertz-4p --algo ppo --seed 1 --steps 20000 --checkpoints 2
    python -m nertz_env.training.reference --task nertz-4p --cross-play --seed 1   # after every algorithm's run

Algorithms (``ALGOS``), each trained for the task's ``agent_steps`` learner decisions:

- ``ippo``, ``mappo``: TorchRL (``training.train_torchrl``), a shared actor, the critic on each
  seat's observation (IPPO) or on ``state()`` (MAPPO);
- ``ppo``: the project's own PPO (``training.train_selfplay``), search-free (no look-ahead
  features, no cloning), half the games in self-play, half against a pool of its snapshots and
  the scripted ``greedy`` and ``heuristic``; it draws with ``--sampler catalogue``, as the stored
  results were trained;
- ``maskable_ppo``: sb3-contrib MaskablePPO (``training.train_sb3 --mode selfplay``), one
  shared policy in every seat.

The run is cut into ``--checkpoints`` segments; after each, the trainer's policy is saved and the
protocol (``training.benchmark``) is run on the task's ``curve_deals`` (the learning curve). After
the last: the protocol on the task's full ``eval_deals`` and the exploitability proxy
(``training.exploit``). Every step is written to the JSON as it ends; running the same command
again resumes after the last step written (the trainers resume from their checkpoints).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from nertz_env import tasks
from nertz_env.cli_checks import USER_ERRORS, Parser, at_least
from nertz_env.training.benchmark import protocol
from nertz_env.training.exploit import exploitability

ALGOS = ("ippo", "mappo", "ppo", "maskable_ppo")
SCHEMA = "nertz-benchmark-reference/1"
RESULTS = Path("docs") / "benchmark" / "results"
_PPO_GAMES = _PPO_TICKS = 32  # the ppo recipe's games and ticks per update (--num-envs, --num-steps)


def ppo_update_decisions(num_players: int) -> int:
    """Learner decisions per update of the ppo recipe below: 32 ticks x its learner seats (every
    seat of the self-play half of the games, one seat of the other half): 2,560 at 4 players,
    1,536 at 2."""
    from nertz_env.training.selfplay_ppo import Seats

    return _PPO_TICKS * Seats.build(_PPO_GAMES, num_players, 0.5).n_learn


def _rules(task: tasks.Task) -> list[str]:
    rules = [f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in task.rules.items() if k != "num_players"]
    return ["--rules", *rules] if rules else []


def trainer_command(algo: str, task: tasks.Task, seed: int, steps: int, upto: int, run_dir: Path) -> list[str]:
    """The command that trains ``algo`` up to ``upto`` of its ``steps`` decisions in ``run_dir``
    (resuming from the checkpoint there, if any)."""
    py = [sys.executable, "-m"]
    p = str(task.num_players)
    if algo in ("ippo", "mappo"):
        ckpt = run_dir / "checkpoint.pt"
        head = ["--resume", str(ckpt)] if ckpt.exists() else ["--algo", algo, "--task", task.name, "--seed", str(seed),
                                                              "--run-dir", str(run_dir)]  # fmt: skip
        done = _torchrl_steps(ckpt)
        return [*py, "nertz_env.training.train_torchrl", *head, "--total-steps", str(steps),
                "--stop-after", str(max(1, upto - done))]  # fmt: skip
    if algo == "ppo":
        ckpt = run_dir / "checkpoint.pt"
        per_update = ppo_update_decisions(task.num_players)
        updates = max(1, upto // per_update - (_ppo_updates(ckpt) if ckpt.exists() else 0))
        head = ["--resume", str(ckpt)] if ckpt.exists() else [
            "--total-steps", str(steps), "--seed", str(seed), "--num-players", p, "--num-envs", str(_PPO_GAMES),
            "--num-steps", str(_PPO_TICKS), "--bc-steps", "0", "--lookahead-features", "false", "--eval-every", "0",
            "--run-dir", str(run_dir), "--tensorboard", "false", "--sampler", "catalogue", *_rules(task)]  # fmt: skip
        # --sampler catalogue: the draws the stored reference results were trained with.
        return [*py, "nertz_env.training.train_selfplay", *head, "--stop-after", str(updates), "--progress", "false"]
    if algo == "maskable_ppo":
        zip_ckpt = next(run_dir.glob("*/checkpoint.zip"), None)
        head = ["--resume", str(zip_ckpt)] if zip_ckpt is not None else [
            "--mode", "selfplay", "--seed", str(seed), "--num-players", p, "--num-envs", "8", "--n-steps", "64",
            "--batch-size", "512", "--eval-every", "0", "--save-every", "1000", "--out-dir", str(run_dir),
            *_rules(task)]  # fmt: skip
        return [*py, "nertz_env.training.train_sb3", *head, "--total-steps", str(upto), "--progress", "false"]
    raise ValueError(f"unknown algorithm {algo!r}: choose one of {', '.join(ALGOS)}")


def _torchrl_steps(ckpt: Path) -> int:
    if not ckpt.exists():
        return 0
    import torch

    return int(torch.load(ckpt, map_location="cpu", weights_only=False)["steps"])


def _ppo_updates(ckpt: Path) -> int:
    import torch

    return int(torch.load(ckpt, map_location="cpu", weights_only=False)["update"])


def trained_steps(algo: str, run_dir: Path, upto: int) -> int:
    """The learner decisions ``algo``'s run has trained: for ``ppo`` its checkpoint's count (the
    self-play trainer stops at whole updates, below ``upto`` where an update does not divide
    it), for the others ``upto``."""
    if algo != "ppo":
        return upto
    from nertz_env.training.checkpoint import trained_decisions

    return trained_decisions(run_dir)


def _children_cpu() -> float:
    """CPU seconds (user + system) of the finished child processes: a trainer's cost on a shared
    machine, where wall-clock also counts the others' work."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not on Windows
        return 0.0
    use = resource.getrusage(resource.RUSAGE_CHILDREN)
    return use.ru_utime + use.ru_stime


def policy_file(algo: str, run_dir: Path) -> Path:
    """Where the trainer of ``algo`` leaves its policy."""
    if algo == "maskable_ppo":
        return next(run_dir.glob("*/policy.zip"))
    return run_dir / "policy.pt"


def command_line(task: str, algo: str, seed: int) -> str:
    return f"python -m nertz_env.training.reference --task {task} --algo {algo} --seed {seed}"


def cross_play_command(task: str, seed: int) -> str:
    return f"python -m nertz_env.training.reference --task {task} --cross-play --seed {seed}"


def run(
    task: str, algo: str, seed: int, steps: int | None = None, checkpoints: int = 4, runs: Path = Path("runs/bench"),
    results: Path = RESULTS, curve_deals: int | None = None, exploit_steps: int | None = None,
) -> dict[str, Any]:
    """Train, evaluate at each checkpoint, evaluate in full and measure exploitability, writing the
    record to ``results/{task}__{algo}__{seed}.json`` after every step; resumes where it stopped."""
    t = tasks.get(task)
    if algo not in ALGOS:
        raise ValueError(f"unknown algorithm {algo!r}: choose one of {', '.join(ALGOS)}")
    steps = t.agent_steps if steps is None else steps
    run_dir = runs / f"{task}__{algo}__{seed}"
    out = results / f"{task}__{algo}__{seed}.json"
    record: dict[str, Any] = json.loads(out.read_text()) if out.exists() else {
        "schema": SCHEMA, "task": t.to_dict(), "algo": algo, "seed": seed, "steps": steps,
        "command": command_line(task, algo, seed), "curve": [], "train_s": 0.0,
    }
    if record["steps"] != steps:
        raise ValueError(f"{out} holds a run of {record['steps']} steps, not {steps}: move it away to start again")
    if len(record["curve"]) >= checkpoints and "final" in record and "exploit" in record:
        print(f"{out} already holds this run, complete: nothing trained (give --results DIR to run it again "
              "elsewhere)", file=sys.stderr)  # fmt: skip
        return record
    run_dir.mkdir(parents=True, exist_ok=True)
    results.mkdir(parents=True, exist_ok=True)
    for k in range(len(record["curve"]) + 1, checkpoints + 1):
        upto = steps * k // checkpoints
        t0, cpu0 = time.perf_counter(), _children_cpu()
        subprocess.run(trainer_command(algo, t, seed, steps, upto, run_dir), check=True)
        record["train_s"] += time.perf_counter() - t0
        record["train_cpu_s"] = record.get("train_cpu_s", 0.0) + _children_cpu() - cpu0
        snap = run_dir / f"checkpoint_{k}{policy_file(algo, run_dir).suffix}"
        shutil.copyfile(policy_file(algo, run_dir), snap)
        evaluation = protocol(t, [f"policy:path={snap}"], deals=curve_deals or t.curve_deals, cross_play=False)
        record["curve"].append({"steps": trained_steps(algo, run_dir, upto), "train_s": record["train_s"],
                                "train_cpu_s": record["train_cpu_s"], "results": evaluation["results"]})
        _write(out, record)
    final = f"policy:path={run_dir / f'checkpoint_{checkpoints}{policy_file(algo, run_dir).suffix}'}"
    if "final" not in record:
        record["final"] = protocol(t, [final], cross_play=False)
        _write(out, record)
    if "exploit" not in record:
        record["exploit"] = exploitability(t, final, steps=exploit_steps, seed=seed, run_dir=run_dir / "best_response")
        _write(out, record)
    return record


CROSS_PLAY = Path("docs") / "benchmark" / "crossplay"


def cross_play(task: str, seed: int, runs: Path = Path("runs/bench"), out: Path = CROSS_PLAY) -> dict[str, Any]:
    """The protocol's cross-play matrix among the final policies of every algorithm's run of
    ``task`` with ``seed`` (each must have finished), on the task's full held-out deals; written to
    ``out/{task}__{seed}.json`` with ``labels``, the algorithm of each agent spec."""
    t = tasks.get(task)
    labels = {}
    for algo in ALGOS:
        run_dir = runs / f"{task}__{algo}__{seed}"
        final = sorted(run_dir.glob("checkpoint_*.*"), key=lambda p: int(p.stem.split("_")[1]))
        if not final:
            raise ValueError(f"no finished run of {algo} on {task} with seed {seed} in {run_dir}: run "
                             f"{command_line(task, algo, seed)} first")  # fmt: skip
        labels[f"policy:path={final[-1]}"] = algo
    record = protocol(t, list(labels), pool=[], cross_play=True)
    record["labels"] = labels
    out.mkdir(parents=True, exist_ok=True)
    _write(out / f"{task}__{seed}.json", record)
    return record


def _write(path: Path, record: dict[str, Any]) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(record, indent=1, default=float))
    tmp.replace(path)


def main(argv: Sequence[str] | None = None) -> int:
    ap = Parser(prog="python -m nertz_env.training.reference", description=__doc__.split("\n\n")[0])
    ap.add_argument("--task", required=True, help=f"a task name: {', '.join(tasks.names())}")
    ap.add_argument("--algo", choices=ALGOS, help="the algorithm (or --cross-play)")
    ap.add_argument("--cross-play", action="store_true",
                    help="instead of training: cross-play among the final policies of every algorithm's run")
    ap.add_argument("--seed", type=at_least(0), default=1, help="the training seed (the reference uses 1, 2, 3)")
    ap.add_argument("--steps", type=at_least(1), default=None, help="learner decisions (default: the task's budget)")
    ap.add_argument("--checkpoints", type=at_least(1), default=4, help="points of the learning curve")
    ap.add_argument("--runs", default="runs/bench", help="where the trainers write their runs")
    ap.add_argument("--results", default=str(RESULTS), help="where the JSON record goes")
    ap.add_argument("--curve-deals", type=at_least(2), default=None, help="deals per checkpoint (default: the task's)")
    ap.add_argument("--exploit-steps", type=at_least(1), default=None, help="best responder budget (the task's)")
    args = ap.parse_args(argv)
    if (args.algo is None) == (not args.cross_play):
        ap.error("give one of --algo ALGO (a reference run) or --cross-play (the matrix among finished runs)")
    if args.cross_play:
        try:
            record = cross_play(args.task, args.seed, Path(args.runs))
        except USER_ERRORS as err:
            ap.error(str(err))
        print(json.dumps({"task": args.task, "seed": args.seed, "pairs": len(record["cross_play"])}))
        return 0
    try:
        record = run(args.task, args.algo, args.seed, args.steps, args.checkpoints, Path(args.runs),
                     Path(args.results), args.curve_deals, args.exploit_steps)  # fmt: skip
    except USER_ERRORS as err:
        ap.error(str(err))
    print(json.dumps({k: record[k] for k in ("task", "algo", "seed", "steps", "train_s")}, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
