"""Self-play masked PPO for Nertz in one readable file (in the style of CleanRL's ppo.py).

One policy plays every seat of some games (self-play) and seat 0 of the others, where the other
seats belong to an opponent drawn at every deal from a pool of the policy's own past snapshots
mixed with scripted agents. The batched engine (``NertzVectorEnv``) steps all games at once.

The network (``agents.policy.build_scorer``) scores each legal move from that move's own features
(``agents.features``: what it moves, what it exposes, the race for the slot, and the value a
``heuristic`` search of ``--lookahead-depth`` own moves gives it, unless ``--lookahead-features
false``) plus a summary of the observation; illegal actions get a logit of -1e8 and no share of
the entropy.

Two phases in one run, on the same rollouts:

1. Behaviour cloning (the first ``--bc-steps`` decisions): the policy plays (so it learns the
   states its own mistakes lead to, as in DAgger) and is trained to pick what the ``--teacher``
   would in its place; the value head learns the returns of its own play. The default teacher,
   ``heuristic:depth=3``, is the features' own search, so its labels cost no second search.
2. PPO, with a cross-entropy pull towards the teacher of weight ``--bc-coef`` fading linearly to 0,
   so the first updates do not forget what cloning taught.

    python -m training.train_selfplay --help
    python -m training.train_selfplay --total-steps 200000 --exp-name quick
    python -m training.train_selfplay --resume runs/<run>/checkpoint.pt

Writes ``runs/{env}__{exp}__{seed}__{time}/``: TensorBoard logs, ``checkpoint.pt`` (everything
needed to resume exactly), ``policy.pt`` (the policy alone, for ``agents.make("policy", path=...)``),
``config.json`` and ``evals.jsonl``.
"""

from __future__ import annotations

import copy
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
from tqdm import tqdm

from nertz_env import agents
from nertz_env.agents.features import ActionFeatures
from nertz_env.agents.policy import build_scorer, save_policy
from nertz_env.config import NertzConfig
from nertz_env.training.args import arg, parse
from nertz_env.vector import NertzVectorEnv


@dataclass
class Args:
    """Self-play masked PPO for Nertz."""

    exp_name: str = arg("selfplay", "name of the run (logs go to {out_dir}/nertz_v0__{exp_name}__{seed}__{time})")
    seed: int = arg(1, "the one seed of torch, numpy, the games and the opponent draws")
    total_steps: int = arg(8_000_000, "learner decisions to train on (the default takes ~21 min on one CPU core)")
    bc_steps: int = arg(1_000_000, "the first decisions of total_steps train by cloning the teacher (0: pure PPO)")
    teacher: str = arg("heuristic:depth=3", "the agent spec cloned in the first phase and pulled towards in the second")
    bc_coef: float = arg(0.1, "weight of the pull towards the teacher when PPO starts, fading linearly to 0")
    num_envs: int = arg(64, "games stepped at once")
    num_players: int = arg(4, "players per game")
    num_steps: int = arg(64, "ticks per rollout")
    self_play_fraction: float = arg(0.5, "share of games in which the learner holds every seat")
    scripted: tuple[str, ...] = arg(("greedy", "heuristic"), "scripted opponents in the pool")
    pool_size: int = arg(4, "past snapshots of the policy kept as opponents")
    snapshot_every: int = arg(20, "updates between snapshots added to the pool")
    reward: str = arg(
        "relative", "reward mode of the env: dense, sparse or relative", choices=["dense", "sparse", "relative"]
    )
    hidden: tuple[int, ...] = arg((128, 128), "hidden layer sizes of the observation summary")
    action_hidden: int = arg(64, "width of the layers that score each move")
    lookahead_features: bool = arg(True, "also give the network the heuristic's look-ahead value of each move")
    lookahead_depth: int = arg(3, "depth of that look-ahead (1 to 4; the heuristic itself plays at 2)")
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
    threads: int = arg(1, "torch CPU threads (0: torch's default; the nets are small, one thread is fastest)")
    eval_every: int = arg(50, "updates between evaluations against greedy and heuristic (0: never)")
    eval_deals: int = arg(100, "duplicate deals per evaluation")
    save_every: int = arg(10, "updates between checkpoints")
    out_dir: str = arg("runs", "where runs are written")
    run_dir: str = arg("", "write into this directory instead of a new one under out_dir")
    resume: str = arg("", "a checkpoint.pt to continue from (same results as an uninterrupted run)")
    stop_after: int = arg(0, "stop this invocation after so many updates, with a checkpoint (0: run to the end)")
    progress: bool = arg(True, "show a progress bar")
    tensorboard: bool = arg(True, "write TensorBoard logs")


