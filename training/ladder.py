"""The ladder: the scripted players, every shipped policy and the policy snapshots of training runs
on one OpenSkill scale per table size, from duplicate deals, so progress is seen in one picture.

    nertz ladder                                   # scripted players and shipped policies, 2, 3, 4 players
    nertz ladder --runs runs/x --out docs/ladder.json --plot docs/ladder.png
    nertz ladder --plot-only docs/ladder.json --plot docs/ladder.png    # redraw from the JSON

At each table size (``--players``) the entrants that can sit there (a policy only at the player
count it was trained for) form a pool: every deal seats a seeded draw of that many of them and is
replayed in every rotation of the seats (``training.evaluate``'s duplicate format), and OpenSkill
(Plackett-Luce, no drift) rates every hand's ranking by R7 score. Deals per table size: enough
that each pair of entrants meets at about ``--deals-per-pair`` deals. A run directory is one that
``training.train_selfplay`` wrote: its snapshots ``policies/policy_{decisions}.pt`` (kept every
``--keep-policy-every`` updates) and its last ``policy.pt``, each placed by the learner decisions
it was trained on. The same seed gives the same ladder. ``--out`` writes the JSON record;
``--plot`` draws each table size's rating against training decisions (matplotlib, the
``training`` extra), the scripted players and shipped policies as horizontal lines.
"""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from nertz_env import agents as registry
from nertz_env.cli_checks import MOST_DEALS, USER_ERRORS, Parser, at_least, output_file, require, seed_number
from nertz_env.config import NertzConfig
from nertz_env.config_values import is_int, is_real
from nertz_env.training.evaluate import evaluate, versions

SCRIPTED = ("random", "greedy", "heuristic", "heuristic:depth=3")
PLAYERS = (2, 3, 4)
FORMAT = "nertz-ladder-v1"


def shipped_entrants() -> list[dict[str, Any]]:
    """Every shipped policy whose file is present (needs torch)."""
    from nertz_env.agents.policy import SHIPPED_POLICIES, load_network

    out = []
    for name, (path, _) in SHIPPED_POLICIES.items():
        if path.exists():
            players = load_network(path)[1].num_players
            out.append({"label": name, "spec": name, "kind": "shipped", "players": players})
    return out


def run_entrants(run_dir: str | Path) -> list[dict[str, Any]]:
    """The policy snapshots of a ``train_selfplay`` run, by training decisions (its last
    ``policy.pt`` too, unless a snapshot holds the same decisions)."""
    from nertz_env.agents.policy import load_network
    from nertz_env.training.average_policies import kept_policies

    run = Path(run_dir)
    out, seen = [], set()
    for path in kept_policies(run, with_last=True):
        _, config, blob = load_network(path)
        decisions = int(blob.get("extra", {}).get("global_step", -1))
        if decisions < 0:
            raise ValueError(f"{path} does not record the decisions it was trained on (extra.global_step)")
        if decisions in seen:
            continue
        seen.add(decisions)
        out.append({"label": f"{run.name}@{decisions}", "spec": str(path), "kind": "snapshot", "run": str(run),
                    "decisions": decisions, "players": config.num_players, "lookahead": blob.get("lookahead")})
    return sorted(out, key=lambda e: e["decisions"])


def entrants_for(
    scripted: Sequence[str] = SCRIPTED, shipped: bool = True, runs: Sequence[str | Path] = ()
) -> list[dict[str, Any]]:
    """Every entrant of a ladder, checked: each agent name is known, each run directory exists."""
    out: list[dict[str, Any]] = [{"label": s, "spec": s, "kind": "scripted", "players": None} for s in scripted]
    for e in out:  # any table size: an unknown name or option fails here, before any deal
        registry.make_spec(e["spec"], config=NertzConfig(num_players=2))
    if shipped:
        out += shipped_entrants()
    for run in runs:
        out += run_entrants(run)
    labels = [e["label"] for e in out]
    twice = sorted({x for x in labels if labels.count(x) > 1})
    if twice:
        raise ValueError(f"entrants named twice: {', '.join(twice)}")
    return out


