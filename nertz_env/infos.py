"""The infos of ``nertz_v0`` (parallel, AEC, turn-based, match): one flat dict of numbers per
agent, with the same keys at ``reset`` and at every step, so that libraries which stack infos into
arrays (TorchRL, BenchMARL, SuperSuit, Gymnasium's vector envs) can.

Every agent's info holds (Python ``int`` or ``bool``):

=====================  =====================================================================
``score``              the running R7 score of the hand in play
``collision``          lost a foundation race this tick (R6)
``won_race``           won a foundation race this tick (R6)
``illegal_action``     the action was illegal and was played as WAIT
``called``             this player has called "Nertz!" in the hand (R4.6)
``end_reason``         0 while the episode runs, else the index into ``END_REASONS``:
                       1 ``"call"``, 2 ``"stall"`` (R5), 3 ``"max_cycles"``
``final_score``        the final R7 score (the match total with ``episode="match"``); 0 before
=====================  =====================================================================

With ``partners=True`` (R8) also ``team``, ``team_score`` and ``final_team_score``; with
``episode="match"`` also ``total``, ``hands_played``, ``hand_over`` (a hand ended this step, the
observation is the next hand's), ``hand_score``, ``hand_end_reason``, ``hand_called`` and
``hand_ticks`` (that hand's, 0 otherwise), ``match_winner`` and ``match_rank`` (1 = won; 0 before
the end), and with partners ``team_total``. The option ``info_action_mask=True`` adds
``action_mask`` (int8, the observation's mask) for libraries that read the mask from the infos;
``info_action_mask="only"`` puts it there alone, as a list of 0/1 (AgileRL 2.58 takes no array
there: its IPPO tests ``None in masks``), the observation being the bare vector.

Richer results (names instead of codes, dicts over agents) are not in the infos: the env's
``outcome()`` returns them once the episode has ended, and ``last_hand()`` the hand of a match
that ended last.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nertz_env import engine
from nertz_env.config import NertzConfig
from nertz_env.game import Game

END_REASONS: tuple[str | None, ...] = engine.END_REASONS
"""``end_reason`` codes: ``END_REASONS[code]`` is ``None`` (playing), ``"call"``, ``"stall"`` or
``"max_cycles"``."""

__all__ = ["END_REASONS", "end_reason_code", "info_keys", "infos", "last_hand", "outcome"]


def end_reason_code(name: str | None) -> int:
    """The integer code of an end reason name (``None`` while playing is 0)."""
    if name not in END_REASONS:
        raise ValueError(f"unknown end reason {name!r}; known: {', '.join(map(repr, END_REASONS))}")
    return END_REASONS.index(name)


def info_keys(config: NertzConfig, action_mask: bool = False) -> tuple[str, ...]:
    """The keys of every agent's info under ``config``, in order."""
    keys = ["score", "collision", "won_race", "illegal_action", "called", "end_reason", "final_score"]
    if config.partners:
        keys += ["team", "team_score", "final_team_score"]
    if config.episode == "match":
        keys += ["total", "hands_played", "hand_over", "hand_score", "hand_end_reason", "hand_called", "hand_ticks"]
        keys += ["match_winner", "match_rank"]
        if config.partners:
            keys.append("team_total")
    if action_mask:
        keys.append("action_mask")
    return tuple(keys)


def infos(
    game: Game, agents: list[str], after_step: bool, masks: np.ndarray | None = None, mask_list: bool = False
) -> dict[str, dict]:
    """Every agent's info now; ``after_step`` is False at ``reset`` (no races, no illegal action).
    ``masks`` (int8 ``[P, N]``) adds ``action_mask``: copied rows, or lists of 0/1 with ``mask_list``."""
    cfg, st = game.config, game.state
    reason = int(st.ended[0])
    ended = reason != 0
    final = (game.totals if game.is_match else st.score[0]) if ended else None
    # whole rows as Python values, read once (cheaper than a numpy scalar per agent and key)
    score, called = st.score.tolist()[0], st.called.tolist()[0]
    n = len(score)
    if after_step:
        collision, won_race, illegal = st.collision.tolist()[0], st.won_race.tolist()[0], st.illegal.tolist()[0]
    else:
        collision = won_race = illegal = [False] * n
    final_score = [int(v) for v in final] if final is not None else [0] * n  # None: not ended
    out: dict[str, dict[str, Any]] = {}
    for p, agent in enumerate(agents):  # agents are in seat order: the p-th agent is seat p
        out[agent] = {
            "score": score[p],
            "collision": collision[p],
            "won_race": won_race[p],
            "illegal_action": illegal[p],
            "called": called[p],
            "end_reason": reason,
            "final_score": final_score[p],
        }
    partners, is_match = cfg.partners, game.is_match
    if partners or is_match or masks is not None:
        for p, agent in enumerate(agents):
            _extra_info(game, p, after_step, final, masks, mask_list, out[agent])
    return out


