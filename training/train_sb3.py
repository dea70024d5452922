"""sb3-contrib MaskablePPO on Nertz, in two modes.

- ``--mode single``: one learning seat against fixed opponents from ``agents/``, through the
  single-agent Gymnasium env ``nertz_env/NertzSingle-v0`` (which serves ``action_masks()``).
- ``--mode selfplay``: one shared policy in every seat of ``--num-envs`` games, through the batched
  env's SB3 adapter (``nertz_env.sb3.NertzSB3VecEnv``; parameter sharing).

    python -m nertz_env.training.train_sb3 --mode single --opponents greedy heuristic greedy --total-steps 200000
    python -m nertz_env.training.train_sb3 --mode selfplay --resume runs/<run>/checkpoint.zip

Writes ``runs/{env}__{exp}__{seed}__{time}/`` (printed at the start): TensorBoard logs,
``checkpoint.zip`` (the model, and inside the same zip ``nertz_state.pkl``: the envs, the last
observations, the random generators and the evaluations so far, so that ``--resume`` continues
exactly as an uninterrupted run would; one file, replaced atomically), ``policy.zip`` (for
``agents.make("policy", path=...)``), ``config.json`` and ``evals.jsonl``. Each evaluation is
printed as it ends, and a summary table at the end. On ``--resume`` the checkpoint's arguments
hold (a contradicting flag is an error), except ``--total-steps`` and ``--progress``.
"""

from __future__ import annotations

import json
import pickle
import random
import time
import zipfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import DummyVecEnv, VecEnv, VecMonitor

from nertz_env.config import REWARD_MODES, NertzConfig
from nertz_env.training.args import (
    arg,
    check_counts,
    check_numbers,
    check_seed_and_sizes,
    flag_errors,
    make_run_dir,
    parse_given,
    resume_args,
    rules_config,
)
from nertz_env.training.checkpoint import (
    CheckpointError,
    atomic_write,
    check_budget,
    device_generator,
    eval_line,
    evaluate_policy,
    own_generators,
    remove_partial_files,
    resolve_device,
    restore_device_generator,
    resume_file,
    say,
    summary_table,
    training_device,
    write_json_lines,
)

STATE = "nertz_state.pkl"  # the member of checkpoint.zip that holds what the model file does not
MAY_CHANGE = {"total_steps"}  # on resume: the saved value unless given
PER_CALL = {"resume", "progress"}  # on resume: this invocation's value


@dataclass
class Args:
    """sb3-contrib MaskablePPO for Nertz."""

    mode: str = arg(
        "single",
        "single: one seat against --opponents; selfplay: one policy in every seat",
        choices=["single", "selfplay"],
    )
    exp_name: str = arg("sb3", "name of the run")
    seed: int = arg(1, "the one seed of torch, numpy, the games and SB3")
    total_steps: int = arg(500_000, "learner decisions to train on (on --resume: the saved run's unless given)")
    num_envs: int = arg(8, "envs (single) or games (selfplay) stepped at once")
    num_players: int = arg(4, "players per game")
    opponents: tuple[str, ...] = arg(("greedy", "greedy", "greedy"), "opponents in single mode, one per other seat")
    reward: str = arg("relative", "reward mode of the env", choices=list(REWARD_MODES))
    rules: tuple[str, ...] = arg((), "NertzConfig options KEY=VALUE of the games (e.g. partners=true)")
    n_steps: int = arg(256, "steps per env per rollout")
    batch_size: int = arg(1024, "minibatch size")
    n_epochs: int = arg(4, "epochs per update")
    learning_rate: float = arg(3e-4, "Adam learning rate")
    gamma: float = arg(0.995, "discount factor")
    ent_coef: float = arg(0.01, "entropy coefficient")
    hidden: tuple[int, ...] = arg((256, 256), "hidden layer sizes of policy and value nets")
    device: str = arg("auto", "auto, cpu or cuda")
    threads: int = arg(1, "torch CPU threads (0: torch's default, one per core; results depend on it)")
    eval_every: int = arg(100_000, "steps between evaluations against greedy and heuristic (0: never)")
    eval_deals: int = arg(100, "duplicate deals per evaluation")
    save_every: int = arg(1, "rollouts between checkpoints")
    out_dir: str = arg("runs", "where runs are written")
    resume: str = arg("", "a checkpoint.zip to continue from")
    progress: bool = arg(True, "show a progress bar")


def make_env(args: Args, config: NertzConfig):
    """The training games under ``config`` (``rules_config`` of the flags), as SB3's vector env."""
    if args.mode == "single":
        import gymnasium

        def one(k: int):
            return lambda: (
                gymnasium.make(
                    "nertz_env/NertzSingle-v0",
                    opponents=list(args.opponents),
                    **config.to_dict(),
                ).unwrapped
            )

        env: VecEnv = DummyVecEnv([one(k) for k in range(args.num_envs)])
        env.seed(args.seed)
        return VecMonitor(env)
    from nertz_env.sb3 import NertzSB3VecEnv

    env = NertzSB3VecEnv(num_games=args.num_envs, seed=args.seed, **config.to_dict())
    return VecMonitor(env)


