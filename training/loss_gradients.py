"""How large each term of the self-play trainer's loss pulls: the gradient norm of the value loss,
the teacher's pull, PPO's policy loss and the entropy bonus, each weighted as the update weighs
it (``selfplay_ppo.loss_terms``), over the whole network and over its observation summary (the
layers the policy and the critic share), and of their sum, on the minibatches of the trainer's
own rollouts. The network is not stepped: every figure is taken at the weights it starts from
(``--init-policy``, or ``--resume``). The update clips the sum's norm to ``--max-grad-norm``, so
a term much larger than the others sets the direction of the shared layers.

    python -m nertz_env.training.loss_gradients --updates 3 -- --init-policy agents/policies/ppo.pt --bc-steps 0

Each figure is the median over the minibatches of ``--updates`` rollouts (one epoch each);
``--json F`` also writes them with the trainer flags.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections.abc import Sequence

import torch

from nertz_env.cli_checks import Parser, at_least, output_file
from nertz_env.training import train_selfplay
from nertz_env.training.selfplay_ppo import Batch, advantages, collect, loss_terms, total_loss

TERMS = ("value", "teacher", "policy", "entropy")  # of selfplay_ppo.loss_terms, in the loss's order
FLAG_TERMS = ("aux", "aux_opponents")  # terms only some flags add (--aux-hidden, --aux-opponents)


def minibatch_norms(t, batch: Batch, mb_index: torch.Tensor, cloning: bool, bc_coef: float) -> dict[str, float]:
    """``{term}_{part}``: the gradient norm of each weighted term of the minibatch's loss, and of
    their sum (``total``), over the network and over its observation summary."""
    params = list(t.net.parameters())
    summary = {id(p) for p in t.net.body.parameters()}
    in_summary = [id(p) in summary for p in params]
    terms = loss_terms(t, batch, mb_index, cloning, bc_coef, {"clipfracs": [], "agreement": []})
    terms["total"] = total_loss(terms)
    out: dict[str, float] = {}
    for name, loss in terms.items():
        grads = torch.autograd.grad(loss, params, retain_graph=True, allow_unused=True)
        squares = [0.0 if g is None else float((g.double() ** 2).sum()) for g in grads]
        out[f"{name}_network"] = sum(squares) ** 0.5
        out[f"{name}_summary"] = sum(sq for sq, inside in zip(squares, in_summary, strict=True) if inside) ** 0.5
    return out


def measure(argv: Sequence[str], updates: int, as_command: bool = False) -> dict[str, float]:
    """The median of each ``{term}_{part}`` over the minibatches of ``updates`` rollouts of the
    trainer ``train_selfplay`` builds from ``argv``, and the share of the sum's gradient the clip
    to ``--max-grad-norm`` keeps (``kept``). ``as_command``: a bad trainer flag is one line
    (``train_selfplay.open_trainer``)."""
    t, loop, buf, first = train_selfplay.open_trainer(argv, as_command)
    rows: list[dict[str, float]] = []
    for update in range(first, first + updates):
        cloning, _, bc_coef = train_selfplay.apply_schedule(t, update)  # the oracle's weight; no step
        collect(t, buf, loop, bc_coef, train_selfplay.draw_temperature(t, cloning))
        adv, ret = advantages(t, buf, loop)
        batch = Batch.of(t, buf, adv, ret, bc_coef)
        order = torch.randperm(t.batch_size)
        for start in range(0, t.batch_size, t.minibatch):
            row = minibatch_norms(t, batch, order[start : start + t.minibatch], cloning, bc_coef)
            row["kept"] = min(1.0, t.args.max_grad_norm / max(row["total_network"], 1e-12))
            rows.append(row)
    return {k: statistics.median(r[k] for r in rows) for k in rows[0]}


def main(argv: Sequence[str] | None = None) -> dict[str, float]:
    parser = Parser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--updates", type=at_least(1), default=3, help="rollouts measured (one epoch of minibatches each)"
    )
    parser.add_argument("--json", type=output_file(), default=None, help="also write the figures to this JSON file")
    parser.add_argument("trainer", nargs=argparse.REMAINDER, help="train_selfplay flags, after --")
    a = parser.parse_args(argv)
    flags = [f for f in a.trainer if f != "--"]
    result = measure(flags, a.updates, as_command=True)
    print(f"trainer flags: {' '.join(flags) or '(defaults)'}")
    print(f"gradient norms, medians over the minibatches of {a.updates} rollouts:")
    print(f"{'term':>13} {'network':>9} {'summary':>9}")
    for term in (*TERMS, *FLAG_TERMS, "total"):
        if f"{term}_network" in result:
            print(f"{term:>13} {result[f'{term}_network']:9.3g} {result[f'{term}_summary']:9.3g}")
    print(f"the clip to --max-grad-norm keeps {result['kept']:.2f} of the sum's gradient (median)")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"trainer_flags": flags, "updates": a.updates, "median": result}, f, indent=1)
    return result


if __name__ == "__main__":
    main()
