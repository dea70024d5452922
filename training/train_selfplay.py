"""Self-play masked PPO for Nertz in one readable file (in the style of CleanRL's ppo.py).

One policy plays every seat of some games (self-play) and seat 0 of the others, where the other
seats belong to an opponent drawn at every deal from a pool of the policy's own past snapshots
mixed with scripted agents. The batched engine (``NertzVectorEnv``) steps all games at once.

The network (``agents.policy.build_scorer``) scores each legal move from that move's own features
(``agents.features``: what it moves, what it exposes, the race for the slot, and the value a
``heuristic`` search of ``--lookahead-depth`` own moves gives it, unless ``--lookahead-features
false``) plus a summary of the observation; illegal actions get a logit of -1e8 and no share of
the entropy. ``--drop-features GROUP ...`` zeroes those groups of ``agents.features.FEATURE_GROUPS``
in every feature vector, in both phases and in the saved policy's play (an ablation). Rollouts
draw moves from the softmax over each row's legal moves, one random number per legal move
(``selfplay_ppo.sample_pairs``); ``--sampler catalogue`` draws one per catalogue entry as runs
before the flag did (the same distribution; a checkpoint from before it resumes so).

Two phases in one run, on the same rollouts:

1. Behaviour cloning (the first ``--bc-steps`` decisions, by default an eighth of
   ``--total-steps``): the policy plays (so it learns the states its own mistakes lead to, as in
   DAgger) and is trained to pick what the ``--teacher`` would in its place; the value head learns
   the returns of its own play. The default teacher, ``heuristic:depth=3``, is the features' own
   search, so its labels cost no second search.
2. PPO, with a cross-entropy pull towards the teacher of weight ``--bc-coef`` fading linearly to 0,
   so the first updates do not forget what cloning taught.

    python -m training.train_selfplay --help
    python -m training.train_selfplay --total-steps 200000 --exp-name quick
    python -m training.train_selfplay --resume runs/<run>/checkpoint.pt

Writes ``runs/{env}__{exp}__{seed}__{time}/`` (printed at the start): TensorBoard logs,
``checkpoint.pt`` (one file with everything needed to resume exactly, evaluations included),
``policy.pt`` (the policy alone, for ``agents.make("policy", path=...)``), a copy of it every
``--keep-policy-every`` updates in ``policies/policy_{decisions}.pt`` (what ``training.ladder``
rates against training decisions), ``config.json`` and ``evals.jsonl``. Each evaluation is printed
as it ends, and a summary table at the end of the run.
On ``--resume`` the checkpoint's arguments hold: a flag that contradicts them is an error, except
``--total-steps``, ``--stop-after``, ``--progress`` and ``--tensorboard``.
"""

from __future__ import annotations

import json
import math
import pickle
import random
import shutil
import sys
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tqdm import tqdm

from nertz_env import agents
from nertz_env.agents.features import FEATURE_GROUPS, ActionFeatures, feature_columns
from nertz_env.agents.policy import build_scorer, save_policy
from nertz_env.config import NertzConfig
from nertz_env.options import parse_rule_options
from nertz_env.training.args import arg, parse_given, resume_args
from nertz_env.training.central_critic import CentralCritic
from nertz_env.training.checkpoint import (
    CheckpointError,
    atomic_write,
    device_generator,
    eval_line,
    evaluate_policy,
    load_torch_checkpoint,
    own_generators,
    remove_partial_files,
    resolve_device,
    restore_device_generator,
    say,
    summary_table,
    training_device,
    write_json_lines,
)
from nertz_env.training.init_policy import start_from
from nertz_env.training.selfplay_ppo import Loop, Opponents, Rollout, Seats, advantages, collect, log_scalars
from nertz_env.training.selfplay_ppo import update as update_net
from nertz_env.vector import NertzVectorEnv


