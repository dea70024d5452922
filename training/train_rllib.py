"""Shared-policy masked PPO for Nertz on a Ray cluster with RLlib (new API stack).

One policy plays every seat (``nertz_env.integrations.rllib.ppo_config``); env runners sample
hands in parallel on as many CPUs (or machines) as Ray has, learners update the policy.

    python -m nertz_env.training.train_rllib --help
    python -m nertz_env.training.train_rllib --iterations 5 --num-env-runners 2 --num-players 2
    python -m nertz_env.training.train_rllib --address auto --num-env-runners 64 --num-learners 2   # a cluster
    python -m nertz_env.training.train_rllib --iterations 20 --eval-deals 100 --eval-opponent greedy

Runs on a local Ray instance by default (``--num-cpus``), or joins a running cluster with
``--address`` (``auto``, or ``ray://host:10001``), shipping the packages ``nertz_env``, ``agents``
and ``training`` to its workers (``runtime_env`` ``py_modules``; the nodes need the dependencies
of the ``rllib`` extra installed). Prints env steps (ticks) per second every iteration.

Writes the RLlib checkpoint (``algo.save``) to ``--checkpoint-dir``, by default
``runs/nertz_v0__{exp}__{seed}__{time}/``, with ``args.json`` and ``nertz_config.json`` in it, so
that ``agents.make("rllib", path=..., config=NertzConfig(**json))`` plays it (after
``import agents.rllib_policy``). Needs ``pip install 'nertz-env[rllib]'`` in a virtual
environment of its own (RLlib pins gymnasium).
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nertz_env.cli_checks import Parser, require
from nertz_env.config import REWARD_MODES, NertzConfig
from nertz_env.training.args import arg, check_counts, check_numbers, flag_errors, parse, rules_config, to_json


@dataclass
class Args:
    """Shared-policy masked PPO for Nertz with RLlib."""

    exp_name: str = arg("rllib", "name of the run (written to {out_dir}/nertz_v0__{exp_name}__{seed}__{time})")
    seed: int = arg(1, "RLlib's seed (torch, env runners' deals)")
    iterations: int = arg(10, "training iterations (each samples --train-batch-size ticks, then updates)")
    address: str = arg("", "a Ray cluster to join (auto, or ray://host:10001); empty starts a local Ray")
    num_cpus: int = arg(0, "CPUs of the local Ray instance (0: all of this machine's)")
    num_env_runners: int = arg(2, "remote env runners (0: sample in the driver)")
    num_envs_per_env_runner: int = arg(1, "hands each env runner plays side by side (RLlib >= 2.46)")
    num_learners: int = arg(0, "remote learners (0: learn in the driver)")
    num_players: int = arg(4, "players per hand")
    reward: str = arg("relative", "reward mode of the env", choices=list(REWARD_MODES))
    rules: tuple[str, ...] = arg((), "more NertzConfig options as key=value, e.g. stock_draw=1")
    hidden: tuple[int, ...] = arg((256, 256), "hidden layer sizes of the policy and value MLPs")
    train_batch_size: int = arg(4000, "ticks sampled per iteration (each holds one decision per player)")
    minibatch_size: int = arg(500, "PPO minibatch size")
    num_epochs: int = arg(4, "PPO epochs per iteration")
    learning_rate: float = arg(3e-4, "Adam learning rate")
    ent_coef: float = arg(0.01, "entropy coefficient")
    threads: int = arg(0, "torch CPU threads of the driver, where a local learner trains (0: torch's default)")
    save_every: int = arg(0, "iterations between checkpoints (0: only at the end)")
    out_dir: str = arg("runs", "where runs are written")
    checkpoint_dir: str = arg("", "write the checkpoint here (default: a new run directory under out_dir)")
    eval_deals: int = arg(0, "duplicate deals against --eval-opponent after training (0: none)")
    eval_opponent: str = arg("greedy", "the agent in the other seats of the evaluation")


def nertz_config(args: Args) -> NertzConfig:
    return rules_config(args.num_players, args.reward, args.rules)


def check_args(args: Args) -> None:
    """Every number in range, or a ``ValueError`` naming the flag (before Ray starts or anything is written)."""
    check_counts(args, ("iterations", "num_envs_per_env_runner", "train_batch_size", "minibatch_size", "num_epochs"), 1)
    check_counts(args, ("seed", "num_cpus", "num_env_runners", "num_learners", "threads", "save_every",
                        "eval_deals"), 0)  # fmt: skip
    if not args.hidden or min(args.hidden) < 1:
        raise ValueError(f"--hidden {args.hidden}: accepted layer sizes >= 1")
    check_numbers(args)


def iteration_line(result: Mapping[str, Any], wall_s: float, policy_id: str) -> tuple[str, float]:
    """One line of progress and the iteration's env steps per second (sampling and learning)."""
    runners = result.get("env_runners", {})
    steps = float(runners.get("num_env_steps_sampled", 0))
    per_s = steps / max(wall_s, 1e-9)
    # Seat 0's return: with a shared policy and relative rewards, the sum over seats is 0.
    ret = runners.get("agent_episode_returns_mean", {}).get("player_0")
    length = runners.get("episode_len_mean")
    loss = result.get("learners", {}).get(policy_id, {}).get("total_loss")
    line = (
        f"iter {result['training_iteration']:>4}  ticks {int(steps):>7}  "
        f"total {int(result.get('num_env_steps_sampled_lifetime', 0)):>9}  {wall_s:6.1f} s  "
        f"{per_s:8.0f} env steps/s  hands {int(runners.get('num_episodes', 0)):>4}"
    )
    if length is not None:
        line += f"  ticks/hand {float(length):6.1f}"
    if ret is not None:
        line += f"  seat-0 return {float(ret):+7.2f}"
    if loss is not None:
        line += f"  loss {float(loss):.4f}"
    return line, per_s