class Opponents:
    """The pool: scripted agents and frozen snapshots of the policy, drawn per game at each deal."""

    def __init__(self, args: Args, config: NertzConfig, rng: np.random.Generator):
        self.scripted = [agents.make(name, seed=args.seed, config=config) for name in args.scripted]
        self.snapshots: list[torch.nn.Module] = []
        self.args, self.rng = args, rng

    def __len__(self) -> int:
        return len(self.scripted) + len(self.snapshots)

    def add(self, net: torch.nn.Module) -> None:
        self.snapshots.append(copy.deepcopy(net).eval())
        del self.snapshots[: -self.args.pool_size]

    def draw(self, n: int) -> np.ndarray:
        return self.rng.integers(len(self), size=n)

    def act(self, who: int, obs: np.ndarray, masks: np.ndarray, device) -> np.ndarray:
        if who < len(self.scripted):
            return self.scripted[who].act_batch(obs, masks)
        with torch.no_grad():
            logits, _ = self.snapshots[who - len(self.scripted)](
                torch.from_numpy(obs).to(device), torch.from_numpy(masks).to(device)
            )
            return torch.distributions.Categorical(logits=logits).sample().cpu().numpy()


def evaluate_policy(policy_path: Path, config: NertzConfig, deals: int, seed: int) -> dict:
    """The harness's duplicate format: the policy against three of each scripted baseline."""
    from nertz_env.training.evaluate import evaluate

    out = {}
    for rival in ("greedy", "heuristic"):
        lineup = ["policy:path=" + str(policy_path)] + [rival] * (config.num_players - 1)
        me = evaluate(lineup, hands=deals, seed=seed, config=config, progress=False)["summary"][0]
        out[rival] = {"win_share": me["win_share"], "win_ci": me["win_ci"], "score": me["score"]}
    return out


