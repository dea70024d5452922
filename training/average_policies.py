"""One policy whose weights are the mean of a run's last kept policies (weight averaging, as in
stochastic weight averaging): still one network, so one forward pass per decision.

``train_selfplay`` keeps a copy of its policy every ``--keep-policy-every`` updates in
``policies/policy_{decisions}.pt``. The average of the last ``--last`` of them is written as a
policy file of the same format (``agents.make("policy", path=...)`` plays it), recording the files
it averaged and the decisions of the newest.

    python -m nertz_env.training.average_policies runs/league/seed3 --last 10 --out runs/league/seed3/averaged.pt

``--with-last`` counts the run's final ``policy.pt`` as its newest kept policy (a run whose
policies were kept far apart ends after its last kept one). A run whose updates are a multiple of
``--keep-policy-every`` ends on a kept policy: its ``policy.pt`` then holds the same weights as its
newest ``policies/policy_*.pt`` and is counted once, not twice (the output says so), so ``--last N``
still averages ``N`` different policies.

``--out`` must be a new ``.pt`` file in an existing folder, not one of the run's policies (the
inputs): ``policy.pt`` or ``policies/policy_*.pt``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from nertz_env.agents.policy import load_network, save_policy
from nertz_env.cli_checks import Parser, at_least, output_file
from nertz_env.training.init_policy import same_network


def kept_policies(run_dir: str | Path, with_last: bool = False) -> list[Path]:
    """The run's kept policies (``policies/policy_*.pt``), oldest first by the decisions in their
    names; ``with_last``: and its last ``policy.pt`` after them, where there is one."""
    run = Path(run_dir)
    if not run.is_dir():
        raise FileNotFoundError(f"no run directory {run} (give a directory train_selfplay wrote)")
    files = sorted((run / "policies").glob("policy_*.pt"), key=lambda p: int(p.stem.removeprefix("policy_")))
    files += [run / "policy.pt"] if with_last and (run / "policy.pt").is_file() else []
    if not files:
        kept = "policies/policy_*.pt, train_selfplay --keep-policy-every"
        raise ValueError(f"{run} holds no kept policies ({kept}){' nor a policy.pt' if with_last else ''}")
    return files


def same_weights(first: str | Path, second: str | Path) -> bool:
    """Whether two policy files hold the same network with the same weights (a run's ``policy.pt``
    written at the update that also kept ``policies/policy_*.pt``)."""
    import torch

    (net_a, config_a, blob_a), (net_b, config_b, blob_b) = load_network(first), load_network(second)
    state_a, state_b = blob_a["state_dict"], blob_b["state_dict"]
    if not same_network(net_a, net_b) or config_a != config_b or state_a.keys() != state_b.keys():
        return False
    return all(torch.equal(state_a[name], state_b[name]) for name in state_a)


def without_repeated_last(files: list[Path]) -> tuple[list[Path], str | None]:
    """``files`` from ``kept_policies(with_last=True)`` without the run's ``policy.pt`` when it
    repeats the newest kept policy, and a line saying so (None when nothing was left out)."""
    if len(files) < 2 or files[-1].name != "policy.pt" or not same_weights(files[-2], files[-1]):
        return files, None
    return files[:-1], f"{files[-1]} holds the weights of {files[-2]} (the run ended on a kept policy): counted once"


def average(files: Sequence[str | Path], out: str | Path) -> Path:
    """Write the mean of the weights of ``files`` (policies of one network shape and rules) to ``out``."""
    if not files:
        raise ValueError("average needs at least one policy file")
    nets = [load_network(f) for f in files]
    net, config, blob = nets[-1]

    for path, (other_net, other_config, _) in zip(files, nets):
        if not same_network(other_net, net) or other_config != config:
            raise ValueError(f"{path} is not the same network and rules as {files[-1]}: average one run's policies")
    state = {}
    for name, value in blob["state_dict"].items():
        if value.is_floating_point():
            value = (sum(n[2]["state_dict"][name].double() for n in nets) / len(nets)).to(value.dtype)
        state[name] = value
    net.load_state_dict(state)
    extra = {**blob.get("extra", {}), "averaged": [str(f) for f in files]}
    return save_policy(out, net, config, tuple(blob["hidden"]), extra=extra, action_hidden=blob.get("action_hidden"))


def main(argv: Sequence[str] | None = None) -> None:
    parser = Parser(prog="python -m nertz_env.training.average_policies", description=__doc__.split("\n\n")[0])
    parser.add_argument("run", help="a run directory of train_selfplay")
    parser.add_argument("--last", type=at_least(1), default=10, help="how many of the newest kept policies to average")
    parser.add_argument("--with-last", action="store_true",
                        help="count the run's policy.pt as its newest kept one (once if it repeats it)")  # fmt: skip
    parser.add_argument("--out", type=output_file(".pt"), required=True,
                        help="the policy file to write (.pt, not one of the run's policies)")  # fmt: skip
    a = parser.parse_args(argv)
    if _is_run_policy(a.out, Path(a.run)):
        parser.error(f"argument --out: {str(a.out)!r} is one of the run's policies (policy.pt or "
                     "policies/policy_*.pt, the inputs): write the average to another .pt file")  # fmt: skip
    try:
        files = kept_policies(a.run, with_last=a.with_last)
        files, repeated = without_repeated_last(files) if a.with_last else (files, None)
        if len(files) < a.last:
            raise ValueError(f"{a.run} keeps {len(files)} policies, fewer than --last {a.last}"
                             f"{' (its policy.pt counted once)' if repeated else ''}")  # fmt: skip
        path = average(files[-a.last :], a.out)
    except (OSError, ValueError) as err:
        parser.error(str(err))
    if repeated:
        print(repeated)
    print(f"{path}: the mean of {', '.join(f.name for f in files[-a.last:])}")


def _is_run_policy(out: Path, run: Path) -> bool:
    """Whether ``out`` is (or would become) one of the run's policies: its ``policy.pt`` or a
    ``policies/policy_*.pt``, which the average reads and a later average would count."""
    out = out.resolve()
    return out == (run / "policy.pt").resolve() or (
        out.parent == (run / "policies").resolve() and out.name.startswith("policy_")
    )


if __name__ == "__main__":
    main()
