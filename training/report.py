"""Turning the hands of an evaluation into its tables: per agent, per pair of agents, as text.

Every record is one hand: ``key`` (deal first), ``seats`` (the agent index in each seat),
``scores`` (R7), ``nertz_left``, ``called``, ``on_foundations``, ``races_won`` / ``races_lost``
(R6) and ``ticks``. Hands of one deal are not independent (the duplicate format replays it in
every seat rotation; a match's rotations share its deals), so every interval, of scores and of
shares alike, is taken over deals (the deal, ``key[0]``, is the unit: ``stats.clustered_interval``
and, for shares, ``stats.clustered_share_interval``), never over rotated hands as if they were
independent.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np

from nertz_env.training import stats


def by_deal(pairs) -> list[list[float]]:
    """``(deal, value)`` pairs grouped by deal, in deal order: the groups of ``clustered_interval``."""
    groups: dict[Any, list[float]] = defaultdict(list)
    for deal, value in pairs:
        groups[deal].append(float(value))
    return [groups[d] for d in sorted(groups)]


def over_deals(pairs, share: bool = False) -> tuple[float, list[float]]:
    """``(mean, [low, high])`` of ``(deal, value)`` pairs, the 95% interval over deals (of a
    ``share``, the Wilson interval at the clustered variance's effective size)."""
    groups = by_deal(pairs)
    mean, lo, hi = stats.clustered_share_interval(groups) if share else stats.clustered_interval(groups)
    return mean, [lo, hi]


def summarize(records: list[dict[str, Any]], labels: Sequence[str]) -> list[dict[str, Any]]:
    """Per agent that played (``index`` into ``labels``): score, win share and Nertz-out rate, each
    with its 95% interval over deals (over matches in match mode), and the other rates and means
    (``calls_won``: its win share in the hands it called, R4.6; None if it never called)."""
    per: dict[int, dict[str, list]] = {k: defaultdict(list) for k in range(len(labels))}
    for rec in records:
        shares = stats.win_shares(rec["scores"])
        for seat, k in enumerate(rec["seats"]):
            d = per[k]
            d["score"].append(rec["scores"][seat])
            d["win"].append(shares[seat])
            d["out"].append(rec["nertz_left"][seat] == 0)
            d["called"].append(rec["called"][seat])
            if rec["called"][seat]:
                d["call_won"].append(shares[seat])
            d["found"].append(rec["on_foundations"][seat])
            d["ticks"].append(rec["ticks"])
            d["won"].append(rec["races_won"][seat])
            d["lost"].append(rec["races_lost"][seat])
            d["deal"].append(rec["key"][0])
    rows = []
    for k, label in enumerate(labels):
        d, n = per[k], len(per[k]["score"])
        if n == 0:
            continue
        score, score_ci = over_deals(zip(d["deal"], d["score"]))
        win, win_ci = over_deals(zip(d["deal"], d["win"]), share=True)
        out, out_ci = over_deals(zip(d["deal"], d["out"]), share=True)
        rows.append({
            "agent": label, "index": k, "hands": n, "deals": len(set(d["deal"])), "score": score,
            "score_ci": score_ci, "win_share": win, "win_ci": win_ci, "nertz_out": out, "nertz_out_ci": out_ci,
            "called": sum(d["called"]) / n, "calls_won": float(np.mean(d["call_won"])) if d["call_won"] else None,
            "to_foundations": float(np.mean(d["found"])),
            "ticks": float(np.mean(d["ticks"])), "races_won": float(np.mean(d["won"])),
            "races_lost": float(np.mean(d["lost"])),
        })
    return rows


def summarize_teams(
    records: list[dict[str, Any]], labels: Sequence[str], matches: Sequence[dict[str, Any]] = ()
) -> list[dict[str, Any]]:
    """Per team of partners (R8: agents ``k`` and ``k + n/2``, seated ``P/2`` apart): the team
    score, both partners' summed, the team's share of hands won (the highest team score wins, ties
    split) and, in match mode, of matches won; each with its 95% interval over deals (matches)."""
    half = len(labels) // 2
    score: dict[int, list[tuple[int, float]]] = defaultdict(list)
    wins: dict[int, list[tuple[int, float]]] = defaultdict(list)
    for rec in records:
        deal, (teams, team_scores) = rec["key"][0], _teams_of(rec)
        for t, share, v in zip((min(team) for team in teams), stats.win_shares(team_scores), team_scores):
            wins[t].append((deal, share))
            score[t].append((deal, v))
    rows = []
    for t in range(half):
        if not wins[t]:
            continue
        mean, score_ci = over_deals(score[t])
        win, win_ci = over_deals(wins[t], share=True)
        row = {
            "team": f"{labels[t]}+{labels[t + half]}", "agents": [t, t + half], "hands": len(wins[t]),
            "score": mean, "score_ci": score_ci, "win_share": win, "win_ci": win_ci,
        }
        mine = [(m["key"][0], m["shares"].get(t, 0.0)) for m in matches if t in m["seats"]]
        if mine:
            row["matches"] = len(mine)
            row["match_win_share"], row["match_win_ci"] = over_deals(mine, share=True)
        rows.append(row)
    return rows


def paired(records: list[dict[str, Any]], labels: Sequence[str]) -> list[dict[str, Any]]:
    """Every pair of agents ``i < j`` over the hands where both sat: the mean score difference
    ``i - j`` and the share of those hands where ``i`` scored more than ``j`` (ties half), each
    with its 95% interval over deals."""
    diff: dict[tuple[int, int], list[tuple[int, float]]] = defaultdict(list)
    beat: dict[tuple[int, int], list[tuple[int, float]]] = defaultdict(list)
    for rec in records:
        seat_of = {k: s for s, k in enumerate(rec["seats"])}
        for i, si in seat_of.items():
            for j, sj in seat_of.items():
                if i < j:
                    a, b = rec["scores"][si], rec["scores"][sj]
                    diff[i, j].append((rec["key"][0], a - b))
                    beat[i, j].append((rec["key"][0], 1.0 if a > b else 0.5 if a == b else 0.0))
    out = []
    for (i, j) in sorted(diff):
        mean, diff_ci = over_deals(diff[i, j])
        beats, beats_ci = over_deals(beat[i, j], share=True)
        out.append({
            "agent": labels[i], "versus": labels[j], "hands": len(beat[i, j]), "score_diff": mean,
            "score_diff_ci": diff_ci, "beats": beats, "beats_ci": beats_ci,
        })
    return out


def tables_of(records: list[dict[str, Any]], labels: Sequence[str], partners: bool,
              match_records: Sequence[dict[str, Any]] = ()) -> dict[str, Any]:  # fmt: skip
    """A report's tables from its hands: ``summary`` (with each agent's OpenSkill ``mu`` and
    ``sigma``), ``paired``, ``ratings`` and, with ``partners``, ``teams``."""
    if partners:  # R8: a team of partners is ranked by its summed score, its members rated together
        ratings = stats.rate_teams((_teams_of(r) for r in records), players=range(len(labels)))
    else:
        ratings = stats.rate_hands(((r["seats"], r["scores"]) for r in records), players=range(len(labels)))
    summary = summarize(records, labels)
    for row in summary:
        row["mu"], row["sigma"] = ratings[row["index"]]
    return {
        "summary": summary, "paired": paired(records, labels),
        "ratings": {labels[k]: {"mu": mu, "sigma": sg} for k, (mu, sg) in ratings.items()},
        "teams": summarize_teams(records, labels, list(match_records)) if partners else [],
    }  # fmt: skip


def _teams_of(record: dict[str, Any]) -> tuple[list[list[int]], list[float]]:
    """A hand's teams of partners (R8: seats ``s`` and ``s + P/2``) and their summed scores."""
    seats, scores, half = record["seats"], record["scores"], len(record["seats"]) // 2
    return [[seats[s], seats[s + half]] for s in range(half)], [scores[s] + scores[s + half] for s in range(half)]


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
        lines.append("teams of partners (R8): team score = both partners' scores summed; R8's win is the team's "
                     "(above, each player's win share is its own top score's, its rating its team's)")
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
