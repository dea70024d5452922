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
the same agents in every other seat, so that the compared player is all that differs; a report
with no hand of the compared agent, or a score that is not a finite number, is refused by name. The
interval covers the deals, not training: two training seeds of one recipe differ too.

Training's own noise needs several training seeds of both recipes. ``--seed-pair BASE VARIANT``
(repeatable) adds another seed's pair of reports, each pair on the same deals as the first (the
same seed, rules, players and deals, ``--first-deal`` and ``--hands`` included: a pair on other
deals is refused, naming them):

    nertz compare base_s1.json variant_s1.json --seed-pair base_s2.json variant_s2.json \
        --seed-pair base_s3.json variant_s3.json

Each seed's pair is compared over deals as above, and then the mean of the seeds' differences is
given with an interval over seeds and deals (``stats.seeds_and_deals_interval``): the seeds'
spread, wide with few seeds, and the noise of the deals, which every pair shares and so the
spread alone leaves out. A pair given twice, or the first pair again, is refused: it is no other
training seed.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from nertz_env.cli_checks import Parser, at_least, output_file
from nertz_env.training import merge_reports, stats

_SAME = ("seed", "players", "config")  # the mode is checked per report: duplicate


def per_deal(report: dict[str, Any], agent: int, name: str = "the report") -> dict[int, tuple[float, float]]:
    """``{deal: (win share, score)}`` of agent ``agent``, each averaged over the deal's hands; a
    hand of it whose scores are not all finite numbers is a ``ValueError`` naming ``name``."""
    wins: dict[int, list[float]] = defaultdict(list)
    scores: dict[int, list[float]] = defaultdict(list)
    for rec in report["hands"]:
        if agent not in rec["seats"]:
            continue
        if not all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in rec["scores"]):
            raise ValueError(f"{name} holds a hand (key {rec['key']}) whose scores {rec['scores']} are not all finite "
                             "numbers: pass the --out file of nertz eval as it wrote it")  # fmt: skip
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
        if isinstance(rep.get("config"), dict) and rep["config"].get("partners"):
            raise ValueError(f"{k} was played by partners (R8), whose win is the team's: compare pairs one agent's "
                             "own win share and score, so only reports without partners pair")  # fmt: skip
        if not 0 <= agent < len(rep.get("specs", ())):
            raise ValueError(f"--agent {agent}: {k} has agents 0 to {len(rep.get('specs', ())) - 1}")
    merge_reports.check_versions([base, other], ["the base", name])
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
    a, b = per_deal(base, agent, "the base"), per_deal(other, agent, name)
    for k, rep, held in (("the base", base, a), (name, other, b)):
        if not held:
            raise ValueError(f"{k} holds no hand of agent {agent} ({rep['specs'][agent]}): its hands are none, or "
                             "none seated it (a pool of more agents than seats): compare reports where it played")
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


