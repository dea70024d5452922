"""Paired differences between players evaluated at separate tables on the same duplicate deals.

An ablation evaluates each variant in its own run of the harness (``nertz eval --agents VARIANT
heuristic:depth=3 heuristic:depth=3 heuristic:depth=3 --hands 10000 --seed 2032 --out V.json``).
Each report's interval covers the deals' luck as well as the player, so two overlapping intervals
say little. Played on the same deals (the same ``--seed``: a deal is a pure function of the seed
and its index), the two players can be paired deal by deal:

    python -m nertz_env.training.compare_reports BASE.json VARIANT.json [VARIANT2.json ...]
    nertz compare BASE.json VARIANT.json --agent 0 --json differences.json

For each variant and each deal, the compared agent's (``--agent``, default 0, the first
``--agents`` entry) win share and score are averaged over the deal's seat rotations; the
differences ``variant - base`` are averaged over deals with a Student-t 95% interval over deals
(the unit of pairing). The reports must be full ``--out`` files of duplicate runs (the hands are
needed; ``learning_results --add`` keeps none) with the same seed, players, rules and deals, and
the same agents in every other seat, so that the compared player is all that differs. The
interval covers the deals, not training: two training seeds of one recipe differ too.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from nertz_env.cli_checks import Parser, at_least, output_file
from nertz_env.training import stats

_SAME = ("seed", "players", "config")  # the mode is checked per report: duplicate


def per_deal(report: dict[str, Any], agent: int) -> dict[int, tuple[float, float]]:
    """``{deal: (win share, score)}`` of agent ``agent``, each averaged over the deal's hands."""
    wins: dict[int, list[float]] = defaultdict(list)
    scores: dict[int, list[float]] = defaultdict(list)
    for rec in report["hands"]:
        if agent not in rec["seats"]:
            continue
        seat = rec["seats"].index(agent)
        wins[rec["key"][0]].append(stats.win_shares(rec["scores"])[seat])
        scores[rec["key"][0]].append(float(rec["scores"][seat]))
    return {d: (sum(wins[d]) / len(wins[d]), sum(scores[d]) / len(scores[d])) for d in wins}


def check_pair(base: dict[str, Any], other: dict[str, Any], agent: int, name: str) -> None:
    """Refuse, naming what differs, a pair of reports whose compared player is not all that differs."""
    for k, rep in (("the base", base), (name, other)):
        if not isinstance(rep, dict) or "hands" not in rep:
            raise ValueError(f"{k} holds no hands: pass the full --out file of nertz eval, not a slimmed copy")
        if rep.get("mode") != "duplicate":
            raise ValueError(f"{k} is of mode {rep.get('mode')!r}; only duplicate deals pair")
        if not 0 <= agent < len(rep.get("specs", ())):
            raise ValueError(f"--agent {agent}: {k} has agents 0 to {len(rep.get('specs', ())) - 1}")
    for key in _SAME:
        if other.get(key) != base.get(key):
            raise ValueError(f"{name} differs from the base in {key!r}: only runs on the same deals and rules pair")
    others = [s for i, s in enumerate(base["specs"]) if i != agent]
    if [s for i, s in enumerate(other["specs"]) if i != agent] != others or len(other["specs"]) != len(base["specs"]):
        raise ValueError(f"{name} seats other agents than the base ({other['specs']} against {base['specs']}): "
                         f"only agent {agent} may differ")  # fmt: skip


def compare(base: dict[str, Any], other: dict[str, Any], agent: int = 0, name: str = "the variant") -> dict[str, Any]:
    """The paired difference ``other - base`` of agent ``agent``'s win share and score per deal,
    with 95% intervals over the deals both reports hold (which must be the same deals)."""
    check_pair(base, other, agent, name)
    a, b = per_deal(base, agent), per_deal(other, agent)
    if set(a) != set(b):
        extra = sorted(set(a) ^ set(b))
        raise ValueError(f"{name} and the base hold different deals (deal {extra[0]} is in one only): "
                         "evaluate both on the same --hands and --first-deal")  # fmt: skip
    deals = sorted(a)
    win = stats.mean_interval([b[d][0] - a[d][0] for d in deals])
    score = stats.mean_interval([b[d][1] - a[d][1] for d in deals])
    return {
        "base": base["specs"][agent], "variant": other["specs"][agent], "agent": agent, "deals": len(deals),
        "seed": base["seed"], "base_win_share": sum(a[d][0] for d in deals) / len(deals),
        "variant_win_share": sum(b[d][0] for d in deals) / len(deals),
        "win_share_diff": win[0], "win_share_diff_ci": [win[1], win[2]],
        "score_diff": score[0], "score_diff_ci": [score[1], score[2]],
    }  # fmt: skip


def format_rows(rows: Sequence[dict[str, Any]]) -> str:
    lines = [f"paired over deals, variant - base (agent {rows[0]['agent']}, {rows[0]['deals']} deals of seed "
             f"{rows[0]['seed']}; base {rows[0]['base']} wins {rows[0]['base_win_share']:.3f})"]  # fmt: skip
    for r in rows:
        w, s = r["win_share_diff_ci"], r["score_diff_ci"]
        line = f"  {r['variant']:<40} wins {r['variant_win_share']:.3f}  win share {r['win_share_diff']:+.4f} "
        lines.append(line + f"[{w[0]:+.4f}, {w[1]:+.4f}]  score {r['score_diff']:+.3f} [{s[0]:+.3f}, {s[1]:+.3f}]")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None, prog: str = "python -m nertz_env.training.compare_reports") -> int:
    ap = Parser(prog=prog, description=__doc__.split("\n\n")[0])
    ap.add_argument("base", help="the --out file of nertz eval for the base player")
    ap.add_argument("variants", nargs="+", help="--out files of the same evaluation with another player")
    ap.add_argument("--agent", type=at_least(0), default=0, help="the compared agent's index in --agents (default 0)")
    ap.add_argument("--json", type=output_file(".json"), default=None, help="also write the differences here")
    args = ap.parse_args(argv)
    try:
        with open(args.base) as f:
            base = json.load(f)
        rows = []
        for path in args.variants:
            with open(path) as f:
                rows.append(compare(base, json.load(f), args.agent, path))
    except (OSError, ValueError, KeyError, TypeError, IndexError) as e:
        ap.error(f"{type(e).__name__}: {e}")
    print(format_rows(rows))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"base_report": args.base, "rows": rows}, f, indent=1)
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