class Checkpoints(BaseCallback):
    """At the start of each rollout (after the last update): an atomic checkpoint of the model and
    everything else the next rollout depends on; then the periodic evaluation, if due. The
    schedule (``next_eval``) and the evaluations so far travel in the checkpoint."""

    model: MaskablePPO

    def __init__(self, args: Args, run_dir: Path, config: NertzConfig, saved: dict[str, Any] | None = None):
        super().__init__()
        self.args, self.run_dir, self.config = args, run_dir, config
        self.next_eval = saved["next_eval"] if saved else args.eval_every
        self.evals: list[dict[str, Any]] = list(saved["evals"]) if saved else []
        self.start = saved["num_timesteps"] if saved else 0

    def _on_rollout_start(self) -> None:
        per_rollout = self.model.n_steps * self.model.n_envs
        done = self.num_timesteps // per_rollout
        if self.num_timesteps != self.start and done % self.args.save_every == 0:
            save_checkpoint(self.model, self.run_dir, self)
        if self.args.eval_every and self.num_timesteps >= self.next_eval:
            self.next_eval += self.args.eval_every
            self.evals.append(evaluate_now(self.model, self.run_dir, self.config, self.args, self.logger))
            write_json_lines(self.run_dir / "evals.jsonl", self.evals)

    def _on_step(self) -> bool:
        return True


def save_checkpoint(model, run_dir: Path, progress: Checkpoints) -> None:
    """The model and the rest of the run's state in one zip, replaced atomically."""
    state = {
        "args": asdict(progress.args),
        "env": pickle.dumps(model.env.venv),
        "last_obs": model._last_obs,
        "episode_starts": model._last_episode_starts,
        "torch_rng": torch.get_rng_state(),
        **device_generator(model.device),
        "numpy_rng": np.random.get_state(),  # noqa: NPY002 - SB3 samples from the global generator
        "random_rng": random.getstate(),
        "num_timesteps": model.num_timesteps,
        "next_eval": progress.next_eval,
        "evals": progress.evals,
    }

    def write(tmp: Path) -> None:
        model.save(tmp)
        with zipfile.ZipFile(tmp, "a") as zf:  # SB3's loader reads only its own members
            zf.writestr(STATE, pickle.dumps(state))

    atomic_write(run_dir / "checkpoint.zip", write, tmp=run_dir / "checkpoint.tmp.zip")


def load_state(path: str | Path) -> dict[str, Any]:
    """The run state inside a checkpoint.zip, or a ``CheckpointError`` saying what the file is."""
    path = resume_file(path, "checkpoint.zip")
    try:
        with zipfile.ZipFile(path) as zf:
            if STATE not in zf.namelist():
                raise CheckpointError(
                    f"--resume {path}: a model file without the run state ({STATE}): a policy.zip or a checkpoint "
                    f"of another program; resume from the run's checkpoint.zip"
                )
            state = pickle.loads(zf.read(STATE))
    except (zipfile.BadZipFile, EOFError, pickle.UnpicklingError, OSError) as exc:
        raise CheckpointError(f"--resume {path}: not a readable checkpoint ({type(exc).__name__}: {exc})") from exc
    if not isinstance(state, dict) or not {"args", "num_timesteps", "next_eval", "evals"} <= set(state):
        raise CheckpointError(f"--resume {path}: {STATE} is damaged")
    return state


def evaluate_now(model, run_dir: Path, config: NertzConfig, args: Args, logger) -> dict[str, Any]:
    """Evaluate the current model on its own generators (the run's are left as they are)."""
    atomic_write(run_dir / "policy.zip", model.save, tmp=run_dir / "policy.tmp.zip")
    with own_generators(model.device):
        result = evaluate_policy(run_dir / "policy.zip", config, args.eval_deals, seed=args.seed + model.num_timesteps)
    result["global_step"] = int(model.num_timesteps)
    say(eval_line(result))
    for rival in ("greedy", "heuristic"):
        logger.record(f"eval/win_share_vs_{rival}", result[rival]["win_share"])
        logger.record(f"eval/score_vs_{rival}", result[rival]["score"])
    return result


