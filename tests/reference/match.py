"""The reference's R8 (see ``legality.py`` for what it is and the readings of RULES.md it makes):
partners' team figures, and the match record after a hand."""

from __future__ import annotations

from collections.abc import Sequence


def team_figures(values: Sequence[int], config) -> list[int]:
    """R8 partners: each team's figure is the sum of both partners' (seats p and p + P/2)."""
    n = config.num_players
    if not config.partners:
        return list(values)
    return [values[p] + values[p + n // 2] for p in range(n // 2)]


def match_after_hand(match: dict, scores: Sequence[int], config, callers: Sequence[int] = ()) -> dict:
    """The match record (``Game.snapshot()["match"]``) after a hand scoring ``scores`` in which
    ``callers`` called (R8): hands go on until a team's total reaches ``target_score`` (or ``hands``
    are played); the highest total wins; a tie goes to the higher last-hand score; still tied,
    another hand, after which the rule is applied again among the tied; ``max_hands`` stops the
    match ("capped"). ``match_end``: "exceed" needs a total above the target, "spread" also ends
    on highest minus lowest total reaching it, "caller" lets a caller who reached it win first."""
    totals = [t + s for t, s in zip(match["totals"], scores)]
    hands = match["hands_played"] + 1
    n = config.num_players
    team = (lambda p: p % (n // 2)) if config.partners else (lambda p: p)
    team_total, team_last = team_figures(totals, config), team_figures(list(scores), config)
    contenders = sorted({team(p) for p in match["contenders"]})
    state = match["state"]
    fixed = config.hands is not None and hands >= config.hands
    target, end = config.target_score, config.match_end
    reached = max(team_total) > target if end == "exceed" else max(team_total) >= target
    if end == "spread":  # German Nerts: also when the spread of the totals reaches the target
        reached = reached or max(team_total) - min(team_total) >= target
    due = state == "tie-break" or fixed or (config.hands is None and reached)

    def rule(candidates):
        top = max(team_total[t] for t in candidates)
        tied = [t for t in candidates if team_total[t] == top]
        best = max(team_last[t] for t in tied)
        return [t for t in tied if team_last[t] == best]

    if due:
        if end == "caller":  # Snerts: a caller of this hand who has reached the target wins first
            called = sorted({team(p) for p in callers} & set(contenders))
            contenders = [t for t in called if team_total[t] >= target] or contenders
        contenders = rule(contenders)
        state = "decided" if len(contenders) == 1 else "tie-break"
    if state != "decided" and hands >= config.max_hands:
        if not due:
            contenders = rule(contenders)
        state = "capped"
    seats = [p for p in range(n) if team(p) in contenders]
    return {"totals": totals, "hands_played": hands, "contenders": seats, "state": state}