def _agent(entrant: dict[str, Any], config: NertzConfig):
    if entrant["kind"] == "snapshot":
        from nertz_env.agents.policy import PolicyAgent

        return PolicyAgent(entrant["spec"], config=config)
    return entrant["spec"]


def deals_for(n: int, players: int, deals_per_pair: int) -> int:
    """Deals at which each of the ``n * (n - 1) / 2`` pairs meets about ``deals_per_pair`` times."""
    return max(1, math.ceil(deals_per_pair * n * (n - 1) / (players * (players - 1))))


def check_players(players: Sequence[int]) -> None:
    """The table sizes of a ladder, each once: a size given twice would merge its two ladders."""
    twice = sorted({p for p in players if list(players).count(p) > 1})
    if twice:
        raise ValueError(f"table size(s) {', '.join(map(str, twice))} given twice in {list(players)}: one ladder per "
                         "table size, give each once")  # fmt: skip


def ladder(
    entrants: Sequence[dict[str, Any]], players: Sequence[int] = PLAYERS, deals_per_pair: int = 10, seed: int = 0,
    progress: bool | None = False,
) -> dict[str, Any]:
    """Rate ``entrants`` (from ``entrants_for``) at each table size of ``players``; the record."""
    check_players(players)
    if not isinstance(deals_per_pair, int) or isinstance(deals_per_pair, bool) or deals_per_pair < 1:
        raise ValueError(f"invalid deals_per_pair={deals_per_pair!r}: accepted an integer >= 1")
    tables = {}
    for p in players:
        config = NertzConfig(num_players=p)
        seated = [k for k, e in enumerate(entrants) if e["players"] in (None, p)]
        if len(seated) < p:
            raise ValueError(f"{p} players need at least {p} entrants that can play {p} players, got {len(seated)}")
        deals = deals_for(len(seated), p, deals_per_pair)
        if progress is not False:
            print(f"ladder at {p} players: {len(seated)} entrants, {deals} deals", flush=True)
        report = evaluate([_agent(entrants[k], config) for k in seated], hands=deals, seed=seed, config=config,
                          players=p, progress=progress)  # fmt: skip
        played = {r["index"]: r for r in report["summary"]}  # an entrant no deal seated has no row
        ratings = []
        for i, k in enumerate(seated):
            rating = report["ratings"][report["agents"][i]]
            row = played.get(i, {"win_share": None, "score": None, "hands": 0})
            ratings.append({"entrant": k, "mu": rating["mu"], "sigma": rating["sigma"], "win_share": row["win_share"],
                            "score": row["score"], "hands": row["hands"]})  # fmt: skip
        tables[str(p)] = {"deals": deals, "hands": report["hands_played"],
                          "ratings": sorted(ratings, key=lambda r: -r["mu"])}  # fmt: skip
    return {"format": FORMAT, "seed": seed, "deals_per_pair": deals_per_pair, "players": list(players),
            "entrants": list(entrants), "tables": tables, "versions": versions()}  # fmt: skip


def save_ladder(record: dict[str, Any], path: str | Path) -> None:
    Path(path).write_text(json.dumps(record, indent=1, default=float) + "\n")