def over_seeds(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The mean over training seeds of each seed's paired difference (``rows``, one per seed, each
    from ``compare``), with a 95% interval that holds the seeds' spread and the noise of the deals
    they share (``stats.seeds_and_deals_interval``)."""
    if len({(r["deals"], r["seed"]) for r in rows}) != 1:
        raise ValueError("every --seed-pair must be evaluated on the deals of the first pair "
                         "(same --seed, --first-deal and --hands)")  # fmt: skip
    win, score = (_seeds_and_deals(rows, key) for key in ("win_share_diff", "score_diff"))
    return {
        "training_seeds": len(rows), "deals": rows[0]["deals"], "seed": rows[0]["seed"],
        "base_win_share": sum(r["base_win_share"] for r in rows) / len(rows),
        "variant_win_share": sum(r["variant_win_share"] for r in rows) / len(rows),
        "win_share_diff": win[0], "win_share_diff_ci": [win[1], win[2]],
        "score_diff": score[0], "score_diff_ci": [score[1], score[2]],
    }  # fmt: skip


def _seeds_and_deals(rows: Sequence[dict[str, Any]], key: str) -> tuple[float, float, float]:
    """The seeds' mean of ``key`` with its interval over seeds and deals, each seed's standard error
    over the deals read back from its 95% interval (rows written by ``--json`` hold the same)."""
    t = stats.t_quantile(0.975, rows[0]["deals"] - 1)
    errors = [(r[f"{key}_ci"][1] - r[f"{key}_ci"][0]) / (2 * t) for r in rows]
    return stats.seeds_and_deals_interval([r[key] for r in rows], errors, rows[0]["deals"])


def format_over_seeds(total: dict[str, Any]) -> str:
    w, s = total["win_share_diff_ci"], total["score_diff_ci"]
    return (f"over {total['training_seeds']} training seeds (interval over seeds and deals): base wins "
            f"{total['base_win_share']:.3f}, variant {total['variant_win_share']:.3f}  win share "
            f"{total['win_share_diff']:+.4f} [{w[0]:+.4f}, {w[1]:+.4f}]  score {total['score_diff']:+.3f} "
            f"[{s[0]:+.3f}, {s[1]:+.3f}]")  # fmt: skip


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
    ap.add_argument("--seed-pair", nargs=2, action="append", default=[], metavar=("BASE", "VARIANT"),
                    help="the reports of another training seed of the base and of the one variant (repeatable): "
                    "adds the mean over seeds with an interval over seeds and deals")  # fmt: skip
    args = ap.parse_args(argv)
    if args.seed_pair and len(args.variants) != 1:
        ap.error(f"--seed-pair compares one variant across seeds; got {len(args.variants)} variants")
    try:
        base = _read(args.base)
        variants = [_read(path) for path in args.variants]
        rows = [compare(base, variant, args.agent, path) for variant, path in zip(variants, args.variants)]
        pairs = [(_read(b), _read(v)) for b, v in args.seed_pair]
        seeds = rows + [_seed_pair(base, *pair, names, args.agent) for pair, names in zip(pairs, args.seed_pair)]
        if pairs:
            _check_distinct_runs([(base, variants[0]), *pairs], [(args.base, args.variants[0]), *args.seed_pair])
        total = over_seeds(seeds) if args.seed_pair else None
    except (OSError, ValueError, KeyError, TypeError, IndexError) as e:
        ap.error(f"{type(e).__name__}: {e}")
    print("\n".join(format_rows([r]) for r in seeds) if total else format_rows(rows))
    if total:
        print(format_over_seeds(total))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"base_report": args.base, "rows": seeds, **({"over_seeds": total} if total else {})}, f,
                      indent=1)  # fmt: skip
        print(f"wrote {args.json}")
    return 0


def _check_distinct_runs(pairs: Sequence[tuple[dict[str, Any], dict[str, Any]]],
                         names: Sequence[Sequence[str]]) -> None:  # fmt: skip
    """Refuse a training seed's base or variant whose hands are those of an earlier pair's: the same
    run given twice is no other seed, and would shrink the interval over seeds."""
    for role in (0, 1):
        seen: dict[str, str] = {}
        for pair, pair_names in zip(pairs, names):
            hands = json.dumps(pair[role]["hands"], sort_keys=True, default=float)
            if hands in seen:
                raise ValueError(f"{pair_names[role]} holds the hands of {seen[hands]}: every --seed-pair must be "
                                 "another training seed's runs, not a run given again")  # fmt: skip
            seen[hands] = pair_names[role]


def _seed_pair(first_base: dict[str, Any], base: dict[str, Any], variant: dict[str, Any], names: Sequence[str],
               agent: int) -> dict[str, Any]:  # fmt: skip
    """``compare`` of another training seed's pair (``names``: its files), whose base must play the
    first base's deals, rules and other seats."""
    base_path, variant_path = names
    check_pair(first_base, base, agent, base_path)
    first_deals, deals = _deals(first_base), _deals(base)
    if deals != first_deals:
        raise ValueError(f"{base_path} holds {_span(deals)}, the first base {_span(first_deals)}: every "
                         "--seed-pair must be evaluated on the first pair's deals "
                         "(same --seed, --first-deal and --hands)")  # fmt: skip
    return compare(base, variant, agent, variant_path)


def _deals(report: dict[str, Any]) -> set[int]:
    return {rec["key"][0] for rec in report["hands"]}


def _span(deals: set[int]) -> str:
    """``deals 2-3`` when contiguous, else how many and from which to which."""
    if not deals:
        return "no deals"
    low, high = min(deals), max(deals)
    return f"deals {low}-{high}" if len(deals) == high - low + 1 else f"{len(deals)} deals from {low} to {high}"


def _read(path: str) -> Any:
    with open(path) as f:
        return json.load(f)


if __name__ == "__main__":
    raise SystemExit(main())
