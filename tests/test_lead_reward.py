"""Option ``reward="lead"``: each tick the change of a player's R7 score minus the best opponent's
(with R8 partners, of the team's; in R8 matches, of the running totals). Exact tables from R10
fixed deals, then what must always hold: a hand's (or match's) rewards sum to the final margin over
the best opponent."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import IDLE, make_deck, new_game, play
from hypothesis import given, settings
from hypothesis import strategies as st

from nertz_env import engine, nertz_v0
from nertz_env.config import REWARD_MODES, NertzConfig


def ace_deck(ace: str) -> list[str]:
    """A one-card Nertz pile holding ``ace``, kings in work: playing the ace scores +3 (R7)."""
    return make_deck([ace], ["KS", "KH", "KD", "KC"])


def one_card(**options) -> NertzConfig:
    base = {"nertz_pile_size": 1, "collision": "seat", "stall_ticks": 10_000}
    return NertzConfig(**{**base, **options})


def test_the_codes_of_the_reward_modes_are_the_engines():
    codes = (engine.constants.REWARD_DENSE, engine.constants.REWARD_SPARSE, engine.constants.REWARD_RELATIVE,
             engine.constants.REWARD_LEAD)  # fmt: skip
    assert [REWARD_MODES.index(m) for m in ("dense", "sparse", "relative", "lead")] == list(codes)
    with pytest.raises(ValueError, match="'dense', 'sparse', 'relative' or 'lead'"):
        NertzConfig(reward="leader")


def test_r7_lead_pays_the_margin_over_the_best_opponent_not_the_mean():
    """Three players, one-card Nertz piles (R7: each starts at -2). Player 0 plays the AS: 1 point,
    3 ahead of both others (+3 to it, -3 to each of them; relative would pay them -1.5). Then
    player 1 plays the AH: level with player 0, so player 0's margin falls by 3 and player 1's rises
    by 3, while player 2's best opponent stays 3 ahead (0)."""
    game = new_game(one_card(num_players=3, reward="lead"), [ace_deck("AS"), ace_deck("AH"), IDLE])
    assert game.scores.tolist() == [-2, -2, -2]
    snap = play(game, "nertz>foundation", "wait", "wait")
    assert snap["scores"] == [1, -2, -2]
    assert game.rewards.tolist() == [3, -3, -3]
    snap = play(game, "wait", "nertz>foundation", "wait")
    assert snap["scores"] == [1, 1, -2]
    assert game.rewards.tolist() == [-3, 3, 0]


def test_r8_lead_with_partners_pays_each_partner_the_teams_margin():
    """Six players, three teams of two seated opposite (R8: seats p and p + 3). Player 0 plays the
    AS: team 0 goes from -4 to -1, 3 ahead of both other teams."""
    decks = [ace_deck("AS")] + [IDLE] * 5
    game = new_game(one_card(num_players=6, partners=True, reward="lead"), decks)
    assert game.team_scores(game.scores) == [-4, -4, -4]
    play(game, "nertz>foundation", *["wait"] * 5)
    assert game.team_scores(game.scores) == [-1, -4, -4]
    assert game.rewards.tolist() == [3, -3, -3, 3, -3, -3]


def final_margins(values: dict) -> dict:
    return {a: v - max(w for b, w in values.items() if b != a) for a, v in values.items()}


def random_episode(rules: dict, seed: int, episode: str) -> tuple[dict, dict]:
    """Random legal play of one lead-rewarded episode (a hand, or an R8 match of two hands) with
    at most 120 ticks a hand: each agent's summed rewards, and the env's ``outcome()``."""
    rules = {**rules, "reward": "lead", "max_cycles": 120}
    if episode == "match":
        rules.update(episode="match", hands=2)
    env = nertz_v0.parallel_env(**rules)
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    returns = dict.fromkeys(env.agents, 0.0)
    while env.agents:
        actions = {a: int(rng.choice(np.flatnonzero(obs[a]["action_mask"]))) for a in env.agents}
        obs, rewards, *_ = env.step(actions)
        for a, r in rewards.items():
            returns[a] += r
    return returns, env.unwrapped.outcome()


@settings(max_examples=12, deadline=None)
@given(
    players=st.integers(2, 5),
    seed=st.integers(0, 2**16),
    episode=st.sampled_from(["hand", "match"]),
)
def test_lead_rewards_sum_to_the_final_margin_over_the_best_opponent(players, seed, episode):
    """At the deal every score is the same (R7), so a hand's lead rewards sum to the final margin; in
    an R8 match of two hands, to the margin of the totals."""
    returns, outcome = random_episode({"num_players": players}, seed, episode)
    assert returns == pytest.approx(final_margins(outcome["final_scores"]))  # a match's: the totals (R8)


@settings(max_examples=6, deadline=None)
@given(players=st.sampled_from([4, 6]), seed=st.integers(0, 2**16), episode=st.sampled_from(["hand", "match"]))
def test_r8_partners_lead_rewards_sum_to_the_teams_final_margin(players, seed, episode):
    """R8 partners (seats p and p + P/2): each partner's lead rewards sum to the team's final margin
    over the best other team, in a hand and over a match's totals."""
    returns, outcome = random_episode({"num_players": players, "partners": True}, seed, episode)
    margins = final_margins(dict(enumerate(outcome["final_team_scores"])))
    assert list(returns.values()) == pytest.approx([margins[p % (players // 2)] for p in range(players)])
