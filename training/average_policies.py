"""One policy whose weights are the mean of a run's last kept policies (weight averaging, as in
stochastic weight averaging): still one network, so one forward pass per decision.

``train_selfplay`` keeps a copy of its policy every ``--keep-policy-every`` updates in
``policies/policy_{decisions}.pt``. The average of the last ``--last`` of them is written as a
policy file of the same format (``agents.make("policy", path=...)`` plays it), recording the files
it averaged and the decisions of the newest.

    python -m nertz_env.training.average_policies runs/league/seed3 --last 10 --out runs/league/seed3/averaged.pt

``--with-last`` counts the run's final ``policy.pt`` as its newest kept policy (a run whose
policies were kept far apart ends after its last kept one).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from nertz_env.agents.policy import load_network, save_policy
from nertz_env.cli_checks import Parser, at_least
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
    parser = Parser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", help="a run directory of train_selfplay")
    parser.add_argument("--last", type=at_least(1), default=10, help="how many of the newest kept policies to average")
    parser.add_argument("--with-last", action="store_true", help="count the run's policy.pt as its newest kept one")
    parser.add_argument("--out", required=True, help="the policy file to write")
    a = parser.parse_args(argv)
    try:
        files = kept_policies(a.run, with_last=a.with_last)
        if len(files) < a.last:
            raise ValueError(f"{a.run} keeps {len(files)} policies, fewer than --last {a.last}")
        path = average(files[-a.last :], a.out)
    except (OSError, ValueError) as err:
        parser.error(str(err))
    print(f"{path}: the mean of {', '.join(f.name for f in files[-a.last:])}")


if __name__ == "__main__":
    main()
