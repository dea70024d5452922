"""R8: partners (teams of two seated opposite) and whole matches as episodes, on exact tables built
from R10 fixed deals; the engine's match rule against the harness's; the Racing Demon preset end to end
(the presets themselves: ``test_presets.py``)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import IDLE, legal_names, make_deck, new_game, play
from hypothesis import given, settings
from hypothesis import strategies as st
from pettingzoo.test import api_test, parallel_api_test

from nertz_env import engine, nertz_v0
from nertz_env.config import NertzConfig
from nertz_env.game import Game
from nertz_env.training.evaluate import evaluate, main, match_winner
from nertz_env.vector import NertzVectorEnv


def ace_deck(ace: str) -> list[str]:
    """A one-card Nertz pile holding ``ace`` (play it to a foundation, then call), kings in work."""
    return make_deck([ace], ["KS", "KH", "KD", "KC"])


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        yield


# --- partners -------------------------------------------------------------------------------


def partners(**options) -> NertzConfig:
    base = {"num_players": 4, "partners": True, "collision": "seat", "stall_ticks": 10_000, "nertz_pile_size": 1}
    return NertzConfig(**{**base, **options})


@pytest.mark.parametrize("reward", ["dense", "relative", "sparse"])
def test_r8_a_partners_foundation_play_pays_both_partners(reward):
    """R8 partners, seats 0 and 2 against 1 and 3: player 0 plays the AS (R4.2): +1 on the
    foundations and one Nertz card fewer (+2, R7), so team 0's score rises by 3 for both."""
    game = new_game(partners(reward=reward), [ace_deck("AS"), IDLE, IDLE, IDLE])
    assert game.team_scores(game.scores) == [-4, -4]
    snap = play(game, "nertz>foundation", "wait", "wait", "wait")
    assert snap["foundations"] == [{"cards": [[0, "AS"]], "complete": False}]
    assert snap["scores"] == [1, -2, -2, -2] and game.team_scores(game.scores) == [-1, -4]
    expected = {"dense": [3, 0, 3, 0], "relative": [3, -3, 3, -3], "sparse": [0, 0, 0, 0]}[reward]
    assert game.rewards.tolist() == expected
    play(game, "call", "wait", "wait", "wait")
    if reward == "sparse":  # the team's R7 score at the end, to both partners
        assert game.rewards.tolist() == [-1, -4, -1, -4]


def test_r8_either_partner_may_call_and_that_ends_the_hand():
    """Player 2 (player 0's partner) empties their own pile and calls (R4.6); player 0, whose pile
    is not empty, may not call for the team; the call ends the hand (R5) for everyone."""
    env = nertz_v0.parallel_env(config=partners())
    env.reset(options={"decks": [IDLE, IDLE, ace_deck("AH"), IDLE]})
    game = env.unwrapped.game
    assert "call" not in legal_names(game, 0) and "call" not in legal_names(game, 2)
    wait = {a: 0 for a in env.agents}
    obs, rewards, *_ = env.step({**wait, "player_2": env.unwrapped.action_index("nertz>foundation")})
    assert "call" in legal_names(game, 2) and "call" not in legal_names(game, 0)
    assert rewards == {"player_0": 3.0, "player_1": 0.0, "player_2": 3.0, "player_3": 0.0}
    obs, rewards, terms, truncs, infos = env.step({**wait, "player_2": env.unwrapped.action_index("call")})
    assert all(terms.values()) and not any(truncs.values()) and env.agents == []
    result = env.unwrapped.outcome()
    assert result["callers"] == ["player_2"] and result["end_reason"] == "call"
    assert result["final_scores"] == {"player_0": -2, "player_1": -2, "player_2": 1, "player_3": -2}
    assert result["final_team_scores"] == [-1, -4]
    assert [infos[a]["called"] for a in env.possible_agents] == [False, False, True, False]
    assert {infos[a]["end_reason"] for a in env.possible_agents} == {nertz_v0.END_REASONS.index("call")}
    assert [infos[a]["final_score"] for a in env.possible_agents] == [-2, -2, 1, -2]
    assert [infos[a]["final_team_score"] for a in env.possible_agents] == [-1, -4, -1, -4]
    assert [infos[a]["team"] for a in env.possible_agents] == [0, 1, 0, 1]
    assert [infos[a]["team_score"] for a in env.possible_agents] == [-1, -4, -1, -4]


