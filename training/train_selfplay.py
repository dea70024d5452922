"""Self-play masked PPO for Nertz in one readable file (in the style of CleanRL's ppo.py).

One policy plays every seat of some games (self-play) and seat 0 of the others, where the other
seats belong to an opponent drawn at every deal from a pool of the policy's own past snapshots
mixed with scripted agents (``training.opponent_pool``: uniformly, or with ``--pool-sampling pfsp``
the members the learner wins least against more often). The batched engine (``NertzVectorEnv``)
steps all games at once.

The network (``agents.policy.build_scorer``) scores each legal move from that move's own features
(``agents.features``: what it moves, what it exposes, the race for the slot, and the value a
``heuristic`` search of ``--lookahead-depth`` own moves gives it, unless ``--lookahead-features
false``) plus a summary of the observation; illegal actions get a logit of -1e8 and no share of
the entropy. ``--drop-features GROUP ...`` zeroes those groups of ``agents.features.FEATURE_GROUPS``
in every feature vector, in both phases and in the saved policy's play (an ablation). Rollouts
draw moves from the softmax over each row's legal moves, one random number per legal move
(``pair_policy.sample_pairs``); ``--sampler catalogue`` draws one per catalogue entry as runs
before the flag did (the same distribution; a checkpoint from before it resumes so).

Two phases in one run, on the same rollouts:

1. Behaviour cloning (the first ``--bc-steps`` decisions, by default an eighth of
   ``--total-steps``): the policy plays (so it learns the states its own mistakes lead to, as in
   DAgger) and is trained to pick what the ``--teacher`` would in its place; the value head learns
   the returns of its own play. The default teacher, ``heuristic:depth=3``, is the features' own
   search, so its labels cost no second search.
2. PPO, with a cross-entropy pull towards the teacher of weight ``--bc-coef`` fading linearly to 0,
   so the first updates do not forget what cloning taught.

    python -m nertz_env.training.train_selfplay --help
    python -m nertz_env.training.train_selfplay --total-steps 200000 --exp-name quick
    python -m nertz_env.training.train_selfplay --resume runs/<run>/checkpoint.pt

Writes ``runs/{env}__{exp}__{seed}__{time}/`` (printed at the start): ``scalars.jsonl`` (every
update's losses, KL, clip fraction, entropy, pool shares, ...: ``training.scalars``), the same as
TensorBoard logs unless ``--tensorboard false``, ``checkpoint.pt`` (one file with everything needed
to resume exactly, evaluations included), ``policy.pt`` (the policy alone, for
``agents.make("policy", path=...)``), a copy of it every ``--keep-policy-every`` updates in
``policies/policy_{decisions}.pt`` (what ``training.ladder`` rates against training decisions),
``config.json`` and ``evals.jsonl``. Each evaluation is printed as it ends, and a summary table at
the end of the run.
On ``--resume`` the checkpoint's arguments hold: a flag that contradicts them is an error, except
``--total-steps``, ``--stop-after``, ``--progress`` and ``--tensorboard``.
"""

from __future__ import annotations

import json
import math
import pickle
import random
import shlex
import shutil
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tqdm import tqdm

