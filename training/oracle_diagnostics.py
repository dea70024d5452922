"""How far a policy trained with oracle guiding leans on the hidden cards (``training.oracle``).

``python -m nertz_env.training.oracle_diagnostics RUN/checkpoint.pt [--json OUT]`` opens the run at
its checkpoint (a run stopped with ``--stop-after`` while the oracle's weight is above 0), plays
one rollout at the next update's weight, and scores every decision of it twice: with the oracle's
input and without it. It reports the mean and largest KL divergence between the two move
distributions, the share of decisions whose likeliest move is the same, the policy's entropy, and
the share of the rollout's returns' variance the value head explains with and without the input.
A policy that ignores the hidden cards gives a KL near 0 and the same likeliest move nearly
everywhere.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import torch

from nertz_env.cli_checks import USER_ERRORS, Parser, output_file
from nertz_env.training.central_critic import explained_variance
from nertz_env.training.pair_policy import pair_log_softmax, row_argmax
from nertz_env.training.selfplay_ppo import Batch, advantages, collect, oracle_pre
from nertz_env.training.train_selfplay import apply_schedule, open_trainer


def lean(checkpoint: str) -> dict[str, float]:
    """The figures of the module doc for one checkpoint of a ``--oracle-policy true`` run."""
    t, loop, buf, first = open_trainer(["--resume", checkpoint])
    if t.oracle is None:
        raise ValueError(f"{checkpoint}: the run has no oracle input (trained without --oracle-policy true)")
    cloning, _, _ = apply_schedule(t, first)
    if cloning or t.oracle_weight <= 0:
        raise ValueError(
            f"{checkpoint}: the oracle's weight at update {first} is {t.oracle_weight:g}"
            f"{' (cloning)' if cloning else ''}; give a checkpoint of the PPO phase before the fade ends"
        )
    collect(t, buf, loop, bc_coef=0.0)
    adv, ret = advantages(t, buf, loop)
    batch = Batch.of(t, buf, adv, ret, 0.0)
    rows = torch.repeat_interleave(torch.arange(t.batch_size), torch.from_numpy(batch.n_pairs))
    acts = torch.from_numpy(batch.acts)
    assert batch.hidden is not None  # the oracle reads the hidden cards (Rollout.for_trainer)
    with torch.no_grad():
        scored = {}
        for name, pre in (("with", oracle_pre(t, batch.hidden)), ("without", None)):
            scores, value = t.net.pair_scores(batch.obs, rows, acts, batch.feats, pre)
            logp, entropy = pair_log_softmax(scores, rows, t.batch_size)
            scored[name] = (logp, entropy, value, row_argmax(logp.numpy(), rows.numpy(), t.batch_size))
    logp_with, entropy, value_with, likeliest_with = scored["with"]
    logp_without, _, value_without, likeliest_without = scored["without"]
    kl = torch.zeros(t.batch_size).index_add(0, rows, logp_with.exp() * (logp_with - logp_without))
    return {
        "update": first,
        "oracle_weight": t.oracle_weight,
        "decisions": t.batch_size,
        "kl_mean": kl.mean().item(),
        "kl_max": kl.max().item(),
        "same_likeliest_move": float((likeliest_with == likeliest_without).mean()),
        "entropy_mean": entropy.mean().item(),
        "value_explains_with": explained_variance(value_with, batch.ret),
        "value_explains_without": explained_variance(value_without, batch.ret),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = Parser(prog="python -m nertz_env.training.oracle_diagnostics", description=__doc__.split("\n\n")[0])
    parser.add_argument("checkpoints", nargs="+", help="checkpoint.pt files of --oracle-policy true runs")
    parser.add_argument("--json", type=output_file(".json"), help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    try:
        figures = {path: lean(path) for path in args.checkpoints}
    except USER_ERRORS as exc:
        parser.error(str(exc))
    for path, row in figures.items():
        print(path, " ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