def test_r8_partner_section_of_the_observation_and_render():
    env = nertz_v0.parallel_env(num_players=6, partners=True, render_mode="ansi")
    obs, _ = env.reset(seed=3)
    lay = env.unwrapped.observation_layout
    for agent in env.agents:
        assert lay.view(obs[agent]["observation"], "partner").tolist() == [0, 0, 0, 1, 0, 0]
        assert env.observation_space(agent).contains(obs[agent])
    assert lay.size == nertz_v0.parallel_env(num_players=6).unwrapped.observation_layout.size + 6
    text = env.render()
    assert "team 0 (player_0 + player_3)" in text and "player_4: score -26 [team 1]" in text


def test_r8_team_rewards_in_the_vector_env_equal_the_game():
    from test_vector import check_same_play

    for rules in ({"num_players": 4, "partners": True, "reward": "relative", "max_cycles": 150},
                  {"num_players": 6, "partners": True, "reward": "sparse", "nertz_pile_size": 4, "auto_call": True}):
        assert check_same_play(rules, seed=2, ticks=300, num_envs=2) >= 2
    env = NertzVectorEnv(3, num_players=4, partners=True, seed=0, max_cycles=20)
    env.reset()
    for _ in range(20):
        _, _, _, _, _, infos = env.step(env.sample_actions())
    scores, teams = infos["episode"]["scores"], infos["episode"]["team_scores"]
    assert infos["episode"]["done"].all() and (teams == scores[:, :2] + scores[:, 2:]).all()


def test_r8_evaluation_keeps_partners_opposite_and_reports_teams():
    """``--agents A B A2 B2``: A and A2 are a team. Every rotation moves everyone by the same
    number of seats, so partners always sit P/2 apart; the report has a row per team."""
    config = NertzConfig(num_players=4, partners=True)
    rep = evaluate(["heuristic", "greedy", "passive", "random"], hands=3, seed=1, config=config, progress=False)
    assert rep["hands_played"] == 12
    for rec in rep["hands"]:
        seats = rec["seats"]
        assert {frozenset((seats[s], seats[s + 2])) for s in range(2)} == {frozenset((0, 2)), frozenset((1, 3))}
    teams = {r["team"]: r for r in rep["teams"]}
    assert set(teams) == {"heuristic+passive", "greedy+random"}
    assert sum(r["win_share"] for r in teams.values()) == pytest.approx(1.0)
    for row in teams.values():
        assert row["hands"] == 12 and row["score_ci"][0] <= row["score"] <= row["score_ci"][1]
    by_hand = {tuple(r["key"]): r for r in rep["hands"]}
    mean = np.mean([r["scores"][r["seats"].index(0)] + r["scores"][r["seats"].index(2)] for r in by_hand.values()])
    assert teams["heuristic+passive"]["score"] == pytest.approx(mean)
    # A pool seats whole teams: agents k and k + 3 of six.
    pool = evaluate(["heuristic", "greedy", "passive", "random", "greedy", "passive"], hands=4, seed=2,
                    config=NertzConfig(num_players=4, partners=True), players=4, progress=False)
    for rec in pool["hands"]:
        seats = rec["seats"]
        assert all(abs(seats[s] - seats[s + 2]) == 3 for s in range(2))
    with pytest.raises(ValueError, match="even number"):
        evaluate(["greedy"] * 5, hands=1, config=NertzConfig(num_players=4, partners=True), players=4)


def test_r8_evaluation_of_team_matches():
    config = NertzConfig(num_players=4, partners=True, episode="match", target_score=40)
    rep = evaluate(["heuristic", "greedy", "heuristic", "greedy"], hands=2, seed=0, config=config, progress=False)
    assert rep["mode"] == "matches" and len(rep["matches"]) == 8
    for m in rep["matches"]:
        team_totals = [m["totals"][0] + m["totals"][2], m["totals"][1] + m["totals"][3]]
        assert max(team_totals) >= 40 or m["capped"]
        assert len(m["winners"]) == 2 and m["shares"] == {w: 1.0 for w in m["winners"]}
    assert sum(r["match_win_share"] for r in rep["teams"]) == pytest.approx(1.0)


# --- matches --------------------------------------------------------------------------------


def match(**options) -> NertzConfig:
    """Two players, one-card Nertz piles: playing the ace scores 1, waiting scores -2 (R7)."""
    base = {"num_players": 2, "nertz_pile_size": 1, "collision": "seat", "stall_ticks": 10_000, "episode": "match"}
    return NertzConfig(**{**base, **options})


def deal_next(game: Game, decks) -> None:
    """Replace the hand the match just dealt from its stream by a fixed deal (state surgery)."""
    engine.deal(game.state, 0, game.parse_decks(decks), game.config.packed)
    engine.observe_and_mask(game.state, 0, game.config.packed, game.catalogue.table, game._plan, game.obs, game.masks)