def _extra_info(
    game: Game, p: int, after_step: bool, final: Any, masks: np.ndarray | None, mask_list: bool, info: dict[str, Any]
) -> None:
    """Seat ``p``'s keys beyond the standard seven (partners, match, action mask), written into
    ``info``; ``final`` is the episode's final scores (None while it runs), as ``infos`` read them."""
    cfg = game.config
    if cfg.partners:
        team = cfg.team_of(p)
        info["team"] = team
        info["team_score"] = game.team_scores(game.state.score[0])[team]
        info["final_team_score"] = game.team_scores(final)[team] if final is not None else 0
    if game.is_match:
        _match_info(game, p, after_step, info)
    if masks is not None:
        info["action_mask"] = masks[p].tolist() if mask_list else masks[p].copy()


def _match_info(game: Game, p: int, after_step: bool, info: dict[str, Any]) -> None:
    """The R8 match figures of seat ``p``, written into ``info``."""
    cfg, st = game.config, game.state
    hand_over = after_step and game.hand_over
    info["total"] = int(game.totals[p])
    info["hands_played"] = game.hands_played
    info["hand_over"] = hand_over
    info["hand_score"] = int(st.match_seats[0, engine.MS_LAST, p]) if hand_over else 0
    info["hand_end_reason"] = int(st.match_info[0, engine.MI_LAST_REASON]) if hand_over else 0
    info["hand_called"] = hand_over and bool(st.match_seats[0, engine.MS_CALLED, p])
    info["hand_ticks"] = int(st.match_info[0, engine.MI_LAST_TICKS]) if hand_over else 0
    info["match_winner"] = game.ended and p in game.match_winners()
    info["match_rank"] = game.match_rank()[p] if game.ended else 0
    if cfg.partners:
        info["team_total"] = game.team_scores(game.totals)[cfg.team_of(p)]


def outcome(game: Game, agents: list[str]) -> dict[str, Any] | None:
    """The ended episode by name: ``end_reason``, ``final_scores`` ``{agent: score}``, ``callers``
    (agents), with partners ``final_team_scores``, in a match ``match_winners``, ``match_rank``
    ``{agent: place}`` and ``hands``; None while the episode runs."""
    if not game.ended:
        return None
    final = game.totals if game.is_match else game.scores
    out: dict[str, Any] = {
        "end_reason": game.end_reason,
        "final_scores": {a: int(final[p]) for p, a in enumerate(agents)},
        "callers": [agents[p] for p in game.callers()],
    }
    if game.config.partners:
        out["final_team_scores"] = game.team_scores(final)
    if game.is_match:
        rank = game.match_rank()
        out["match_winners"] = [agents[p] for p in game.match_winners()]
        out["match_rank"] = {a: rank[p] for p, a in enumerate(agents)}
        out["hands"] = game.hands_played
    return out


def last_hand(game: Game, agents: list[str]) -> dict[str, Any] | None:
    """The hand of a match that ended last, by name (R8): ``hand``, ``hand_scores``,
    ``end_reason``, ``callers``, ``ticks``, ``totals`` (and with partners ``hand_team_scores``,
    ``team_totals``); None before the first hand ends or outside a match."""
    if not game.is_match or game.hands_played == 0:
        return None
    last = game.last_hand()
    out = {
        "hand": last["hand"],
        "hand_scores": {agents[p]: s for p, s in enumerate(last["scores"])},
        "end_reason": last["end_reason"],
        "callers": [agents[p] for p in last["callers"]],
        "ticks": last["ticks"],
        "totals": {agents[p]: t for p, t in enumerate(last["totals"])},
    }
    if game.config.partners:
        out["hand_team_scores"] = game.team_scores(last["scores"])
        out["team_totals"] = game.team_scores(last["totals"])
    return out