def main(argv: list[str] | None = None) -> Path:
    args = parse(Args, argv)
    resume = torch.load(args.resume, map_location="cpu", weights_only=False) if args.resume else None
    if resume is not None:
        args = Args(
            **{
                **resume["args"],
                "resume": args.resume,
                "progress": args.progress,
                "stop_after": args.stop_after,
                "hidden": tuple(resume["args"]["hidden"]),
                "scripted": tuple(resume["args"]["scripted"]),
            }
        )
    run_dir = (
        Path(args.run_dir or (resume["run_dir"] if resume else ""))
        if (args.run_dir or resume)
        else (Path(args.out_dir) / f"nertz_v0__{args.exp_name}__{args.seed}__{int(time.time())}")
    )
    run_dir.mkdir(parents=True, exist_ok=True)

    # Seeding, in one place.
    random.seed(args.seed)
    torch.manual_seed(args.seed)
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(
        "cuda"
        if args.device == "auto" and torch.cuda.is_available()
        else ("cpu" if args.device == "auto" else args.device)
    )
    rng = np.random.default_rng(args.seed)

    config = NertzConfig(num_players=args.num_players, reward=args.reward)
    lookahead = args.lookahead_depth if args.lookahead_features else 0
    envs = NertzVectorEnv(args.num_envs, **config.to_dict())
    layout, n_actions, P = envs.layout, envs.num_actions, args.num_players
    net = build_scorer(config, args.hidden, args.action_hidden, lookahead).to(device)
    optimizer = torch.optim.Adam(net.parameters(), lr=args.learning_rate, eps=1e-5, foreach=True)
    pool = Opponents(args, config, rng)
    features = ActionFeatures(config, lookahead=lookahead)
    teacher = agents.make_spec(args.teacher, seed=args.seed, config=config)
    teacher_in_features = features.plays_as(teacher)  # the features' search gives its labels as well

    # Which (game, seat) pairs the learner holds: every seat of the self-play games, seat 0 of the rest.
    n_self = int(round(args.num_envs * args.self_play_fraction))
    learn = np.zeros((args.num_envs, P), bool)
    learn[:n_self] = True
    learn[n_self:, 0] = True
    learn_idx = np.flatnonzero(learn.reshape(-1))
    n_learn = len(learn_idx)
    mixed = np.arange(n_self, args.num_envs)
    batch_size = args.num_steps * n_learn
    minibatch = batch_size // args.num_minibatches
    num_updates = max(1, args.total_steps // batch_size)
    bc_updates = min(num_updates, args.bc_steps // batch_size)

    start_update, global_step = 1, 0
    if resume is not None:
        net.load_state_dict(resume["net"])
        optimizer.load_state_dict(resume["optimizer"])
        for sd in resume["pool"]:
            snap = build_scorer(config, args.hidden, args.action_hidden, lookahead).to(device)
            snap.load_state_dict(sd)
            pool.snapshots.append(snap.eval())
        envs = pickle.loads(resume["envs"])
        rng.bit_generator.state = resume["numpy_rng"]
        torch.set_rng_state(resume["torch_rng"])
        start_update, global_step = resume["update"] + 1, resume["global_step"]
        obs, masks, opponent = resume["obs"], resume["masks"], resume["opponent"]
    else:
        obs, masks = envs.reset(seed=args.seed)
        obs, masks = obs.copy(), masks.copy()
        opponent = pool.draw(len(mixed))
    (run_dir / "config.json").write_text(
        json.dumps({"args": asdict(args), "rules": config.to_dict()}, indent=2, default=str)
    )
    writer = None
    if args.tensorboard:
        from torch.utils.tensorboard import SummaryWriter

        writer = SummaryWriter(str(run_dir))

    D = layout.size
    b_obs = torch.zeros((args.num_steps, n_learn, D), dtype=torch.int8)
    b_masks = torch.zeros((args.num_steps, n_learn, n_actions), dtype=torch.int8)
    b_actions = torch.zeros((args.num_steps, n_learn), dtype=torch.long)
    b_teacher = torch.zeros((args.num_steps, n_learn), dtype=torch.long)
    b_logprobs = torch.zeros((args.num_steps, n_learn))
    b_rewards = torch.zeros((args.num_steps, n_learn))
    b_dones = torch.zeros((args.num_steps, n_learn))
    b_values = torch.zeros((args.num_steps, n_learn))
    actions = np.zeros((args.num_envs, P), np.int64)
    next_done = torch.zeros(n_learn)
    bar = tqdm(
        total=num_updates * batch_size,
        initial=(start_update - 1) * batch_size,
        disable=not args.progress,
        unit="step",
        dynamic_ncols=True,
        file=sys.stderr,
    )
    recent: list[float] = []

    for update in range(start_update, num_updates + 1):
        t0 = time.perf_counter()
        t_env = t_feat = t_net = 0.0
        cloning = update <= bc_updates
        ppo_progress = (update - 1 - bc_updates) / max(1, num_updates - bc_updates)  # 0 .. 1 over the PPO phase
        lr = args.learning_rate * (1.0 - ppo_progress if args.anneal_lr and not cloning else 1.0)
        optimizer.param_groups[0]["lr"] = lr
        bc_coef = 1.0 if cloning else args.bc_coef * (1.0 - ppo_progress)
        # The legal (row, move) pairs of the rollout and their features, row-major, rows numbered
        # step * n_learn + seat: the update reads them back without recomputing.
        p_rows, p_acts, p_feats = [], [], []
        for step in range(args.num_steps):
            flat_obs = obs.reshape(-1, D)[learn_idx]
            flat_masks = masks.reshape(-1, n_actions)[learn_idx]
            b_obs[step] = torch.from_numpy(flat_obs)
            b_masks[step] = torch.from_numpy(flat_masks)
            b_dones[step] = next_done
            tf = time.perf_counter()
            rows, acts, feats, choice = features.with_choice(flat_obs, flat_masks)
            if bc_coef > 0:
                labels = choice if teacher_in_features else teacher.act_batch(flat_obs, flat_masks)
                b_teacher[step] = torch.from_numpy(labels)
            tn = time.perf_counter()
            t_feat += tn - tf
            p_rows.append(rows + step * n_learn)
            p_acts.append(acts)
            p_feats.append(feats)
            with torch.no_grad():
                logits, value = net.score(
                    torch.from_numpy(flat_obs).to(device),
                    torch.from_numpy(rows).to(device),
                    torch.from_numpy(acts).to(device),
                    torch.from_numpy(feats).to(device),
                )
                dist = torch.distributions.Categorical(logits=logits)
                action = dist.sample()
            t_net += time.perf_counter() - tn
            b_actions[step], b_logprobs[step], b_values[step] = action.cpu(), dist.log_prob(action).cpu(), value.cpu()
            actions.reshape(-1)[learn_idx] = action.cpu().numpy()
            for who in np.unique(opponent):  # the other seats of the mixed games
                games = mixed[opponent == who]
                actions[games, 1:] = pool.act(
                    int(who), obs[games, 1:].reshape(-1, D), masks[games, 1:].reshape(-1, n_actions), device
                ).reshape(len(games), P - 1)
            te = time.perf_counter()
            obs, masks, rewards, terms, truncs, infos = envs.step(actions)
            t_env += time.perf_counter() - te
            done = (terms | truncs).reshape(-1)[learn_idx]
            b_rewards[step] = torch.from_numpy(rewards.reshape(-1)[learn_idx].astype(np.float32))
            next_done = torch.from_numpy(done.astype(np.float32))
            ended = np.flatnonzero(infos["episode"]["done"])
            if len(ended):
                scores = infos["episode"]["scores"][ended]
                recent.extend(scores[:, 0].tolist())
                mixed_ended = np.isin(mixed, ended)
                opponent[mixed_ended] = pool.draw(int(mixed_ended.sum()))
            global_step += n_learn
        t_rollout = time.perf_counter() - t0

        # Generalized advantage estimation, per (game, seat) trajectory.
        with torch.no_grad():
            flat_obs = obs.reshape(-1, D)[learn_idx]
            flat_masks = masks.reshape(-1, n_actions)[learn_idx]
            _, next_value = net(torch.from_numpy(flat_obs).to(device), torch.from_numpy(flat_masks).to(device))
            next_value = next_value.cpu()
            advantages = torch.zeros_like(b_rewards)
            last = torch.zeros(n_learn)
            for t in reversed(range(args.num_steps)):
                not_done = 1.0 - (next_done if t == args.num_steps - 1 else b_dones[t + 1])
                nv = next_value if t == args.num_steps - 1 else b_values[t + 1]
                delta = b_rewards[t] + args.gamma * nv * not_done - b_values[t]
                last = delta + args.gamma * args.gae_lambda * not_done * last
                advantages[t] = last
            returns = advantages + b_values

        # The update: PPO, or cloning the teacher, or both (see the module doc).
        f_obs, f_masks = b_obs.reshape(batch_size, D), b_masks.reshape(batch_size, n_actions)
        f_actions, f_logprobs, f_teacher = b_actions.reshape(-1), b_logprobs.reshape(-1), b_teacher.reshape(-1)
        f_adv, f_ret = advantages.reshape(-1), returns.reshape(-1)
        all_rows, all_acts = np.concatenate(p_rows), torch.from_numpy(np.concatenate(p_acts))
        all_feats = torch.from_numpy(np.concatenate(p_feats))
        n_pairs = np.bincount(all_rows, minlength=batch_size)
        first_pair = np.cumsum(n_pairs) - n_pairs
        clipfracs, agreement, approx_kl = [], [], torch.tensor(0.0)
        pg_loss = bc_loss = torch.tensor(0.0)
        for _epoch in range(args.update_epochs):
            order = torch.randperm(batch_size)
            for start in range(0, batch_size, minibatch):
                mb = order[start : start + minibatch]
                # The pairs of the minibatch's rows, renumbered 0 .. len(mb) - 1.
                counts = n_pairs[mb.numpy()]
                mb_rows = np.repeat(np.arange(len(mb)), counts)
                pairs = np.repeat(first_pair[mb.numpy()] - np.cumsum(counts) + counts, counts) + np.arange(len(mb_rows))
                pairs = torch.from_numpy(pairs)
                logits, value = net.score(
                    f_obs[mb].to(device),
                    torch.from_numpy(mb_rows).to(device),
                    all_acts[pairs].to(device),
                    all_feats[pairs].to(device),
                )
                logp_all = torch.log_softmax(logits, -1)
                v_loss = 0.5 * ((value - f_ret[mb].to(device)) ** 2).mean()
                probs = logp_all.exp()
                legal = f_masks[mb].to(device) != 0
                entropy = -(probs * logp_all).where(legal, torch.zeros_like(probs)).sum(-1)
                loss = args.vf_coef * v_loss
                if bc_coef > 0:
                    target = f_teacher[mb].to(device)
                    bc_loss = -logp_all.gather(1, target[:, None]).mean()
                    loss = loss + bc_coef * bc_loss
                    agreement.append((logits.argmax(-1) == target).float().mean().item())
                if not cloning:
                    newlogprob = logp_all.gather(1, f_actions[mb].to(device)[:, None]).squeeze(1)
                    logratio = newlogprob - f_logprobs[mb].to(device)
                    ratio = logratio.exp()
                    with torch.no_grad():
                        approx_kl = ((ratio - 1) - logratio).mean()
                        clipfracs.append(((ratio - 1.0).abs() > args.clip_coef).float().mean().item())
                    adv = f_adv[mb].to(device)
                    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                    clipped = ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)
                    pg_loss = torch.max(-adv * ratio, -adv * clipped).mean()
                    loss = loss + pg_loss - args.ent_coef * entropy.mean()
                optimizer.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(net.parameters(), args.max_grad_norm)
                optimizer.step()
            if args.target_kl and approx_kl > args.target_kl:
                break

        if update % args.snapshot_every == 0:
            pool.add(net)
        elapsed = time.perf_counter() - t0
        bar.update(batch_size)
        mean_score = float(np.mean(recent[-200:])) if recent else float("nan")
        bar.set_postfix(score=f"{mean_score:.1f}", sps=f"{batch_size / elapsed:.0f}", phase="bc" if cloning else "ppo")
        if writer is not None:
            writer.add_scalar("charts/learning_rate", lr, global_step)
            writer.add_scalar("charts/episode_score", mean_score, global_step)
            writer.add_scalar("charts/steps_per_second", batch_size / elapsed, global_step)
            writer.add_scalar("charts/env_share_of_time", t_env / elapsed, global_step)
            writer.add_scalar("charts/features_share_of_time", t_feat / elapsed, global_step)
            writer.add_scalar("charts/rollout_net_share_of_time", t_net / elapsed, global_step)
            writer.add_scalar("charts/update_share_of_time", (elapsed - t_rollout) / elapsed, global_step)
            writer.add_scalar("charts/bc_coef", bc_coef, global_step)
            if agreement:
                writer.add_scalar("charts/teacher_agreement", float(np.mean(agreement)), global_step)
            writer.add_scalar("losses/value_loss", v_loss.item(), global_step)
            writer.add_scalar("losses/policy_loss", pg_loss.item(), global_step)
            writer.add_scalar("losses/bc_loss", bc_loss.item(), global_step)
            writer.add_scalar("losses/entropy", entropy.mean().item(), global_step)
            writer.add_scalar("losses/approx_kl", approx_kl.item(), global_step)
            if clipfracs:
                writer.add_scalar("losses/clipfrac", float(np.mean(clipfracs)), global_step)

        last_update = update == num_updates or update - start_update + 1 == args.stop_after
        eval_due = bool(args.eval_every) and (update % args.eval_every == 0 or last_update)
        if update % args.save_every == 0 or last_update or eval_due:  # evaluations read the saved policy
            save_policy(
                run_dir / "policy.pt",
                net,
                config,
                args.hidden,
                extra={"global_step": global_step, "command": " ".join(sys.argv), "seed": args.seed},
                action_hidden=args.action_hidden,
            )
            state = {
                "args": asdict(args),
                "run_dir": str(run_dir),
                "update": update,
                "global_step": global_step,
                "net": net.state_dict(),
                "optimizer": optimizer.state_dict(),
                "pool": [s.state_dict() for s in pool.snapshots],
                "envs": pickle.dumps(envs),
                "numpy_rng": rng.bit_generator.state,
                "torch_rng": torch.get_rng_state(),
                "obs": obs.copy(),
                "masks": masks.copy(),
                "opponent": opponent.copy(),
            }
            tmp = run_dir / "checkpoint.pt.tmp"
            torch.save(state, tmp)
            os.replace(tmp, run_dir / "checkpoint.pt")  # atomic: a kill leaves the last good file
        if eval_due:
            result = evaluate_policy(run_dir / "policy.pt", config, args.eval_deals, seed=args.seed + update)
            result.update(update=update, global_step=global_step)
            with open(run_dir / "evals.jsonl", "a") as fh:
                fh.write(json.dumps(result) + "\n")
            if writer is not None:
                for rival, r in result.items():
                    if isinstance(r, dict):
                        writer.add_scalar(f"eval/win_share_vs_{rival}", r["win_share"], global_step)
                        writer.add_scalar(f"eval/score_vs_{rival}", r["score"], global_step)
        if last_update:
            break
    bar.close()
    if writer is not None:
        writer.close()
    return run_dir


if __name__ == "__main__":
    main()