from nertz_env import agents
from nertz_env.agents._scorer import MoveScorer
from nertz_env.agents.features import ActionFeatures
from nertz_env.agents.policy import build_scorer, save_policy
from nertz_env.config import NertzConfig
from nertz_env.training.args import flag_errors, make_run_dir, parse_given, resume_args, rules_config
from nertz_env.training.aux_hidden import HiddenCardsHead
from nertz_env.training.aux_opponents import OpponentMovesHead
from nertz_env.training.central_critic import CentralCritic
from nertz_env.training.checkpoint import (
    CheckpointError,
    atomic_write,
    chance_states,
    check_budget,
    device_generator,
    eval_line,
    evaluate_policy,
    load_torch_checkpoint,
    own_generators,
    remove_partial_files,
    restore_device_generator,
    say,
    set_chance_states,
    summary_table,
    training_device,
    write_json_lines,
)
from nertz_env.training.init_policy import start_from
from nertz_env.training.opponent_pool import Opponents, teacher_seed
from nertz_env.training.oracle import OracleInput, oracle_weight
from nertz_env.training.scalars import ScalarLog, update_scalars
from nertz_env.training.selfplay_args import BEFORE_FLAG, LR_SHAPES, MAY_CHANGE, PER_CALL, REQUIRED, Args, check_args
from nertz_env.training.selfplay_ppo import Loop, Rollout, Seats, advantages, collect
from nertz_env.training.selfplay_ppo import update as update_net
from nertz_env.training.symmetries import Relabeller
from nertz_env.vector import NertzVectorEnv


