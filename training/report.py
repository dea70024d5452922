"""Turning the hands of an evaluation into its tables: per agent, per pair of agents, as text.

Every record is one hand: ``key`` (deal first), ``seats`` (the agent index in each seat),
``scores`` (R7), ``nertz_left``, ``called``, ``on_foundations``, ``races_won`` / ``races_lost``
(R6) and ``ticks``. Hands of one deal are not independent (the duplicate format replays it), so
score intervals are taken over per-deal means; shares use Wilson intervals over hands.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np

from nertz_env.training import stats


def summarize(records: list[dict[str, Any]], labels: Sequence[str]) -> list[dict[str, Any]]:
    """Per agent that played (``index`` into ``labels``): score (t interval over deals; over
    matches in match mode), win share (Wilson), rates and means."""
    per: dict[int, dict[str, list]] = {k: defaultdict(list) for k in range(len(labels))}
    by_deal: dict[int, dict[int, list[float]]] = {k: defaultdict(list) for k in range(len(labels))}
    for rec in records:
        shares = stats.win_shares(rec["scores"])
        for seat, k in enumerate(rec["seats"]):
            d = per[k]
            d["score"].append(rec["scores"][seat])
            d["win"].append(shares[seat])
            d["out"].append(rec["nertz_left"][seat] == 0)
            d["called"].append(rec["called"][seat])
            d["found"].append(rec["on_foundations"][seat])
            d["ticks"].append(rec["ticks"])
            d["won"].append(rec["races_won"][seat])
            d["lost"].append(rec["races_lost"][seat])
            by_deal[k][rec["key"][0]].append(rec["scores"][seat])
    rows = []
    for k, label in enumerate(labels):
        d, n = per[k], len(per[k]["score"])
        if n == 0:
            continue
        mean, lo, hi = stats.mean_interval([float(np.mean(v)) for v in by_deal[k].values()])
        wins, outs = math.fsum(d["win"]), sum(d["out"])
        rows.append({
            "agent": label, "index": k, "hands": n, "score": mean, "score_ci": [lo, hi],
            "win_share": wins / n, "win_ci": list(stats.wilson_interval(wins, n)),
            "nertz_out": outs / n, "nertz_out_ci": list(stats.wilson_interval(outs, n)),
            "called": sum(d["called"]) / n, "to_foundations": float(np.mean(d["found"])),
            "ticks": float(np.mean(d["ticks"])), "races_won": float(np.mean(d["won"])),
            "races_lost": float(np.mean(d["lost"])),
        })
    return rows


def summarize_teams(
    records: list[dict[str, Any]], labels: Sequence[str], matches: Sequence[dict[str, Any]] = ()
) -> list[dict[str, Any]]:
    """Per team of partners (R8: agents ``k`` and ``k + n/2``, seated ``P/2`` apart): the team
    score, both partners' summed (t interval over deals), the team's share of hands won (the
    highest team score wins, ties split; Wilson) and, in match mode, of matches won."""
    half = len(labels) // 2
    score: dict[int, dict[int, list[float]]] = {t: defaultdict(list) for t in range(half)}
    wins: dict[int, list[float]] = defaultdict(list)
    for rec in records:
        seats, p = rec["seats"], len(rec["seats"])
        team_ids = [min(seats[s], seats[s + p // 2]) for s in range(p // 2)]
        team_scores = [rec["scores"][s] + rec["scores"][s + p // 2] for s in range(p // 2)]
        for t, share in zip(team_ids, stats.win_shares(team_scores)):
            wins[t].append(share)
        for t, v in zip(team_ids, team_scores):
            score[t][rec["key"][0]].append(v)
    rows = []
    for t in range(half):
        n = len(wins[t])
        if n == 0:
            continue
        mean, lo, hi = stats.mean_interval([float(np.mean(v)) for v in score[t].values()])
        won = math.fsum(wins[t])
        row = {
            "team": f"{labels[t]}+{labels[t + half]}", "agents": [t, t + half], "hands": n,
            "score": mean, "score_ci": [lo, hi], "win_share": won / n, "win_ci": list(stats.wilson_interval(won, n)),
        }
        mine = [m["shares"].get(t, 0.0) for m in matches if t in m["seats"]]
        if mine:
            row["matches"] = len(mine)
            row["match_win_share"] = math.fsum(mine) / len(mine)
            row["match_win_ci"] = list(stats.wilson_interval(math.fsum(mine), len(mine)))
        rows.append(row)
    return rows


def paired(records: list[dict[str, Any]], labels: Sequence[str]) -> list[dict[str, Any]]:
    """Every pair of agents ``i < j`` over the hands where both sat: the mean score difference
    ``i - j`` per deal (t interval) and the share of those hands where ``i`` scored more than
    ``j`` (ties half, Wilson interval)."""
    diff: dict[tuple[int, int], dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    beat: dict[tuple[int, int], list[float]] = defaultdict(list)
    for rec in records:
        seat_of = {k: s for s, k in enumerate(rec["seats"])}
        for i, si in seat_of.items():
            for j, sj in seat_of.items():
                if i < j:
                    a, b = rec["scores"][si], rec["scores"][sj]
                    diff[i, j][rec["key"][0]].append(a - b)
                    beat[i, j].append(1.0 if a > b else 0.5 if a == b else 0.0)
    out = []
    for (i, j) in sorted(diff):
        mean, lo, hi = stats.mean_interval([float(np.mean(v)) for v in diff[i, j].values()])
        won, n = math.fsum(beat[i, j]), len(beat[i, j])
        out.append({
            "agent": labels[i], "versus": labels[j], "hands": n, "score_diff": mean, "score_diff_ci": [lo, hi],
            "beats": won / n, "beats_ci": list(stats.wilson_interval(won, n)),
        })
    return out


def format_report(report: dict[str, Any]) -> str:
    """The per-agent table, then every pair of agents, as text."""
    matches = report["mode"] == "matches"
    lines = [
        f"{report['mode']}: {report['deals']} {'matches' if matches else 'deals'} x rotations, "
        f"{report['players']} players, {report['hands_played']} hands, seed {report['seed']}, "
        f"{report['elapsed_s']:.1f} s ({report['ticks_per_s']:,.0f} ticks/s)"
    ]
    head = f"{'agent':<22}{'hands':>7}  {'score [95% CI]':<24}{'win share [95% CI]':<24}"
    head += f"{'out':>6}{'call':>6}{'found':>7}{'ticks':>7}{'races +/-':>12}{'mu±sigma':>13}"
    lines.append(head + (f"  {'match win [95% CI]':<24}" if matches else ""))
    for r in report["summary"]:
        line = f"{r['agent']:<22}{r['hands']:>7}  "
        line += f"{r['score']:>6.2f} [{r['score_ci'][0]:6.2f},{r['score_ci'][1]:6.2f}]  "
        line += f"{r['win_share']:.3f} [{r['win_ci'][0]:.3f},{r['win_ci'][1]:.3f}]    "
        line += f"{r['nertz_out']:>6.2f}{r['called']:>6.2f}{r['to_foundations']:>7.1f}{r['ticks']:>7.1f}"
        line += f"{r['races_won']:>6.2f}/{r['races_lost']:<5.2f}{r['mu']:>7.1f}±{r['sigma']:<4.2f}"
        if matches:
            ci = r["match_win_ci"]
            line += f"  {r['match_win_share']:.3f} [{ci[0]:.3f},{ci[1]:.3f}]"
        lines.append(line)
    if report.get("teams"):
        lines.append("teams of partners (R8): team score = both partners' scores summed")
        for r in report["teams"]:
            line = f"  {r['team']:<36}{r['hands']:>7}  {r['score']:>6.2f} [{r['score_ci'][0]:6.2f},"
            line += f"{r['score_ci'][1]:6.2f}]  win {r['win_share']:.3f} [{r['win_ci'][0]:.3f},{r['win_ci'][1]:.3f}]"
            if "match_win_share" in r:
                ci = r["match_win_ci"]
                line += f"  match win {r['match_win_share']:.3f} [{ci[0]:.3f},{ci[1]:.3f}]"
            lines.append(line)
    if report["paired"]:
        lines.append("pairs at the same hands: mean score difference per deal, share of hands the first scored more")
        for p in report["paired"]:
            d, b = p["score_diff_ci"], p["beats_ci"]
            lines.append(
                f"  {p['agent']:>18} vs {p['versus']:<18}{p['score_diff']:>+7.2f} [{d[0]:+.2f},{d[1]:+.2f}]"
                f"   {p['beats']:.3f} [{b[0]:.3f},{b[1]:.3f}]  ({p['hands']} hands)"
            )
    return "\n".join(lines)
