"""sb3-contrib MaskablePPO on Nertz, in two modes.

- ``--mode single``: one learning seat against fixed opponents from ``agents/``, through the
  single-agent Gymnasium env ``nertz_env/NertzSingle-v0`` (which serves ``action_masks()``).
- ``--mode selfplay``: one shared policy in every seat of ``--num-envs`` games, through the batched
  env's SB3 adapter (``nertz_env.sb3.NertzSB3VecEnv``; parameter sharing).

    python -m training.train_sb3 --mode single --opponents greedy heuristic greedy --total-steps 200000
    python -m training.train_sb3 --mode selfplay --resume runs/<run>/checkpoint.zip

Writes ``runs/{env}__{exp}__{seed}__{time}/``: TensorBoard logs, ``checkpoint.zip`` (+
``checkpoint.state.pkl``: the envs, the last observations and the random generators, so that
``--resume`` continues exactly as an uninterrupted run would), ``policy.zip`` (for
``agents.make("policy", path=...)``), ``config.json`` and ``evals.jsonl``.
"""

from __future__ import annotations

import json
import os
import pickle
import random
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import DummyVecEnv, VecMonitor

from nertz_env.config import NertzConfig
from nertz_env.training.args import arg, parse


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
    total_steps: int = arg(500_000, "learner decisions to train on")
    num_envs: int = arg(8, "envs (single) or games (selfplay) stepped at once")
    num_players: int = arg(4, "players per game")
    opponents: tuple[str, ...] = arg(("greedy", "greedy", "greedy"), "opponents in single mode, one per other seat")
    reward: str = arg("relative", "reward mode of the env", choices=["dense", "sparse", "relative"])
    n_steps: int = arg(256, "steps per env per rollout")
    batch_size: int = arg(1024, "minibatch size")
    n_epochs: int = arg(4, "epochs per update")
    learning_rate: float = arg(3e-4, "Adam learning rate")
    gamma: float = arg(0.995, "discount factor")
    ent_coef: float = arg(0.01, "entropy coefficient")
    hidden: tuple[int, ...] = arg((256, 256), "hidden layer sizes of policy and value nets")
    device: str = arg("auto", "auto, cpu or cuda")
    eval_every: int = arg(100_000, "steps between evaluations against greedy and heuristic (0: never)")
    eval_deals: int = arg(100, "duplicate deals per evaluation")
    save_every: int = arg(1, "rollouts between checkpoints")
    out_dir: str = arg("runs", "where runs are written")
    resume: str = arg("", "a checkpoint.zip to continue from")
    progress: bool = arg(True, "show a progress bar")


def make_env(args: Args):
    if args.mode == "single":
        import gymnasium

        def one(k: int):
            return lambda: (
                gymnasium.make(
                    "nertz_env/NertzSingle-v0",
                    opponents=list(args.opponents),
                    num_players=args.num_players,
                    reward=args.reward,
                ).unwrapped
            )

        env = DummyVecEnv([one(k) for k in range(args.num_envs)])
        env.seed(args.seed)
        return VecMonitor(env)
    from nertz_env.sb3 import NertzSB3VecEnv

    env = NertzSB3VecEnv(num_games=args.num_envs, num_players=args.num_players, reward=args.reward, seed=args.seed)
    return VecMonitor(env)


class Checkpoints(BaseCallback):
    """At the start of each rollout (after the last update): an atomic checkpoint of the model and
    everything else the next rollout depends on; and the periodic evaluation."""

    def __init__(self, args: Args, run_dir: Path, config: NertzConfig):
        super().__init__()
        self.args, self.run_dir, self.config = args, run_dir, config
        self.rollouts = 0
        self.next_eval = args.eval_every

    def _on_rollout_start(self) -> None:
        self.rollouts += 1
        if self.rollouts > 1 and (self.rollouts - 1) % self.args.save_every == 0:
            save_checkpoint(self.model, self.run_dir)
        if self.args.eval_every and self.num_timesteps >= self.next_eval:
            self.next_eval += self.args.eval_every
            evaluate_now(self.model, self.run_dir, self.config, self.args, self.logger)

    def _on_step(self) -> bool:
        return True


