"""IPPO and MAPPO through TorchRL on the batched engine (``nertz_env.integrations.torchrl``).

    python -m nertz_env.training.train_torchrl --algo mappo --task nertz-4p --total-steps 100000 --seed 1
    python -m nertz_env.training.train_torchrl --resume runs/<run>/checkpoint.pt --total-steps 200000

Both share one actor over every seat (parameter sharing, TorchRL's multi-agent convention: the
group ``"agents"``): a masked categorical policy (``torchrl.modules.MaskedCategorical``) over the
flat MLP of ``agents.policy.build_network``, so the saved ``policy.pt`` plays as
``agents.make("policy", path=...)``. The critic is the difference:

- ``ippo``: a shared critic on each seat's own observation (R9), ``V(o_i)``;
- ``mappo``: a centralised critic on the whole table, ``state()`` (hidden cards included), with
  one value per seat, ``V_i(s)``.

TorchRL does the rest: ``Collector`` (synchronous) steps ``--num-envs`` games (its partial resets
deal the ended games again), ``ClipPPOLoss`` with GAE (``ValueEstimators.GAE``) computes the loss.
A step is one decision of one seat (an agent-step): a tick of ``B`` games of ``P`` players is
``B * P`` agent-steps. ``checkpoint.pt`` holds the networks, the optimiser, the step count and
torch's generator; ``--resume`` continues from them with games dealt afresh from the seed and the
step count (so a resumed run is not bit-identical to an uninterrupted one).
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

from nertz_env import tasks
from nertz_env.agents.policy import build_network, save_policy
from nertz_env.config import REWARD_MODES
from nertz_env.training.args import arg, check_counts, check_numbers, flag_errors, parse_given, resume_args
from nertz_env.training.checkpoint import atomic_write, check_budget, load_torch_checkpoint, say

try:
    from tensordict.nn import TensorDictModule
    from torchrl.collectors import Collector
    from torchrl.modules import MaskedCategorical, ProbabilisticActor
    from torchrl.objectives import ClipPPOLoss, ValueEstimators

    from nertz_env.integrations.torchrl import GROUP, NertzTorchRLEnv
except ImportError as exc:  # pragma: no cover - depends on the extra
    raise ModuleNotFoundError("IPPO and MAPPO need TorchRL: pip install 'nertz-env[torchrl]'") from exc

ALGOS = ("ippo", "mappo")


@dataclass
class Args:
    """IPPO and MAPPO through TorchRL."""

    algo: str = arg("mappo", "ippo (critic on each seat's observation) or mappo (critic on state())", choices=ALGOS)
    task: str = arg("nertz-4p", f"the benchmark task (nertz_env.tasks): {', '.join(tasks.names())}")
    seed: int = arg(1, "the seed of torch and of the games")
    total_steps: int = arg(100_000, "agent-steps (one seat's decision) to train on")
    num_envs: int = arg(32, "games stepped at once")
    num_steps: int = arg(32, "ticks per rollout")
    reward: str = arg("relative", "reward mode of the env", choices=list(REWARD_MODES))
    hidden: tuple[int, ...] = arg((256, 256), "hidden layers of the actor and the critic")
    learning_rate: float = arg(3e-4, "Adam learning rate")
    gamma: float = arg(0.995, "discount factor")
    gae_lambda: float = arg(0.95, "GAE lambda")
    epochs: int = arg(3, "epochs per rollout")
    minibatches: int = arg(4, "minibatches per epoch")
    clip: float = arg(0.2, "PPO clip coefficient")
    ent_coef: float = arg(0.01, "entropy coefficient")
    max_grad_norm: float = arg(0.5, "gradient clipping norm")
    stop_after: int = arg(0, "stop this invocation after so many agent-steps, with a checkpoint (0: run to the end)")
    out_dir: str = arg("runs", "where runs are written")
    run_dir: str = arg("", "write into this directory instead of a new one under out_dir")
    resume: str = arg("", "a checkpoint.pt to continue from")


MAY_CHANGE, PER_CALL = {"total_steps"}, {"resume", "stop_after"}


class Logits(nn.Module):
    """The masked logits of ``build_network``'s MLP (its value head is unused here)."""

    def __init__(self, net: nn.Module):
        super().__init__()
        self.net = net

    def forward(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.net(obs, mask)[0]


class Critic(nn.Module):
    """An MLP from ``in_dim`` inputs to ``out`` values, inputs scaled by ``scale``; the output is
    shaped ``[..., P, 1]`` (``per_seat``: one value per seat from the shared state)."""

    scale: torch.Tensor  # a buffer (register_buffer)

    def __init__(self, in_dim: int, hidden: tuple[int, ...], scale: np.ndarray, players: int, per_seat: bool):
        super().__init__()
        self.register_buffer("scale", torch.as_tensor(1.0 / np.maximum(scale, 1), dtype=torch.float32))
        layers: list[nn.Module] = []
        size = in_dim
        for h in hidden:
            layers += [nn.Linear(size, h), nn.Tanh()]
            size = h
        self.body = nn.Sequential(*layers, nn.Linear(size, players if per_seat else 1))
        self.per_seat = per_seat

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        v = self.body(x.float() * self.scale)
        return v.unsqueeze(-1) if self.per_seat else v


def build(args: Args):
    """The env, the actor (TorchRL module and its ``build_network``), the critic and the loss."""
    task = tasks.get(args.task)
    rules = {**task.rules, "reward": args.reward}
    env = NertzTorchRLEnv(args.num_envs, seed=args.seed, include_state=args.algo == "mappo", **rules)
    layout, p = env.vector.layout, env.vector.num_players
    net = build_network(layout.size, env.vector.num_actions, layout.high.astype(np.float32), args.hidden)
    logits = TensorDictModule(Logits(net), in_keys=[(GROUP, "observation"), (GROUP, "action_mask")],
                              out_keys=[(GROUP, "logits")])  # fmt: skip
    actor = ProbabilisticActor(
        logits, in_keys={"logits": (GROUP, "logits"), "mask": (GROUP, "action_mask")}, out_keys=[(GROUP, "action")],
        distribution_class=MaskedCategorical, return_log_prob=True, log_prob_key=(GROUP, "sample_log_prob"),
    )
    if args.algo == "mappo":
        critic_net = Critic(layout.state_size, args.hidden, layout.state_high.astype(np.float32), p, per_seat=True)
        critic = TensorDictModule(critic_net, in_keys=["state"], out_keys=[(GROUP, "state_value")])
    else:
        critic_net = Critic(layout.size, args.hidden, layout.high.astype(np.float32), p, per_seat=False)
        critic = TensorDictModule(critic_net, in_keys=[(GROUP, "observation")], out_keys=[(GROUP, "state_value")])
    loss = ClipPPOLoss(actor, critic, clip_epsilon=args.clip, entropy_coeff=args.ent_coef, normalize_advantage=False)
    loss.set_keys(reward=(GROUP, "reward"), action=(GROUP, "action"), sample_log_prob=(GROUP, "sample_log_prob"),
                  value=(GROUP, "state_value"), done=(GROUP, "done"), terminated=(GROUP, "terminated"))  # fmt: skip
    loss.make_value_estimator(ValueEstimators.GAE, gamma=args.gamma, lmbda=args.gae_lambda)
    return task, env, net, actor, critic_net, loss


def start(argv: list[str] | None) -> tuple[Args, Path, dict | None]:
    args, given = parse_given(Args, argv)
    saved = None
    if args.resume:
        saved = load_torch_checkpoint(args.resume, ("args", "actor", "critic", "optimizer", "steps", "torch_rng"))
        args = resume_args(Args, saved["args"], args, given, MAY_CHANGE, PER_CALL)
        check_budget(args.resume, given, args.total_steps, saved["steps"], saved["args"]["total_steps"])
        run_dir = Path(args.resume).parent
    elif args.run_dir:
        run_dir = Path(args.run_dir)
    else:
        run_dir = Path(args.out_dir) / f"nertz_v0__{args.algo}__{args.task}__{args.seed}__{int(time.time())}"
    tasks.get(args.task)
    check_counts(args, ("total_steps", "num_envs", "num_steps", "epochs", "minibatches"), 1)
    check_numbers(args)
    return args, run_dir, saved


def main(argv: list[str] | None = None, as_command: bool = False) -> Path:
    """Train. ``as_command`` (the command line): a bad flag, task or checkpoint ends the process with
    ``prog: error: ...`` and status 2 (``args.flag_errors``); else it raises ``ValueError``."""
    with flag_errors(as_command):
        args, run_dir, saved = start(argv)
        run_dir.mkdir(parents=True, exist_ok=True)
        torch.manual_seed(args.seed)
        torch.set_num_threads(1)
        task, env, net, actor, critic_net, loss = build(args)
    optimizer = torch.optim.Adam(loss.parameters(), lr=args.learning_rate)
    steps = 0
    if saved is not None:
        net.load_state_dict(saved["actor"])
        critic_net.load_state_dict(saved["critic"])
        optimizer.load_state_dict(saved["optimizer"])
        steps = saved["steps"]
        torch.set_rng_state(saved["torch_rng"])
        env.set_seed(args.seed + steps)  # games dealt afresh on resume
    (run_dir / "config.json").write_text(json.dumps({"args": asdict(args), "task": task.to_dict()}, indent=2))
    say(f"run directory: {run_dir}")
    p = env.vector.num_players
    per_rollout = args.num_envs * args.num_steps * p
    end = args.total_steps if not args.stop_after else min(args.total_steps, steps + args.stop_after)
    rollouts = max(0, -(-(end - steps) // per_rollout))
    began, rollouts_done = time.perf_counter(), 0
    if rollouts:
        frames = args.num_envs * args.num_steps
        collector = Collector(env, actor, frames_per_batch=frames, total_frames=rollouts * frames,
                              auto_register_policy_transforms=False)  # fmt: skip
        for data in collector:
            train_on(data, loss, optimizer, args)
            collector.update_policy_weights_()
            steps += per_rollout
            ended = int(data["next", "done"].sum())
            reward = float(data["next", GROUP, "reward"].sum()) / max(1, ended * p)
            rollouts_done += 1
            rate = per_rollout * rollouts_done / max(time.perf_counter() - began, 1e-9)
            say(f"{args.algo} {task.name} step {steps:,}: {rate:,.0f} agent-steps/s, {ended} hands ended, "
                f"reward per seat and hand {reward:+.2f}")
        collector.shutdown()
    state = {"args": asdict(args), "actor": net.state_dict(), "critic": critic_net.state_dict(),
             "optimizer": optimizer.state_dict(), "steps": steps, "torch_rng": torch.get_rng_state()}  # fmt: skip
    atomic_write(run_dir / "checkpoint.pt", lambda tmp: torch.save(state, tmp))
    extra = {"global_step": steps, "algo": args.algo, "task": task.name, "seed": args.seed}
    save_policy(run_dir / "policy.pt", net, env.vector.config, args.hidden, extra=extra)
    say(f"{args.algo} on {task.name}: {steps:,} agent-steps in {time.perf_counter() - began:.0f} s; {run_dir}")
    env.close()
    return run_dir


def train_on(data, loss: ClipPPOLoss, optimizer: torch.optim.Optimizer, args: Args) -> None:
    """GAE over the rollout, then ``epochs`` passes of ``minibatches`` PPO steps."""
    with torch.no_grad():
        loss.value_estimator(data, params=loss.critic_network_params, target_params=loss.target_critic_network_params)
    flat = data.reshape(-1)
    n = flat.shape[0]
    size = max(1, n // args.minibatches)
    for _ in range(args.epochs):
        order = torch.randperm(n)
        for i in range(0, n - size + 1, size):
            out = loss(flat[order[i:i + size]])
            total = out["loss_objective"] + out["loss_critic"] + out["loss_entropy"]
            optimizer.zero_grad()
            total.backward()
            torch.nn.utils.clip_grad_norm_(loss.parameters(), args.max_grad_norm)
            optimizer.step()


if __name__ == "__main__":
    main(as_command=True)
