"""A critic that sees the hidden cards, for ``train_selfplay --central-critic true``.

The policy plays from its observation (R9) alone. Its critic, the value head on the same
observation summary, has to guess what the hidden cards hold: the order of every Nertz pile and
stock, the waste under its top. Which card the next Nertz turn shows is much of a hand's outcome,
so the advantages PPO learns from (GAE over the critic's values) carry that luck as noise.

``CentralCritic`` values a learner's seat from its observation summary (the policy network's
``summary``, not trained by this critic) and the hidden cards of every seat, egocentric like the
observation (seat ``p + k`` in block ``k``), read from ``NertzVectorEnv.states`` (the ``state()``
meant for centralized critics). The advantages use its values; the policy still never sees a
hidden card, at training or at play, and the saved ``policy.pt`` is the same kind of file (its
own value head still learns the same returns, for the ``rollout`` search that reads it). A value
of the state is a baseline that does not depend on the move, so the policy gradient stays
unbiased (asymmetric actor-critic).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch

from nertz_env.cli_checks import Parser, at_least, output_file
from nertz_env.engine.constants import DECK_SIZE, HIDDEN_SIZE
from nertz_env.training.scalars import read_scalars


class HiddenCards:
    """Where each learner seat's view of the hidden cards lies in the state vectors
    (``learn_idx``: game * players + seat): the central critic's input, and the oracle's
    (``training.oracle``)."""

    def __init__(self, envs, learn_idx: np.ndarray):
        players, start = envs.num_players, envs.layout.state_slices["seat0.nertz_order"].start
        seat = learn_idx % players
        order = (seat[:, None] + np.arange(players)[None, :]) % players  # block k: the seat k after
        self.games = learn_idx // players
        self.columns = (start + order[:, :, None] * HIDDEN_SIZE + np.arange(HIDDEN_SIZE)).reshape(len(learn_idx), -1)
        self._states = np.empty((envs.num_envs, envs.layout.state_size), np.int8)
        self.width = players * HIDDEN_SIZE

    def hidden_cards(self, envs) -> torch.Tensor:
        """``[learners, players * 156]`` int8: each learner seat's view of every seat's hidden cards
        (``nertz_order``, ``stock_order``, ``waste_order``), its own first."""
        states = envs.states(self._states)
        return torch.from_numpy(states[self.games[:, None], self.columns])


class CentralCritic(HiddenCards):
    """The hidden-card critic of one run: its network, its optimiser, and where each learner
    seat's hidden cards lie in the state vectors (``HiddenCards``)."""

    def __init__(self, envs, learn_idx: np.ndarray, summary_size: int, hidden: tuple[int, ...], lr: float, device):
        super().__init__(envs, learn_idx)
        layers: list[torch.nn.Module] = []
        size = summary_size + self.width
        for h in hidden:
            layers += [torch.nn.Linear(size, h), torch.nn.ReLU()]
            size = h
        self.model = torch.nn.Sequential(*layers, torch.nn.Linear(size, 1)).to(device)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=lr, eps=1e-5)
        self.device = device
        self.stats: dict[str, float] = {}

    def _inputs(self, net, obs: torch.Tensor, hidden: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            summary = net.summary(obs.to(self.device))
        return torch.cat([summary, hidden.to(self.device).float() / DECK_SIZE], dim=1)

    def values(self, net, obs: torch.Tensor, hidden: torch.Tensor) -> torch.Tensor:
        """The critic's values ``[n]`` (on the CPU) of observations ``[n, D]`` with their hidden cards."""
        with torch.no_grad():
            return self.model(self._inputs(net, obs, hidden)).squeeze(-1).cpu()

    def fit(self, net, buf, returns: torch.Tensor, epochs: int, minibatches: int, lr: float) -> dict[str, float]:
        """Regress the values on the rollout ``buf``'s ``returns`` for ``epochs`` passes of
        ``minibatches`` each, at learning rate ``lr``. Returns the last minibatch's loss and, before
        the fit, how much of the returns' variance this critic and the network's own value head
        explain (``explained_variance``)."""
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        n = returns.numel()
        x, y = self._inputs(net, buf.obs.reshape(n, -1), buf.hidden.reshape(n, -1)), returns.reshape(n).to(self.device)
        with torch.no_grad():
            before = self.model(x).squeeze(-1).cpu()
        self.stats["explained_central"] = explained_variance(before, y.cpu())
        self.stats["explained_network"] = explained_variance(buf.values.reshape(n), y.cpu())
        size = max(1, len(y) // minibatches)
        loss = torch.tensor(0.0)
        for _epoch in range(epochs):
            order = torch.randperm(len(y), device=self.device)
            for begin in range(0, len(y), size):
                mb = order[begin : begin + size]
                loss = 0.5 * ((self.model(x[mb]).squeeze(-1) - y[mb]) ** 2).mean()
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
        self.stats["central_value_loss"] = loss.item()
        return self.stats

    def state_dict(self) -> dict:
        return {"model": self.model.state_dict(), "optimizer": self.optimizer.state_dict()}

    def load_state_dict(self, state: dict) -> None:
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])


def explained_variance(values: torch.Tensor, returns: torch.Tensor) -> float:
    """``1 - Var(returns - values) / Var(returns)``: 1 for a perfect critic, 0 for a constant."""
    spread = returns.var().item()
    return float("nan") if spread == 0 else 1.0 - (returns - values).var().item() / spread


DIAGNOSTICS = ("central/explained_central", "central/explained_network", "losses/approx_kl", "losses/clipfrac",
               "losses/entropy")  # fmt: skip


def diagnostics(run_dir: str | Path, window: int = 100) -> dict[str, dict[str, float]]:
    """Each of ``DIAGNOSTICS`` over a run's PPO phase (the updates after cloning, which log a clip
    fraction): its mean over the first ``window`` updates, over the whole phase and over the last
    ``window``, from the run's ``scalars.jsonl`` (or, for a run made before it, its TensorBoard log)."""
    found = read_scalars(run_dir)
    clip_steps = found.get("losses/clipfrac", ([], []))[0]
    ppo_from = min(clip_steps, default=0)
    out = {}
    for tag in DIAGNOSTICS:
        steps, values = found.get(tag, ([], []))
        values = [v for step, v in zip(steps, values) if step >= ppo_from]
        if values:
            out[tag] = {"first": float(np.mean(values[:window])), "mean": float(np.mean(values)),
                        "last": float(np.mean(values[-window:])), "updates": len(values)}  # fmt: skip
    return out


def main(argv: list[str] | None = None) -> None:
    parser = Parser(
        description="What the critics explain, and how far PPO moves, in train_selfplay runs"
    )
    parser.add_argument("runs", nargs="+", help="run directories of train_selfplay")
    parser.add_argument("--window", type=at_least(1), default=100, help="updates averaged at the start and at the end")
    parser.add_argument("--out", type=output_file(), help="write the figures to this JSON file")
    a = parser.parse_args(argv)
    try:
        result = {run: diagnostics(run, a.window) for run in a.runs}
    except FileNotFoundError as exc:
        parser.error(str(exc))
    for run, figures in result.items():
        print(run)
        for tag, f in figures.items():
            figures_line = "  ".join(f"{k} {f[k]:.4f}" for k in ("first", "mean", "last"))
            print(f"  {tag:28s} {figures_line}  ({f['updates']} updates)")
    if a.out:
        Path(a.out).write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