@dataclass
class Args:
    """Self-play masked PPO for Nertz."""

    exp_name: str = arg("selfplay", "name of the run (logs go to {out_dir}/nertz_v0__{exp_name}__{seed}__{time})")
    seed: int = arg(1, "the one seed of torch, numpy, the games and the opponent draws")
    total_steps: int = arg(8_000_000, "learner decisions to train on (the default takes ~21 min on one CPU core)")
    bc_steps: int = arg(
        -1, "the first decisions of total_steps train by cloning the teacher (0: pure PPO; -1: total_steps / 8)"
    )
    teacher: str = arg("heuristic:depth=3", "the agent spec cloned in the first phase and pulled towards in the second")
    bc_coef: float = arg(0.1, "weight of the pull towards the teacher when PPO starts, fading linearly to 0")
    num_envs: int = arg(64, "games stepped at once")
    num_players: int = arg(4, "players per game")
    num_steps: int = arg(64, "ticks per rollout")
    self_play_fraction: float = arg(0.5, "share of games in which the learner holds every seat")
    scripted: tuple[str, ...] = arg(("greedy", "heuristic"), "agent specs of the opponent pool (e.g. policy:path=)")
    rules: tuple[str, ...] = arg((), "NertzConfig options KEY=VALUE of the games (e.g. partners=true)")
    pool_size: int = arg(4, "past snapshots of the policy kept as opponents")
    snapshot_every: int = arg(20, "updates between snapshots added to the pool")
    reward: str = arg(
        "relative", "reward mode of the env: dense, sparse or relative", choices=["dense", "sparse", "relative"]
    )
    win_bonus: float = arg(0.0, "added to a learner's reward when a hand ends: this x (its win share - 1/players)")
    nertz_bonus: float = arg(0.0, "added to each learner's reward per card that leaves its Nertz pile (the race, R5)")
    hidden: tuple[int, ...] = arg((128, 128), "hidden layer sizes of the observation summary")
    action_hidden: int = arg(64, "width of the layers that score each move")
    lookahead_features: bool = arg(True, "also give the network the heuristic's look-ahead value of each move")
    lookahead_depth: int = arg(3, "depth of that look-ahead (1 to 4; the heuristic itself plays at 2)")
    cycle_features: bool = arg(False, "also give the network the stock-cycle columns (agents.features.CYCLE_COLUMNS)")
    opponent_features: bool = arg(False, "also give it the opponent columns (agents.features.OPPONENT_COLUMNS)")
    central_critic: bool = arg(
        False, "advantages from a critic that also sees the hidden cards (training.central_critic)"
    )
    critic_lr: float = arg(0.0, "that critic's own constant learning rate (0: the policy's, annealed with it)")
    drop_features: tuple[str, ...] = arg(
        (), "feature groups zeroed in training and in the saved policy's play (an ablation)", choices=[*FEATURE_GROUPS]
    )
    sampler: str = arg(
        "pairs",
        "how rollouts draw moves: pairs (one draw per legal move) or catalogue (one per catalogue entry, the draws "
        "of runs before this flag; the same distribution)",
        choices=["pairs", "catalogue"],
    )
    learning_rate: float = arg(3e-4, "Adam learning rate")
    anneal_lr: bool = arg(True, "anneal the learning rate linearly to 0")
    gamma: float = arg(0.995, "discount factor")
    gae_lambda: float = arg(0.95, "GAE lambda")
    num_minibatches: int = arg(4, "minibatches per epoch")
    update_epochs: int = arg(3, "epochs per update")
    clip_coef: float = arg(0.2, "PPO clip coefficient")
    ent_coef: float = arg(0.01, "entropy coefficient")
    vf_coef: float = arg(0.5, "value loss coefficient")
    max_grad_norm: float = arg(0.5, "gradient clipping norm")
    target_kl: float = arg(0.0, "stop the epochs of an update early above this KL (0: never)")
    device: str = arg("auto", "auto (CUDA when present), cpu or cuda")
    threads: int = arg(1, "torch CPU threads (0: torch's default; 2 idle cores: 1.2x one; results depend on it)")
    eval_every: int = arg(50, "updates between evaluations against greedy and heuristic (0: never)")
    eval_deals: int = arg(100, "duplicate deals per evaluation")
    save_every: int = arg(10, "updates between checkpoints")
    keep_policy_every: int = arg(50, "updates between kept copies of policy.pt in policies/ (0: none)")
    out_dir: str = arg("runs", "where runs are written")
    run_dir: str = arg("", "write into this directory instead of a new one under out_dir")
    resume: str = arg("", "a checkpoint.pt to continue from (same results as an uninterrupted run)")
    init_policy: str = arg("", "start the network from this policy.pt of the same shape (e.g. a clone, then PPO)")
    stop_after: int = arg(0, "stop this invocation after so many updates, with a checkpoint (0: run to the end)")
    progress: bool = arg(True, "show a progress bar")
    tensorboard: bool = arg(True, "write TensorBoard logs")