def load_ladder(path: str | Path) -> dict[str, Any]:
    """A ladder record written by ``save_ladder``, or an error saying what the file is."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no ladder record at {path}")
    try:
        record = json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise ValueError(f"{path} is not JSON: {e}") from None
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        raise ValueError(f"{path} is not a ladder record ({FORMAT}, written by nertz ladder --out)")
    problem = _record_problem(record)
    if problem:
        raise ValueError(f"{path} is not a ladder record: {problem} (written by nertz ladder --out)")
    return record


def _record_problem(record: dict[str, Any]) -> str | None:
    """What in ``record`` ``format_ladder`` and ``plot_ladder`` could not read, or None."""
    missing = [key for key in ("seed", "deals_per_pair", "entrants", "tables") if key not in record]
    if missing:
        return f"missing {', '.join(repr(k) for k in missing)}"
    for key in ("seed", "deals_per_pair"):
        if not is_int(record[key]):
            return f"{key!r} is {record[key]!r}, not an integer"
    entrants, tables = record.get("entrants"), record.get("tables")
    if not isinstance(entrants, list) or not entrants or not all(isinstance(e, dict) for e in entrants):
        return "'entrants' is not a non-empty list of entrants (objects)"
    for k, e in enumerate(entrants):
        if not isinstance(e.get("label"), str) or not isinstance(e.get("kind"), str):
            return f"entrant {k} has no 'label' and 'kind' (strings)"
        if e.get("decisions") is not None and (not is_int(e["decisions"]) or not isinstance(e.get("run"), str)):
            return f"entrant {k} ({e['label']}) has no integer 'decisions' and 'run' (its run directory)"
    if not isinstance(tables, dict) or not tables:
        return "'tables' is not an object of table sizes, each with its deals, hands and ratings"
    for size, table in tables.items():
        if not isinstance(table, dict) or not all(is_int(table.get(k)) for k in ("deals", "hands")):
            return f"table {size!r} has no integer 'deals' and 'hands'"
        if not isinstance(table.get("ratings"), list):
            return f"table {size!r} has no list of 'ratings'"
        for r in table["ratings"]:
            if not isinstance(r, dict) or not is_int(r.get("entrant")) or not 0 <= r["entrant"] < len(entrants):
                return f"a rating of table {size!r} names no entrant from 0 to {len(entrants) - 1}"
            numbers = ("mu", "sigma", "win_share", "score") if r.get("hands") else ("mu", "sigma")
            if not is_int(r.get("hands")) or not all(is_real(r.get(k)) for k in numbers):
                return f"the rating of entrant {r['entrant']} at table {size!r} lacks {', '.join(numbers)} or hands"
    return None


def format_ladder(record: dict[str, Any]) -> str:
    """Each table size's ratings, best first, as plain text."""
    entrants = record["entrants"]
    width = max(len(e["label"]) for e in entrants)
    lines = [f"OpenSkill ladder, seed {record['seed']}, about {record['deals_per_pair']} deals per pair"]
    for p, table in record["tables"].items():
        lines += ["", f"{p} players: {table['deals']} deals, {table['hands']} hands"]
        lines.append(f"  {'entrant':<{width}}  {'mu':>6}  {'sigma':>5}  {'win share':>9}  {'score':>6}  decisions")
        for r in table["ratings"]:
            e = entrants[r["entrant"]]
            when = f"{e['decisions']:,}" if e.get("decisions") is not None else e["kind"]
            played = f"{r['win_share']:>9.3f}  {r['score']:>+6.2f}" if r["hands"] else f"{'unseated':>9}  {'':>6}"
            lines.append(f"  {e['label']:<{width}}  {r['mu']:>6.2f}  {r['sigma']:>5.2f}  {played}  {when}")
    return "\n".join(lines)