def hand(game: Game, who_plays: tuple[int, ...], callers: tuple[int, ...]) -> None:
    """One hand on a fixed deal: the players in ``who_plays`` play their ace (R4.2), then
    ``callers`` call (R4.6; several may call in one tick, R5)."""
    n = game.config.num_players
    aces = ("AS", "AH", "AD", "AC")
    deal_next(game, [ace_deck(aces[p]) if p in who_plays else IDLE for p in range(n)])
    play(game, *["nertz>foundation" if p in who_plays else "wait" for p in range(n)])
    play(game, *["call" if p in callers else "wait" for p in range(n)])


def test_r8_totals_accumulate_and_the_match_goes_on_to_the_target():
    game = Game(match(target_score=3))
    game.reset(seed=5)
    hand(game, (0,), (0,))  # scores 1 and -2
    assert game.hand_over and not game.ended and game.tick == 0  # the next hand is dealt at once
    assert game.last_hand() == {"hand": 1, "scores": [1, -2], "end_reason": "call", "callers": [0], "ticks": 2,
                                "totals": [1, -2]}
    lay = game.layout
    assert lay.match_totals(game.obs[0]).tolist() == [1, -2] and lay.match_totals(game.obs[1]).tolist() == [-2, 1]
    assert lay.view(game.obs[0], "match.hands_played")[0] == 1
    hand(game, (0, 1), (1,))  # 1 and 1: totals 2 and -1
    assert game.totals.tolist() == [2, -1] and not game.ended
    hand(game, (0,), (0,))  # totals 3 and -3: the target is reached
    assert game.ended and game.terminated and not game.truncated and game.hand_over
    assert game.match_winners() == [0] and game.match_rank() == [1, 2]
    assert game.snapshot()["match"] == {"totals": [3, -3], "hands_played": 3, "contenders": [0], "state": "decided"}


def test_r8_a_tie_goes_to_the_higher_last_hand():
    """Totals tie at the target; the higher score in the last hand wins (call_bonus 3: playing
    the ace and calling scores 4, playing it only 1, R7)."""
    game = Game(match(target_score=5, call_bonus=3))
    game.reset(seed=0)
    hand(game, (0, 1), (0,))  # 4 and 1
    assert not game.ended
    hand(game, (0, 1), (1,))  # 1 and 4: totals 5 and 5 at the target, last hand 1 and 4
    assert game.ended and game.totals.tolist() == [5, 5] and game.match_winners() == [1]
    game.reset(seed=0)
    hand(game, (0, 1), (1,))
    hand(game, (0, 1), (0,))
    assert game.ended and game.totals.tolist() == [5, 5] and game.match_winners() == [0]


def test_r8_still_tied_the_tied_play_another_hand():
    """Equal totals at the target and equal last hands: another hand. Everyone plays it, only
    the tied can win: player 2 reaches the same total with a better last hand, but was not tied."""
    game = Game(match(num_players=3, target_score=4, call_bonus=3))
    game.reset(seed=1)
    hand(game, (0, 1, 2), (0, 1))  # 4, 4, 1: tied at the target with equal last hands
    assert not game.ended and game.snapshot()["match"]["state"] == "tie-break"
    assert game.snapshot()["match"]["contenders"] == [0, 1]
    assert game.layout.view(game.obs[2], "match.contender").tolist() == [0, 1, 1]  # egocentric: self, opp1, opp2
    hand(game, (1, 2), (2,))  # -2, 1, 4: totals 2, 5, 5
    assert game.ended and game.totals.tolist() == [2, 5, 5] and game.match_winners() == [1]
    assert game.match_rank() == [3, 1, 2]
    # after a tie-break hand the rule decides among the tied, even below the target
    game = Game(match(target_score=1))
    game.reset(seed=1)
    hand(game, (0, 1), (0,))  # 1 and 1
    assert game.snapshot()["match"]["state"] == "tie-break"
    hand(game, (1,), (1,))  # -2 and 1: totals -1 and 2
    assert game.ended and game.match_winners() == [1]


def test_r8_fixed_hands_ties_and_the_cap():
    game = Game(match(hands=2, target_score=1000))
    game.reset(seed=2)
    hand(game, (0,), (0,))
    assert not game.ended and game.layout.view(game.obs[0], "match.hands_left")[0] == 1
    hand(game, (1,), (1,))  # totals -1 and -1, last -2 and 1
    assert game.ended and game.terminated and game.match_winners() == [1]
    game.reset(seed=2)
    hand(game, (0, 1), (0,))
    hand(game, (0, 1), (0,))  # tied after 2 hands: another hand
    assert not game.ended and game.snapshot()["match"]["state"] == "tie-break"
    hand(game, (0,), (0,))
    assert game.ended and game.match_winners() == [0]
    game = Game(match(target_score=1000, max_hands=2))  # max_hands stops the match: a truncation
    game.reset(seed=2)
    hand(game, (0,), (0,))
    hand(game, (0, 1), (0,))
    assert game.ended and game.truncated and not game.terminated and game.match_winners() == [0]
    assert game.snapshot()["match"]["state"] == "capped"