REQUIRED = ("args", "update", "global_step", "net", "optimizer", "pool", "envs", "numpy_rng", "torch_rng", "obs")
MAY_CHANGE = {"total_steps", "tensorboard"}  # on resume: the saved value unless given
PER_CALL = {"resume", "stop_after", "progress"}  # on resume: this invocation's value
# Flags added after runs were saved, with the value those runs trained with: a checkpoint
# without the flag resumes as it began.
BEFORE_FLAG = {"sampler": "catalogue", "central_critic": False, "critic_lr": 0.0, "nertz_bonus": 0.0,
               "opponent_features": False}  # fmt: skip


def check_args(args: Args) -> None:
    """Every flag in range, or an error naming it (before anything is built or written)."""
    positive = ("num_envs", "num_players", "num_steps", "num_minibatches", "update_epochs", "save_every",
                "snapshot_every", "pool_size", "eval_deals", "hidden", "action_hidden")  # fmt: skip
    for name in positive:
        values = getattr(args, name) if isinstance(getattr(args, name), tuple) else (getattr(args, name),)
        if not values or min(values) < 1:
            raise ValueError(f"--{name.replace('_', '-')} {getattr(args, name)}: accepted integers >= 1")
    for name in ("eval_every", "stop_after", "threads", "keep_policy_every"):
        if getattr(args, name) < 0:
            raise ValueError(f"--{name.replace('_', '-')} {getattr(args, name)}: accepted an integer >= 0")
    if not 0.0 <= args.self_play_fraction <= 1.0:
        raise ValueError(f"--self-play-fraction {args.self_play_fraction}: accepted 0 to 1")
    for name in ("win_bonus", "nertz_bonus", "critic_lr"):
        if not math.isfinite(getattr(args, name)) or getattr(args, name) < 0:
            raise ValueError(f"--{name.replace('_', '-')} {getattr(args, name)}: accepted a finite number >= 0")
    if args.bc_steps < -1:
        raise ValueError(f"--bc-steps {args.bc_steps}: accepted -1 (an eighth of --total-steps) or >= 0")
    if args.lookahead_features and not 1 <= args.lookahead_depth <= 4:
        raise ValueError(f"--lookahead-depth {args.lookahead_depth}: accepted 1 to 4")
    if not args.scripted:
        raise ValueError("--scripted needs at least one agent for the opponent pool")
    resolve_device(args.device)
    try:
        feature_columns(args.drop_features)
    except ValueError as exc:
        raise ValueError(f"--drop-features {' '.join(args.drop_features)}: {exc}") from None
    seats = Seats.build(args.num_envs, args.num_players, args.self_play_fraction)
    batch = args.num_steps * seats.n_learn
    if args.total_steps < batch:
        raise ValueError(
            f"--total-steps {args.total_steps} is less than one update ({args.num_steps} ticks x {seats.n_learn} "
            f"learner seats = {batch} decisions): give at least {batch}"
        )
    if args.num_minibatches > batch:
        raise ValueError(f"--num-minibatches {args.num_minibatches} exceeds the {batch} decisions of an update")