def save(algo, path: Path, config: NertzConfig) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    algo.save(str(path))
    (path / "nertz_config.json").write_text(json.dumps(config.to_dict(), indent=2))
    return path


def evaluate_checkpoint(path: Path, config: NertzConfig, deals: int, opponent: str, seed: int) -> str:
    """The harness's duplicate format: the trained policy against ``opponent`` in every other seat."""
    from nertz_env.agents.rllib_policy import RLlibAgent
    from nertz_env.training.evaluate import evaluate, format_report

    me = RLlibAgent(config=config, path=path)
    lineup = [me] + [opponent] * (config.num_players - 1)
    report = evaluate(lineup, hands=deals, seed=seed, config=config, progress=False)
    return format_report(report)


def main(argv: list[str] | None = None, as_command: bool = False) -> Path:
    """Train. ``as_command`` (the command line): a bad flag, or ray absent, ends the process with
    ``prog: error: ...`` and status 2 (``args.flag_errors``); else it raises."""
    with flag_errors(as_command):
        args = parse(Args, argv)
        check_args(args)
        config = nertz_config(args)
        if as_command:
            require(Parser(prog=Path(sys.argv[0]).name), "ray", what="train_rllib")
    import ray

    from nertz_env.integrations import rllib as nertz_rllib

    if args.checkpoint_dir:
        checkpoint = Path(args.checkpoint_dir).resolve()
    else:
        checkpoint = (Path(args.out_dir) / f"nertz_v0__{args.exp_name}__{args.seed}__{int(time.time())}").resolve()
    checkpoint.mkdir(parents=True, exist_ok=True)
    (checkpoint / "args.json").write_text(to_json(args))

    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    own_ray = not ray.is_initialized()  # a caller (a test, a notebook) may have started Ray already
    if own_ray and args.address:
        # The project's packages travel to the cluster's workers; its dependencies must be installed there.
        import nertz_env
        from nertz_env import agents, training

        ray.init(address=args.address, runtime_env={"py_modules": [nertz_env, agents, training]})
    elif own_ray:
        ray.init(address="local", num_cpus=args.num_cpus or os.cpu_count(), include_dashboard=False)
    try:
        algo_config = nertz_rllib.ppo_config(
            num_env_runners=args.num_env_runners,
            num_learners=args.num_learners,
            num_envs_per_env_runner=args.num_envs_per_env_runner,
            hiddens=args.hidden,
            train_batch_size=args.train_batch_size,
            minibatch_size=args.minibatch_size,
            num_epochs=args.num_epochs,
            lr=args.learning_rate,
            entropy_coeff=args.ent_coef,
            seed=args.seed,
            config=config,
        )
        algo = algo_config.build_algo()
        print(f"{checkpoint}\n{ray.cluster_resources().get('CPU', 0):.0f} CPUs, {args.num_env_runners} env runners, "
              f"{args.num_learners} learners, {config.num_players} players")
        rates = []
        for it in range(1, args.iterations + 1):
            t0 = time.perf_counter()
            result = algo.train()
            line, per_s = iteration_line(result, time.perf_counter() - t0, nertz_rllib.POLICY_ID)
            rates.append(per_s)
            print(line, flush=True)
            if args.save_every and it % args.save_every == 0 and it < args.iterations:
                save(algo, checkpoint, config)
        save(algo, checkpoint, config)
        print(f"median {statistics.median(rates):.0f} env steps/s over {len(rates)} iterations")
        print(f"checkpoint {checkpoint}")
        algo.stop()
    finally:
        if own_ray:
            ray.shutdown()
    if args.eval_deals:
        print(evaluate_checkpoint(checkpoint, config, args.eval_deals, args.eval_opponent, args.seed))
    return checkpoint


if __name__ == "__main__":
    main(as_command=True)