def test_r8_match_rewards_across_hands():
    """Dense rewards run across the hands: a match's rewards sum to its final total minus the
    score at the first deal; sparse pays the totals at the end; relative is dense minus the
    opponent's."""
    for reward in ("dense", "sparse", "relative"):
        game = Game(match(target_score=3, reward=reward))
        game.reset(seed=4)
        returns = np.zeros(2)
        for who, caller in (((0,), 0), ((0, 1), 1), ((0,), 0)):
            deal_next(game, [ace_deck("AS") if 0 in who else IDLE, ace_deck("AH") if 1 in who else IDLE])
            for names in (["nertz>foundation" if p in who else "wait" for p in range(2)],
                          ["call" if p == caller else "wait" for p in range(2)]):
                game.step([game.catalogue.index(n) for n in names])
                returns += game.rewards
        assert game.ended and game.totals.tolist() == [3, -3]
        want = {"dense": [3 + 2, -3 + 2], "sparse": [3, -3], "relative": [6, -6]}[reward]
        assert returns.tolist() == want


def test_r8_observed_totals_are_exact():
    game = Game(match(num_players=3))
    game.reset(seed=0)
    state = game.get_state()
    state.match_seats[0, engine.MS_TOTAL] = [-345, 12_799 - 100, 127]
    game.set_state(state)
    lay = game.layout
    assert lay.match_totals(game.obs[0]).tolist() == [-345, 12_699, 127]
    assert lay.match_totals(game.obs[1]).tolist() == [12_699, 127, -345]
    assert lay.match_totals(game.state_vector()).tolist() == [-345, 12_699, 127]
    assert lay.view(game.obs[0], "match.total_hundreds").tolist() == [3, 126, 1]
    assert lay.view(game.obs[0], "match.total_rest").tolist() == [45, 99, 27]
    with pytest.raises(ValueError, match="max_hands"):
        NertzConfig(episode="match", nertz_penalty=10, max_hands=127)


def random_match(config: NertzConfig, seed: int, limit: int = 20_000):
    env = nertz_v0.parallel_env(config=config)
    obs, infos = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    trace, hands = [], []
    for _ in range(limit):
        if not env.agents:
            break
        acts = {a: int(rng.choice(np.flatnonzero(obs[a]["action_mask"]))) for a in env.agents}
        obs, rewards, terms, truncs, infos = env.step(acts)
        trace.append((b"".join(o["observation"].tobytes() for o in obs.values()), tuple(rewards.values())))
        if infos["player_0"]["hand_over"]:
            hands.append({a: info["hand_score"] for a, info in infos.items()})
            assert hands[-1] == env.unwrapped.last_hand()["hand_scores"]
    return trace, hands, infos, terms, truncs, env.unwrapped.outcome()


def test_r8_a_match_is_fixed_by_its_seed_and_actions():
    config = NertzConfig(episode="match", target_score=60, max_cycles=300)
    a, b = random_match(config, 9), random_match(config, 9)
    assert a[0] == b[0] and a[1] == b[1] and len(a[1]) >= 2
    trace, hands, infos, terms, truncs, result = a
    totals = [sum(h[f"player_{p}"] for h in hands) for p in range(4)]
    assert list(result["final_scores"].values()) == totals and result["hands"] == len(hands)
    assert [infos[f"player_{p}"]["final_score"] for p in range(4)] == totals
    assert all(info["hands_played"] == len(hands) for info in infos.values())
    assert max(totals) >= 60 and all(terms.values()) and not any(truncs.values())
    assert result["match_winners"] and result["match_rank"][result["match_winners"][0]] == 1
    assert [a for a, info in infos.items() if info["match_winner"]] == result["match_winners"]
    assert all(infos[a]["match_rank"] == place for a, place in result["match_rank"].items())


def test_r8_pettingzoo_api_with_matches_and_partners():
    parallel_api_test(nertz_v0.parallel_env(episode="match", partners=True, max_cycles=60), num_cycles=400)
    api_test(nertz_v0.env(episode="match", target_score=20, max_cycles=40), num_cycles=300)