def start(argv: list[str] | None) -> tuple[Args, Path, dict[str, Any] | None]:
    """The run's arguments, its directory and the checkpoint it resumes from (or None)."""
    args, given = parse_given(Args, argv)
    if args.resume:
        resume = load_torch_checkpoint(args.resume, REQUIRED)
        args = resume_args(Args, {**BEFORE_FLAG, **resume["args"]}, args, given, MAY_CHANGE, PER_CALL)
        check_args(args)
        return args, Path(args.resume).parent, resume
    if args.bc_steps == -1:
        args = replace(args, bc_steps=args.total_steps // 8)
    check_args(args)
    if args.run_dir:
        return args, Path(args.run_dir), None
    return args, Path(args.out_dir) / f"nertz_v0__{args.exp_name}__{args.seed}__{int(time.time())}", None


@dataclass
class Trainer:
    """The pieces the loop's functions share (``selfplay_ppo``)."""

    args: Args
    config: NertzConfig
    device: torch.device
    rng: np.random.Generator
    envs: NertzVectorEnv
    net: torch.nn.Module
    optimizer: torch.optim.Optimizer
    pool: Opponents
    features: ActionFeatures
    teacher: Any
    teacher_in_features: bool
    seats: Seats
    lookahead: int
    critic: CentralCritic | None = None

    def __post_init__(self) -> None:
        self.obs_dim, self.n_actions = self.envs.layout.size, self.envs.num_actions
        self.batch_size = self.args.num_steps * self.seats.n_learn
        self.minibatch = self.batch_size // self.args.num_minibatches
        self.num_updates = max(1, self.args.total_steps // self.batch_size)
        self.bc_updates = min(self.num_updates, self.args.bc_steps // self.batch_size)


def build(args: Args) -> Trainer:
    """Seeding, in one place, then every piece in a fixed order (the draws follow it)."""
    random.seed(args.seed)
    torch.manual_seed(args.seed)
    if args.threads:
        torch.set_num_threads(args.threads)
    device = training_device(args.device)
    rng = np.random.default_rng(args.seed)
    config = NertzConfig(num_players=args.num_players, reward=args.reward, **parse_rule_options(args.rules))
    lookahead = args.lookahead_depth if args.lookahead_features else 0
    envs = NertzVectorEnv(args.num_envs, **config.to_dict())
    net = build_scorer(config, args.hidden, args.action_hidden, lookahead, args.drop_features, args.cycle_features,
                       args.opponent_features)  # fmt: skip
    net = net.to(device)
    if args.init_policy and not args.resume:  # a resumed run's weights are the checkpoint's (restore)
        start_from(net, args.init_policy, config)
    optimizer = torch.optim.Adam(net.parameters(), lr=args.learning_rate, eps=1e-5, foreach=True)
    pool = Opponents(args, config, rng)
    features = net.features  # the rollouts' features are the ones the saved policy plays from
    teacher = agents.make_spec(args.teacher, seed=args.seed, config=config)
    seats = Seats.build(args.num_envs, args.num_players, args.self_play_fraction)
    critic = None  # built last, so a run without it draws what it drew before the flag
    if args.central_critic:
        critic = CentralCritic(envs, seats.learn_idx, args.hidden[-1], args.hidden, args.learning_rate, device)
    return Trainer(args, config, device, rng, envs, net, optimizer, pool, features, teacher,
                   features.plays_as(teacher), seats, lookahead, critic)  # fmt: skip


def restore(t: Trainer, resume: dict[str, Any] | None) -> tuple[Loop, int, list[dict[str, Any]]]:
    """The loop's state: dealt afresh, or as the checkpoint left it. Returns it with the first
    update to run and the evaluations done so far."""
    a = t.args
    actions = np.zeros((a.num_envs, a.num_players), np.int64)
    if resume is None:
        obs, masks = t.envs.reset(seed=a.seed)
        opponent = t.pool.draw(len(t.seats.mixed))
        return Loop(obs.copy(), masks.copy(), opponent, torch.zeros(t.seats.n_learn), actions, [], 0), 1, []
    try:
        t.net.load_state_dict(resume["net"])
        t.optimizer.load_state_dict(resume["optimizer"])
        for sd in resume["pool"]:  # the pool's own copy of the learner's network, then the snapshot's weights
            t.pool.add(t.net)
            t.pool.snapshots[-1].load_state_dict(sd)
        t.envs = pickle.loads(resume["envs"])
        if t.critic is not None:
            t.critic.load_state_dict(resume["critic"])
    except (RuntimeError, ValueError, KeyError, pickle.UnpicklingError) as exc:
        raise CheckpointError(f"--resume {a.resume}: its contents do not fit this trainer ({exc})") from exc
    t.rng.bit_generator.state = resume["numpy_rng"]
    torch.set_rng_state(resume["torch_rng"])
    restore_device_generator(resume, t.device)  # the draws made on the GPU (sample_pairs)
    next_done = resume.get("next_done", torch.zeros(t.seats.n_learn))
    loop = Loop(resume["obs"], resume["masks"], resume["opponent"], next_done, actions,
                list(resume.get("recent", [])), resume["global_step"])  # fmt: skip
    return loop, resume["update"] + 1, list(resume.get("evals", []))


def save(t: Trainer, run_dir: Path, update: int, loop: Loop, evals: list[dict[str, Any]]) -> None:
    """The checkpoint: one file, written atomically, with everything the next update depends on."""
    state = {
        "args": asdict(t.args),
        "run_dir": str(run_dir),
        "update": update,
        "global_step": loop.global_step,
        "net": t.net.state_dict(),
        "optimizer": t.optimizer.state_dict(),
        "pool": [s.state_dict() for s in t.pool.snapshots],
        "envs": pickle.dumps(t.envs),
        "numpy_rng": t.rng.bit_generator.state,
        "torch_rng": torch.get_rng_state(),
        **device_generator(t.device),
        "obs": loop.obs.copy(),
        "masks": loop.masks.copy(),
        "opponent": loop.opponent.copy(),
        "next_done": loop.next_done.clone(),
        "recent": loop.recent[-200:],
        "evals": evals,
        **({"critic": t.critic.state_dict()} if t.critic is not None else {}),
    }
    atomic_write(run_dir / "checkpoint.pt", lambda tmp: torch.save(state, tmp))


def save_policy_file(t: Trainer, run_dir: Path, loop: Loop) -> None:
    extra = {"global_step": loop.global_step, "command": " ".join(sys.argv), "seed": t.args.seed}
    atomic_write(run_dir / "policy.pt", lambda tmp: save_policy(
        tmp, t.net, t.config, t.args.hidden, extra=extra, action_hidden=t.args.action_hidden))  # fmt: skip


def run_eval(t: Trainer, run_dir: Path, update: int, loop: Loop, writer) -> dict[str, Any]:
    """Evaluate the policy.pt just saved, on its own generators (the run's are left as they are)."""
    with own_generators(t.device):
        result = evaluate_policy(run_dir / "policy.pt", t.config, t.args.eval_deals, seed=t.args.seed + update)
    result.update(update=update, global_step=loop.global_step)
    say(eval_line(result))
    if writer is not None:
        for rival in ("greedy", "heuristic"):
            writer.add_scalar(f"eval/win_share_vs_{rival}", result[rival]["win_share"], loop.global_step)
            writer.add_scalar(f"eval/score_vs_{rival}", result[rival]["score"], loop.global_step)
    return result


def main(argv: list[str] | None = None) -> Path:
    args, run_dir, resume = start(argv)
    run_dir.mkdir(parents=True, exist_ok=True)
    remove_partial_files(run_dir)
    say(f"run directory: {run_dir}")
    t = build(args)
    loop, first, evals = restore(t, resume)
    write_json_lines(run_dir / "evals.jsonl", evals)  # what the checkpoint holds, nothing after it
    config_json = {"args": asdict(args), "rules": t.config.to_dict()}
    (run_dir / "config.json").write_text(json.dumps(config_json, indent=2, default=str))
    writer = None
    if args.tensorboard:
        from torch.utils.tensorboard import SummaryWriter

        writer = SummaryWriter(str(run_dir))
    buf = Rollout.for_trainer(t)
    bar = tqdm(total=t.num_updates * t.batch_size, initial=(first - 1) * t.batch_size, disable=not args.progress,
               unit="step", dynamic_ncols=True, file=sys.stderr)  # fmt: skip
    began = time.perf_counter()
    for update in range(first, t.num_updates + 1):
        train_one(t, buf, loop, update, bar, writer)
        last_update = update == t.num_updates or update - first + 1 == args.stop_after
        eval_due = bool(args.eval_every) and (update % args.eval_every == 0 or last_update)
        keep = bool(args.keep_policy_every) and update % args.keep_policy_every == 0
        if update % args.save_every == 0 or last_update or eval_due or keep:  # evaluations read the saved policy
            save_policy_file(t, run_dir, loop)
            if keep:  # a snapshot for the ladder, named by the decisions trained on
                kept = run_dir / "policies" / f"policy_{loop.global_step:010d}.pt"
                kept.parent.mkdir(exist_ok=True)
                atomic_write(kept, lambda tmp: shutil.copyfile(run_dir / "policy.pt", tmp))
            if eval_due:
                evals.append(run_eval(t, run_dir, update, loop, writer))
                write_json_lines(run_dir / "evals.jsonl", evals)
            save(t, run_dir, update, loop, evals)
        if last_update:
            break
    bar.close()
    if writer is not None:
        writer.close()
    say(summary_table(evals, run_dir, loop.global_step, time.perf_counter() - began))
    return run_dir


def train_one(t: Trainer, buf: Rollout, loop: Loop, update: int, bar, writer) -> None:
    """One rollout and one update, with the learning rate and teacher pull of this update."""
    a = t.args
    t0 = time.perf_counter()
    cloning = update <= t.bc_updates
    ppo_progress = (update - 1 - t.bc_updates) / max(1, t.num_updates - t.bc_updates)  # 0 .. 1 over the PPO phase
    lr = a.learning_rate * (1.0 - ppo_progress if a.anneal_lr and not cloning else 1.0)
    t.optimizer.param_groups[0]["lr"] = lr
    bc_coef = 1.0 if cloning else a.bc_coef * (1.0 - ppo_progress)
    collect(t, buf, loop, bc_coef)
    t_rollout = time.perf_counter() - t0
    adv, ret = advantages(t, buf, loop)
    stats = update_net(t, buf, adv, ret, cloning, bc_coef)
    if update % a.snapshot_every == 0:
        t.pool.add(t.net)
    elapsed = time.perf_counter() - t0
    bar.update(t.batch_size)
    mean_score = float(np.mean(loop.recent[-200:])) if loop.recent else float("nan")
    bar.set_postfix(score=f"{mean_score:.1f}", sps=f"{t.batch_size / elapsed:.0f}", phase="bc" if cloning else "ppo")
    if writer is not None:
        times = dict(buf.times, elapsed=elapsed, rollout=t_rollout, lr=lr, score=mean_score, batch=t.batch_size,
                     bc_coef=bc_coef)  # fmt: skip
        log_scalars(writer, stats, times, loop.global_step)


if __name__ == "__main__":
    main()