def save_checkpoint(model, run_dir: Path) -> None:
    state = {
        "env": pickle.dumps(model.env.venv),
        "last_obs": model._last_obs,
        "episode_starts": model._last_episode_starts,
        "torch_rng": torch.get_rng_state(),
        "numpy_rng": np.random.get_state(),  # noqa: NPY002 - SB3 samples from the global generator
        "random_rng": random.getstate(),
        "num_timesteps": model.num_timesteps,
    }
    tmp = run_dir / "checkpoint.state.pkl.tmp"
    tmp.write_bytes(pickle.dumps(state))
    os.replace(tmp, run_dir / "checkpoint.state.pkl")
    tmp = run_dir / "checkpoint.tmp.zip"
    model.save(tmp)
    os.replace(tmp, run_dir / "checkpoint.zip")  # atomic: a kill leaves the last good pair readable


def evaluate_now(model, run_dir: Path, config: NertzConfig, args: Args, logger) -> None:
    from nertz_env.training.train_selfplay import evaluate_policy

    tmp = run_dir / "policy.tmp.zip"
    model.save(tmp)
    os.replace(tmp, run_dir / "policy.zip")
    result = evaluate_policy(run_dir / "policy.zip", config, args.eval_deals, seed=args.seed + model.num_timesteps)
    result["global_step"] = int(model.num_timesteps)
    with open(run_dir / "evals.jsonl", "a") as fh:
        fh.write(json.dumps(result) + "\n")
    for rival in ("greedy", "heuristic"):
        logger.record(f"eval/win_share_vs_{rival}", result[rival]["win_share"])
        logger.record(f"eval/score_vs_{rival}", result[rival]["score"])


def main(argv: list[str] | None = None) -> Path:
    args = parse(Args, argv)
    if args.resume:
        run_dir = Path(args.resume).parent
        saved = json.loads((run_dir / "config.json").read_text())["args"]
        args = Args(
            **{
                **saved,
                "resume": args.resume,
                "progress": args.progress,
                "total_steps": max(args.total_steps, saved["total_steps"]),
                "hidden": tuple(saved["hidden"]),
                "opponents": tuple(saved["opponents"]),
            }
        )
    else:
        run_dir = Path(args.out_dir) / f"nertz_v0__{args.exp_name}__{args.seed}__{int(time.time())}"
        run_dir.mkdir(parents=True, exist_ok=True)
    config = NertzConfig(num_players=args.num_players, reward=args.reward)
    (run_dir / "config.json").write_text(json.dumps({"args": asdict(args), "rules": config.to_dict()}, indent=2))
    random.seed(args.seed)
    np.random.seed(args.seed)  # noqa: NPY002 - SB3 samples from the global generator
    torch.manual_seed(args.seed)

    if args.resume:
        state = pickle.loads((run_dir / "checkpoint.state.pkl").read_bytes())
        env = VecMonitor(pickle.loads(state["env"]))
        model = MaskablePPO.load(args.resume, env=env, device=args.device, tensorboard_log=str(run_dir))
        model._last_obs, model._last_episode_starts = state["last_obs"], state["episode_starts"]
        model.num_timesteps = state["num_timesteps"]
        torch.set_rng_state(state["torch_rng"])
        np.random.set_state(state["numpy_rng"])  # noqa: NPY002
        random.setstate(state["random_rng"])
    else:
        env = make_env(args)
        model = MaskablePPO(
            "MlpPolicy",
            env,
            n_steps=args.n_steps,
            batch_size=args.batch_size,
            n_epochs=args.n_epochs,
            learning_rate=args.learning_rate,
            gamma=args.gamma,
            ent_coef=args.ent_coef,
            seed=args.seed,
            policy_kwargs={"net_arch": list(args.hidden)},
            device=args.device,
            tensorboard_log=str(run_dir),
            verbose=0,
        )
    remaining = args.total_steps - model.num_timesteps
    if remaining > 0:
        model.learn(
            remaining,
            callback=Checkpoints(args, run_dir, config),
            progress_bar=args.progress,
            reset_num_timesteps=not args.resume,
            tb_log_name="sb3",
        )
    save_checkpoint(model, run_dir)
    model.save(run_dir / "policy.zip")
    print(f"wrote {run_dir}", file=sys.stderr)
    return run_dir


if __name__ == "__main__":
    main()