def test_r8_vector_env_equals_the_game_over_whole_matches():
    """Autoreset at the end of the match, not of a hand: every game of the batch plays the match
    a ``Game`` on the same stream plays, hand results and match results included."""
    for rules in ({"episode": "match", "target_score": 5, "nertz_pile_size": 3, "max_hands": 5, "max_cycles": 60,
                   "reward": "relative"},
                  {"episode": "match", "hands": 2, "num_players": 4, "partners": True, "max_cycles": 40},
                  {"episode": "match", "target_score": 500, "max_hands": 2, "max_cycles": 30, "reward": "sparse"}):
        env = NertzVectorEnv(3, seed=7, **rules)
        obs, masks = env.reset()
        games = []
        for w in engine.seed_streams(np.random.SeedSequence(7).entropy, 3):
            g = Game(env.config)
            g.state.rng[0], g.seeded = w, True
            g.reset()
            games.append(g)
        rng = np.random.default_rng(0)
        matches = hands = 0
        for _ in range(900):
            acts = np.array([[rng.choice(np.flatnonzero(m)) for m in masks[i]] for i in range(3)])
            obs, masks, rewards, terminated, truncated, infos = env.step(acts)
            for i, g in enumerate(games):
                g.step(acts[i])
                assert (rewards[i] == g.rewards.astype(np.float32)).all()
                assert bool(infos["hand"]["done"][i]) == g.hand_over
                if g.hand_over:
                    hands += 1
                    last = g.last_hand()
                    assert infos["hand"]["scores"][i].tolist() == last["scores"]
                    assert infos["hand"]["totals"][i].tolist() == last["totals"]
                    assert infos["hand"]["length"][i] == last["ticks"]
                    assert engine.END_REASONS[infos["hand"]["end_reason"][i]] == last["end_reason"]
                assert bool(infos["episode"]["done"][i]) == g.ended
                assert (terminated[i] == g.terminated).all() and (truncated[i] == g.truncated).all()
                if g.ended:
                    matches += 1
                    assert infos["episode"]["scores"][i].tolist() == g.totals.tolist()
                    assert infos["episode"]["hands"][i] == g.hands_played
                    assert np.flatnonzero(infos["episode"]["winners"][i]).tolist() == g.match_winners()
                    assert infos["episode"]["team_scores"][i].tolist() == g.team_scores(g.totals)
                    assert infos["episode"]["length"][i] == g.match_ticks
                    assert (infos["final_observation"][i] == g.obs).all()
                    g.reset()
                assert (obs[i] == g.obs).all() and (masks[i] == g.masks).all()
        assert matches >= 2 and hands > matches


@settings(max_examples=300, deadline=None)
@given(
    rows=st.lists(st.tuples(st.integers(-30, 130), st.integers(-26, 60), st.booleans()), min_size=2, max_size=8)
)
def test_r8_engine_tie_rule_agrees_with_evaluate_match_winner(rows):
    """``engine.match_winner`` against a plain reading of R8 and ``training.evaluate.match_winner``."""
    totals = np.array([r[0] for r in rows], np.int64)
    last = np.array([r[1] for r in rows], np.int64)
    contenders = [i for i, r in enumerate(rows) if r[2]] or [0]
    top = max(totals[i] for i in contenders)
    tied = [i for i in contenders if totals[i] == top]
    best = max(last[i] for i in tied)
    expected = [i for i in tied if last[i] == best]
    assert match_winner(totals, last, contenders) == expected
    keep = np.zeros(len(rows), np.bool_)
    keep[contenders] = True
    assert engine.match_winner(totals, last, keep) == len(expected) and np.flatnonzero(keep).tolist() == expected


# --- presets --------------------------------------------------------------------------------


def test_racing_demon_end_to_end(capsys):
    """Five hands a match (R8, Racing Demon) in the env, the vector env and the harness."""
    trace, hands, infos, terms, _, result = random_match(
        NertzConfig.from_kwargs(preset="racing_demon", max_cycles=200), 3
    )
    assert all(terms.values()) and result["hands"] == infos["player_0"]["hands_played"] == len(hands) >= 5
    rep = evaluate(["greedy", "heuristic"], hands=2, seed=0, progress=False,
                   config=NertzConfig.from_kwargs(preset="racing_demon", num_players=2))
    assert rep["mode"] == "matches" and rep["match_hands"] == 5
    assert all(m["hands"] >= 5 for m in rep["matches"])
    assert main(["--agents", "greedy", "random", "--hands", "1", "--quiet", "--rules", "preset=snerts"]) == 0
    assert main(["--agents", "greedy", "heuristic", "--hands", "1", "--quiet",
                 "--rules", "preset=racing_demon", "max_cycles=150"]) == 0
    assert "match win" in capsys.readouterr().out