def check_args(args: Args) -> None:
    """Every flag in range, or an error naming it."""
    check_counts(args, ("total_steps", "num_envs", "num_players", "n_steps", "batch_size", "n_epochs", "save_every",
                        "eval_deals"), 1)  # fmt: skip
    check_counts(args, ("eval_every", "threads"), 0)
    check_numbers(args)
    config = rules_config(args.num_players, args.reward, args.rules)
    if not args.hidden or min(args.hidden) < 1:
        raise ValueError(f"--hidden {args.hidden}: accepted layer sizes >= 1")
    check_seed_and_sizes(args, ("hidden",))
    resolve_device(args.device)
    if args.mode == "single" and len(args.opponents) != args.num_players - 1:
        raise ValueError(
            f"--opponents names {len(args.opponents)} agents; --mode single at {args.num_players} players needs "
            f"{args.num_players - 1}, one per other seat"
        )
    if args.mode == "single":  # each spec built once here, so a bad one is named before the run directory
        from nertz_env import agents

        try:
            for spec in args.opponents:
                agents.make_spec(spec, config=config)
        except ValueError as err:
            raise ValueError(f"--opponents {' '.join(args.opponents)}: {err}") from None


def build_model(args: Args, run_dir: Path, saved: dict[str, Any] | None, config: NertzConfig):
    device = training_device(args.device)  # on CUDA: deterministic algorithms, so resumes are exact
    if saved is not None:
        try:
            env = VecMonitor(pickle.loads(saved["env"]))
            model = MaskablePPO.load(args.resume, env=env, device=device, tensorboard_log=str(run_dir))
        except (ValueError, KeyError, RuntimeError, pickle.UnpicklingError, zipfile.BadZipFile) as exc:
            raise CheckpointError(f"--resume {args.resume}: the model does not load ({exc})") from exc
        model._last_obs, model._last_episode_starts = saved["last_obs"], saved["episode_starts"]
        model.num_timesteps = saved["num_timesteps"]
        torch.set_rng_state(saved["torch_rng"])
        restore_device_generator(saved, device)
        np.random.set_state(saved["numpy_rng"])  # noqa: NPY002
        random.setstate(saved["random_rng"])
        return model
    return MaskablePPO(
        "MlpPolicy",
        make_env(args, config),
        n_steps=args.n_steps,
        batch_size=args.batch_size,
        n_epochs=args.n_epochs,
        learning_rate=args.learning_rate,
        gamma=args.gamma,
        ent_coef=args.ent_coef,
        seed=args.seed,
        policy_kwargs={"net_arch": list(args.hidden)},
        device=device,
        tensorboard_log=str(run_dir),
        verbose=0,
    )


def main(argv: list[str] | None = None, as_command: bool = False) -> Path:
    """Train. ``as_command`` (the command line): a bad flag or checkpoint ends the process with
    ``prog: error: ...`` and status 2 (``args.flag_errors``); else it raises ``ValueError``."""
    with flag_errors(as_command):
        args, given = parse_given(Args, argv)
        if "opponents" in given and args.mode != "single":  # else they would be silently unused
            raise ValueError(f"--opponents seats opponents in --mode single; --mode {args.mode} plays the one "
                             "policy in every seat")
        saved = None
        if args.resume:
            saved = load_state(args.resume)
            run_dir = Path(args.resume).parent
            args = resume_args(Args, saved["args"], args, given, MAY_CHANGE, PER_CALL)
            check_budget(args.resume, given, args.total_steps, saved["num_timesteps"], saved["args"]["total_steps"])
        else:
            run_dir = Path(args.out_dir) / f"nertz_v0__{args.exp_name}__{args.seed}__{int(time.time())}"
        check_args(args)
        make_run_dir(run_dir)
    remove_partial_files(run_dir)
    say(f"run directory: {run_dir}")
    config = rules_config(args.num_players, args.reward, args.rules)
    (run_dir / "config.json").write_text(json.dumps({"args": asdict(args), "rules": config.to_dict()}, indent=2))
    random.seed(args.seed)
    np.random.seed(args.seed)  # noqa: NPY002 - SB3 samples from the global generator
    torch.manual_seed(args.seed)
    if args.threads:  # the same run on any machine: a reduction split over threads rounds differently
        torch.set_num_threads(args.threads)
    began = time.perf_counter()
    model = build_model(args, run_dir, saved, config)
    progress = Checkpoints(args, run_dir, config, saved)
    write_json_lines(run_dir / "evals.jsonl", progress.evals)  # what the checkpoint holds, nothing after it
    remaining = args.total_steps - model.num_timesteps
    if remaining > 0:
        model.learn(
            remaining,
            callback=progress,
            progress_bar=args.progress,
            reset_num_timesteps=not args.resume,
            tb_log_name="sb3",
        )
    save_checkpoint(model, run_dir, progress)
    atomic_write(run_dir / "policy.zip", model.save, tmp=run_dir / "policy.tmp.zip")
    say(summary_table(progress.evals, run_dir, int(model.num_timesteps), time.perf_counter() - began))
    return run_dir


if __name__ == "__main__":
    main(as_command=True)