def plot_ladder(record: dict[str, Any], path: str | Path | None = None):
    """One panel per table size: each run's snapshots as rating (mu, band of one sigma) against
    training decisions, every other entrant as a dashed horizontal line (in the legend, best
    first; one far below every snapshot is only named there). Saved to ``path`` if given."""
    from nertz_env.training.plots import _pyplot

    plt = _pyplot()
    entrants, sizes = record["entrants"], list(record["tables"])
    fig, axes = plt.subplots(1, len(sizes), figsize=(4.6 * len(sizes), 3.8), layout="constrained", squeeze=False)
    steps = [e["decisions"] for e in entrants if e.get("decisions") is not None]
    right = max(steps) if steps else 1
    for ax, p in zip(axes[0], sizes):
        rated = {r["entrant"]: r for r in record["tables"][p]["ratings"]}
        runs: dict[str, list[tuple[int, float, float]]] = {}
        fixed = []
        for k, r in rated.items():
            e = entrants[k]
            if e.get("decisions") is not None:
                runs.setdefault(e["run"], []).append((e["decisions"], r["mu"], r["sigma"]))
            else:
                fixed.append((r["mu"], k))
        for run, pts in runs.items():
            pts.sort()
            x, mu, sg = zip(*pts)
            ax.plot(x, mu, marker="o", label=Path(run).name)
            ax.fill_between(x, [m - s for m, s in zip(mu, sg)], [m + s for m, s in zip(mu, sg)], alpha=0.2)
        # Lines far below every snapshot (random) would squash the curves: named, not drawn.
        floor = min((m - s for pts in runs.values() for _, m, s in pts), default=-math.inf) - 3.0
        for mu, k in sorted(fixed, reverse=True):  # one colour per entrant in every panel
            label = entrants[k]["label"] + (f" (mu {mu:.1f}, below)" if mu < floor else "")
            ax.axhline(mu if mu >= floor else math.nan, color=plt.cm.Dark2(k % 8), ls="--", lw=1, label=label)
        ax.set_xlim(0, right * 1.02)
        ax.set_title(f"{p} players, {record['tables'][p]['deals']} deals")
        ax.set_xlabel("training decisions")
        ax.set_ylabel("OpenSkill mu")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="best")
    fig.suptitle(f"OpenSkill ladder, seed {record['seed']}: a policy plays only the table size it was trained for",
                 fontsize=9)  # fmt: skip
    if path is not None:
        fig.savefig(path, dpi=110)
    return fig


def main(argv: Sequence[str] | None = None, prog: str = "nertz ladder") -> int:
    ap = Parser(prog=prog, description=__doc__.split("\n\n")[0])
    add = ap.add_argument
    add("--runs", nargs="*", default=[], help="run directories of train_selfplay whose snapshots join the ladder")
    add("--scripted", nargs="*", default=list(SCRIPTED), help="the scripted entrants (agent names or specs)")
    add("--no-shipped", action="store_true", help="leave out the shipped policies (agents/policies/)")
    add("--players", nargs="+", type=at_least(2), default=list(PLAYERS), help="table sizes, one ladder each")
    add("--deals-per-pair", type=at_least(1, MOST_DEALS), default=10, help="deals per pair of entrants (about)")
    add("--seed", type=seed_number, default=0, help="the seed of the deals, the seat draws and the agents")
    add("--out", type=output_file(".json"), default=None, help="write the ladder record as JSON")
    add("--plot", type=output_file(".png", ".svg", ".pdf"), default=None, help="draw rating against decisions")
    add("--plot-only", default=None, metavar="JSON", help="draw --plot from this record instead of playing")
    add("--quiet", action="store_true", help="no progress")
    args = ap.parse_args(argv)
    try:
        check_players(args.players)
    except ValueError as e:
        ap.error(f"argument --players: {e}")
    if args.plot and importlib.util.find_spec("matplotlib") is None:  # before any deal is played
        ap.error("--plot needs matplotlib, which is not installed: pip install 'nertz-env[training]'")
    try:
        if args.plot_only:
            if not args.plot:
                ap.error("--plot-only needs --plot (where to draw)")
            record = load_ladder(args.plot_only)
        else:
            if args.runs:
                require(ap, "torch", what="--runs (trained policies)")
            shipped = not args.no_shipped and importlib.util.find_spec("torch") is not None
            if not shipped and not args.no_shipped:
                hint = "pip install 'nertz-env[training]'"
                print(f"the shipped policies sit out: they need torch, {hint}", file=sys.stderr)
            entrants = entrants_for(args.scripted, shipped, args.runs)
            record = ladder(entrants, args.players, args.deals_per_pair, args.seed, False if args.quiet else None)
        if args.plot:
            plot_ladder(record, args.plot)
    except USER_ERRORS as e:
        ap.error(str(e))
    print(format_ladder(record))
    if args.out and not args.plot_only:
        save_ladder(record, args.out)
        print(f"wrote {args.out}")
    if args.plot:
        print(f"wrote {args.plot}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(prog="python -m nertz_env.training.ladder"))