def start(argv: list[str] | None) -> tuple[Args, Path, dict[str, Any] | None]:
    """The run's arguments, its directory and the checkpoint it resumes from (or None)."""
    args, given = parse_given(Args, argv)
    if args.resume:
        resume = load_torch_checkpoint(args.resume, REQUIRED)
        args = resume_args(Args, {**BEFORE_FLAG, **resume["args"]}, args, given, MAY_CHANGE, PER_CALL)
        next_update = (resume["update"] + 1) * Seats.update_decisions(args)  # the budget one more update reaches
        check_budget(args.resume, given, args.total_steps, resume["global_step"], resume["args"]["total_steps"],
                     next_update)  # fmt: skip
        check_args(args, given)
        return args, Path(args.resume).parent, resume
    if args.bc_steps == -1:
        args = replace(args, bc_steps=args.total_steps // 8)
    check_args(args, given)
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
    net: MoveScorer
    optimizer: torch.optim.Optimizer
    pool: Opponents
    features: ActionFeatures
    teacher: Any
    teacher_in_features: bool
    seats: Seats
    lookahead: int
    critic: CentralCritic | None = None
    oracle: OracleInput | None = None
    oracle_weight: float = 0.0  # this update's (``apply_schedule``)
    aux: HiddenCardsHead | None = None  # --aux-hidden: the auxiliary head (training.aux_hidden)
    aux_opponents: OpponentMovesHead | None = None  # --aux-opponents (training.aux_opponents)
    relabel: Relabeller | None = None  # --relabel (training.symmetries)

    def __post_init__(self) -> None:
        self.obs_dim, self.n_actions = self.envs.layout.size, self.envs.num_actions
        self.batch_size = self.args.num_steps * self.seats.n_learn
        self.minibatch = self.batch_size // self.args.num_minibatches
        self.num_updates = max(1, self.args.total_steps // self.batch_size)
        self.bc_updates = min(self.num_updates, self.args.bc_steps // self.batch_size)

    def parameters(self) -> list[torch.nn.Parameter]:
        """What the optimiser steps: the network's parameters, the oracle input's and the auxiliary heads'."""
        extra = [m for m in (self.oracle, self.aux, self.aux_opponents) if m is not None]
        return [*self.net.parameters(), *(p for m in extra for p in m.parameters())]


def build(args: Args) -> Trainer:
    """Seeding, in one place, then every piece in a fixed order (the draws follow it)."""
    random.seed(args.seed)
    torch.manual_seed(args.seed)
    if args.threads:
        torch.set_num_threads(args.threads)
    device = training_device(args.device)
    rng = np.random.default_rng(args.seed)
    config = rules_config(args.num_players, args.reward, args.rules)
    lookahead = args.lookahead_depth if args.lookahead_features else 0
    envs = NertzVectorEnv(args.num_envs, **config.to_dict())
    net = build_scorer(config, args.hidden, args.action_hidden, lookahead, args.drop_features, args.cycle_features,
                       args.opponent_features, args.identity_features, args.follow_features,
                       args.afterstate, args.move_set, args.race_features)  # fmt: skip
    net = net.to(device)
    if args.init_policy and not args.resume:  # a resumed run's weights are the checkpoint's (restore)
        start_from(net, args.init_policy, config)
    optimizer = torch.optim.Adam(net.parameters(), lr=args.learning_rate, eps=1e-5, foreach=True)
    pool = Opponents(args, config, rng)
    features = net.features  # the rollouts' features are the ones the saved policy plays from
    teacher = agents.make_spec(args.teacher, seed=teacher_seed(args.seed), config=config)
    seats = Seats.build(args.num_envs, args.num_players, args.self_play_fraction)
    critic = None  # built last, so a run without it draws what it drew before the flag
    if args.central_critic:
        critic = CentralCritic(envs, seats.learn_idx, args.hidden[-1], args.hidden, args.learning_rate, device)
    oracle = None
    if args.oracle_policy:  # its zeros draw nothing; stepped by the policy's optimiser
        oracle = OracleInput(envs, seats.learn_idx, args.hidden[0], device, args.oracle_input, config.stock_draw)
        optimizer.add_param_group({"params": list(oracle.parameters())})
    aux = None
    if args.aux_hidden > 0:  # stepped by the policy's optimiser; its layer's random start moves torch's generator
        aux = HiddenCardsHead(envs, seats.learn_idx, args.hidden[-1], device, config.stock_draw)
        optimizer.add_param_group({"params": list(aux.parameters())})
    aux_opponents = None
    if args.aux_opponents > 0:  # stepped likewise; takes no draws (training.aux_opponents)
        aux_opponents = OpponentMovesHead(envs.catalogue, args.num_players, seats.learn_idx, args.hidden[-1], device)
        optimizer.add_param_group({"params": list(aux_opponents.parameters())})
    relabel = Relabeller(config, args.relabel) if args.relabel != "none" else None  # draws only in updates
    return Trainer(args, config, device, rng, envs, net, optimizer, pool, features, teacher,
                   features.plays_as(teacher), seats, lookahead, critic, oracle, aux=aux,
                   aux_opponents=aux_opponents, relabel=relabel)  # fmt: skip


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
        t.pool.win_shares = np.array(resume.get("pool_win_shares", t.pool.win_shares), np.float64)
        if t.pool.win_shares.shape != (len(t.pool),):
            raise ValueError(f"pool_win_shares {t.pool.win_shares.shape} for a pool of {len(t.pool)} members")
        t.envs = pickle.loads(resume["envs"])
        set_chance_states([*t.pool.scripted, t.teacher], resume.get("agents"))  # they draw on where they stopped
        if t.critic is not None:
            t.critic.load_state_dict(resume["critic"])
        if t.oracle is not None:
            t.oracle.load_state_dict(resume["oracle"])
        if t.aux is not None:
            t.aux.load_state_dict(resume["aux"])
        if t.aux_opponents is not None:
            t.aux_opponents.load_state_dict(resume["aux_opponents"])
    except (RuntimeError, ValueError, KeyError, pickle.UnpicklingError) as exc:
        raise CheckpointError(f"--resume {a.resume}: its contents do not fit this trainer ({exc})") from exc
    t.rng.bit_generator.state = resume["numpy_rng"]
    torch.set_rng_state(resume["torch_rng"])
    restore_device_generator(resume, t.device)  # the draws made on the GPU (sample_pairs)
    next_done = resume.get("next_done", torch.zeros(t.seats.n_learn))
    loop = Loop(resume["obs"], resume["masks"], resume["opponent"], next_done, actions,
                list(resume.get("recent", [])), resume["global_step"])  # fmt: skip
    return loop, resume["update"] + 1, list(resume.get("evals", []))


def schedule(t: Trainer, update: int) -> tuple[bool, float, float]:
    """Update ``update``'s (counted from 1) phase, learning rate and teacher pull: cloning (pull 1)
    for the first ``bc_updates``, then PPO, its rate annealed to 0 with ``--anneal-lr`` (linearly, or
    along half a cosine wave with ``--lr-schedule cosine``) and the pull fading from ``--bc-coef`` to
    0 over the PPO phase."""
    a = t.args
    cloning = update <= t.bc_updates
    progress = ppo_progress(t, update)
    lr = a.learning_rate * (anneal_factor(a.lr_schedule, progress) if a.anneal_lr and not cloning else 1.0)
    return cloning, lr, 1.0 if cloning else a.bc_coef * (1.0 - progress)


def anneal_factor(shape: str, progress: float) -> float:
    """The share of the full learning rate at ``progress`` (0 to 1) through the PPO phase: ``linear``
    falls as 1 - progress, ``cosine`` as (1 + cos(pi progress)) / 2; both from 1 to 0."""
    if shape == "linear":
        return 1.0 - progress
    if shape == "cosine":
        return 0.5 * (1.0 + math.cos(math.pi * progress))
    raise ValueError(f"learning-rate schedule {shape!r}: accepted {', '.join(LR_SHAPES)}")


def ppo_progress(t: Trainer, update: int) -> float:
    """0 at the first PPO update to 1 at the end of the run (negative while cloning)."""
    return (update - 1 - t.bc_updates) / max(1, t.num_updates - t.bc_updates)


def draw_temperature(t: Trainer, cloning: bool) -> float:
    """The temperature the learner's moves are drawn at in a rollout: 1 while cloning, else
    ``--explore-temperature`` (``pair_policy.draw``)."""
    return 1.0 if cloning else t.args.explore_temperature


def apply_schedule(t: Trainer, update: int) -> tuple[bool, float, float]:
    """``schedule``'s phase, rate and pull, with the rate set on every parameter group and the
    oracle input's weight (``training.oracle``) set on the trainer."""
    cloning, lr, bc_coef = schedule(t, update)
    for group in t.optimizer.param_groups:
        group["lr"] = lr
    if t.oracle is not None:
        t.oracle_weight = oracle_weight(t.args.oracle_fade, cloning, ppo_progress(t, update), t.args.oracle_hold)
    return cloning, lr, bc_coef


def open_trainer(argv: Sequence[str], as_command: bool = False) -> tuple[Trainer, Loop, Rollout, int]:
    """The trainer ``argv`` (this command's flags) builds, its loop state, a rollout buffer and the
    first update to run, without a run directory, TensorBoard or progress bar: for the tools that
    measure a trainer's updates (``profile_selfplay``, ``loss_gradients``). ``as_command``: a bad
    flag is reported as ``main`` reports it (``args.flag_errors``)."""
    with flag_errors(as_command):
        args, _, resume = start(["--tensorboard", "false", "--progress", "false", *argv])
        t = build(args)
        loop, first, _ = restore(t, resume)
    return t, loop, Rollout.for_trainer(t), first


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
        "pool_win_shares": t.pool.win_shares.copy(),
        "envs": pickle.dumps(t.envs),
        "agents": chance_states([*t.pool.scripted, t.teacher]),  # where their draws stand
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
        **({"oracle": t.oracle.state_dict()} if t.oracle is not None else {}),
        **({"aux": t.aux.state_dict()} if t.aux is not None else {}),
        **({"aux_opponents": t.aux_opponents.state_dict()} if t.aux_opponents is not None else {}),
    }
    atomic_write(run_dir / "checkpoint.pt", lambda tmp: torch.save(state, tmp))


def save_policy_file(t: Trainer, run_dir: Path, loop: Loop, command: str) -> None:
    extra = {"global_step": loop.global_step, "command": command, "seed": t.args.seed}
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


def main(argv: list[str] | None = None, as_command: bool = False) -> Path:
    """Train. ``as_command`` (the command line): a bad flag, spec or checkpoint ends the process with
    ``prog: error: ...`` and status 2 (``args.flag_errors``); else it raises ``ValueError``."""
    with flag_errors(as_command):
        args, run_dir, resume = start(argv)
        t = build(args)  # every agent spec and --init-policy checked before the run directory is made
        loop, first, evals = restore(t, resume)
        make_run_dir(run_dir)
        remove_partial_files(run_dir)
        planned = t.num_updates * t.batch_size  # --total-steps in whole updates
        say(f"run directory: {run_dir}; {t.num_updates:,} updates x {t.batch_size:,} = {planned:,} learner decisions"
            + ("" if planned == args.total_steps else f" (--total-steps {args.total_steps:,}: whole updates only)"))
    flags = sys.argv[1:] if argv is None else argv  # saved in policy.pt as the command that made it
    command = shlex.join(["python", "-m", "nertz_env.training.train_selfplay", *flags])
    write_json_lines(run_dir / "evals.jsonl", evals)  # what the checkpoint holds, nothing after it
    config_json = {"args": asdict(args), "rules": t.config.to_dict()}
    (run_dir / "config.json").write_text(json.dumps(config_json, indent=2, default=str))
    writer = None
    if args.tensorboard:
        from torch.utils.tensorboard import SummaryWriter

        writer = SummaryWriter(str(run_dir))
    scalars = ScalarLog(run_dir, loop.global_step, writer)  # scalars.jsonl, and TensorBoard with --tensorboard
    buf = Rollout.for_trainer(t)
    with tqdm(total=t.num_updates * t.batch_size, initial=(first - 1) * t.batch_size, disable=not args.progress,
              unit="step", dynamic_ncols=True, file=sys.stderr) as bar:  # fmt: skip
        began = time.perf_counter()
        for update in range(first, t.num_updates + 1):
            train_one(t, buf, loop, update, bar, scalars)
            last_update = update == t.num_updates or update - first + 1 == args.stop_after
            eval_due = bool(args.eval_every) and (update % args.eval_every == 0 or last_update)
            keep = bool(args.keep_policy_every) and update % args.keep_policy_every == 0
            if update % args.save_every == 0 or last_update or eval_due or keep:  # evaluations read the saved policy
                save_policy_file(t, run_dir, loop, command)
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
    scalars.close()
    say(summary_table(evals, run_dir, loop.global_step, time.perf_counter() - began))
    return run_dir


def train_one(t: Trainer, buf: Rollout, loop: Loop, update: int, bar, scalars: ScalarLog | None = None) -> None:
    """One rollout and one update at this update's learning rate and teacher pull (figures to ``scalars``)."""
    t0 = time.perf_counter()
    cloning, lr, bc_coef = apply_schedule(t, update)
    collect(t, buf, loop, bc_coef, draw_temperature(t, cloning))
    t_rollout = time.perf_counter() - t0
    adv, ret = advantages(t, buf, loop)
    stats = update_net(t, buf, adv, ret, cloning, bc_coef)
    if update % t.args.snapshot_every == 0:
        t.pool.add(t.net)
    elapsed = time.perf_counter() - t0
    bar.update(t.batch_size)
    mean_score = float(np.mean(loop.recent[-200:])) if loop.recent else float("nan")
    bar.set_postfix(score=f"{mean_score:.1f}", sps=f"{t.batch_size / elapsed:.0f}", phase="bc" if cloning else "ppo")
    if scalars is None:
        return
    times = dict(buf.times, elapsed=elapsed, rollout=t_rollout, lr=lr, score=mean_score, batch=t.batch_size,
                 bc_coef=bc_coef)  # fmt: skip
    figures = update_scalars(stats, times)
    if t.oracle is not None:  # --oracle-policy: this update's weight of the hidden-card input
        figures["charts/oracle_weight"] = t.oracle_weight
    figures.update({f"pool/{name}": value for name, value in t.pool.summary().items()})
    scalars.write(loop.global_step, update, figures)


if __name__ == "__main__":
    main(as_command=True)
