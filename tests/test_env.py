"""The PettingZoo contract of nertz_v0, its errors, copies and inspection."""

from __future__ import annotations

import copy
import json
import pickle
import re
import warnings

import numpy as np
import pytest
from conftest import FULL_DECK, IDLE, needs_pillow
from pettingzoo.test import api_test, max_cycles_test, parallel_api_test, parallel_seed_test, render_test, seed_test

from nertz_env import NertzConfig, nertz_v0
from nertz_env.cards import parse_card


def random_play(env, seed, ticks=10_000):
    """Play random legal actions; return the list of (obs, rewards, infos) per tick."""
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    out = []
    for _ in range(ticks):
        if not env.agents:
            break
        actions = {a: int(rng.choice(np.flatnonzero(obs[a]["action_mask"]))) for a in env.agents}
        obs, rewards, terms, truncs, infos = env.step(actions)
        out.append((obs, rewards, terms, truncs, infos))
    return out


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        yield


def test_pettingzoo_parallel_api():
    parallel_api_test(nertz_v0.parallel_env(num_players=4), num_cycles=400)
    parallel_api_test(nertz_v0.parallel_env(num_players=2, stock_draw=1), num_cycles=200)


def test_pettingzoo_aec_api():
    api_test(nertz_v0.env(num_players=3), num_cycles=300)


def test_pettingzoo_seed_tests():
    parallel_seed_test(lambda: nertz_v0.parallel_env(num_players=4))
    seed_test(lambda: nertz_v0.env(num_players=3))


def test_pettingzoo_max_cycles():
    max_cycles_test(nertz_v0)


@needs_pillow  # render_test tries every render mode, rgb_array's too
def test_pettingzoo_render():
    render_test(lambda render_mode=None: nertz_v0.env(render_mode=render_mode))


def test_metadata_agents_and_cached_spaces():
    env = nertz_v0.parallel_env(num_players=5)
    assert env.metadata["name"] == "nertz_v0" and env.metadata["is_parallelizable"]
    assert env.possible_agents == [f"player_{i}" for i in range(5)]
    a, b = env.possible_agents[:2]
    assert env.observation_space(a) is env.observation_space(a)
    assert env.action_space(a) is env.action_space(a)
    assert env.observation_space(a) == env.observation_space(b)
    assert env.action_space(a) == env.action_space(b)
    assert env.action_space(a).n == len(env.unwrapped.action_names) == 181
    obs, _ = env.reset(seed=1)
    for agent in env.agents:
        assert env.observation_space(agent).contains(obs[agent])
    assert env.state_space.contains(env.state())


def test_action_names_follow_r10():
    env = nertz_v0.parallel_env(num_players=2, work_piles=5)
    names = env.unwrapped.action_names
    assert names[:5] == ("wait", "draw", "call", "nertz>foundation", "waste>foundation")
    for name in ("work4>foundation", "nertz>work4", "waste>work0", "nertz>under2", "waste>under4", "work0>work4:13"):
        assert names[env.unwrapped.action_index(name)] == name
    assert len(names) == len(set(names))
    with pytest.raises(ValueError, match="unknown action name"):
        env.unwrapped.action_index("nertz>work9")
    assert "nertz>under0" not in nertz_v0.parallel_env(slide_under=False).unwrapped.action_names


def test_mask_never_empty_and_wait_always_legal():
    env = nertz_v0.parallel_env(num_players=3)
    for obs, *_ in random_play(env, seed=3, ticks=400):
        for o in obs.values():
            assert o["action_mask"].dtype == np.int8
            assert o["action_mask"][0] == 1


def test_dense_rewards_sum_to_final_minus_deal_score():
    """Rewards (R7): a hand's dense rewards add up to its final score minus the score at the deal."""
    env = nertz_v0.parallel_env(num_players=4)
    ticks = random_play(env, seed=11)
    last_infos = ticks[-1][4]
    start = -2 * 13
    for agent in env.possible_agents:
        total = sum(t[1][agent] for t in ticks)
        assert total == pytest.approx(last_infos[agent]["final_score"] - start)
        assert last_infos[agent]["final_score"] == env.unwrapped.outcome()["final_scores"][agent]
    assert nertz_v0.END_REASONS[last_infos["player_0"]["end_reason"]] in ("call", "stall", "max_cycles")


def test_sparse_and_relative_rewards():
    sparse = random_play(nertz_v0.parallel_env(num_players=3, reward="sparse"), seed=5)
    assert all(r == 0 for t in sparse[:-1] for r in t[1].values())
    final = {a: info["final_score"] for a, info in sparse[-1][4].items()}
    assert sparse[-1][1] == pytest.approx({a: float(s) for a, s in final.items()})
    relative = random_play(nertz_v0.parallel_env(num_players=3, reward="relative"), seed=5)
    for t in relative:
        assert sum(t[1].values()) == pytest.approx(0.0)


def test_termination_and_truncation():
    """R5: max_cycles truncates every agent at its last tick; a call terminates every agent."""
    env = nertz_v0.parallel_env(num_players=2, max_cycles=5)
    ticks = random_play(env, seed=0)
    *_, terms, truncs, infos = ticks[-1]
    assert infos["player_0"]["end_reason"] == nertz_v0.END_REASONS.index("max_cycles") and len(ticks) == 5
    assert all(truncs.values()) and not any(terms.values())
    assert not any(any(t[2].values()) or any(t[3].values()) for t in ticks[:-1])  # nobody ended before the last
    assert env.agents == []
    with pytest.raises(RuntimeError, match="call reset"):
        env.step({})
    called = nertz_v0.parallel_env(num_players=2, nertz_pile_size=1, auto_call=True)
    called.reset(options={"decks": [FULL_DECK, IDLE]})  # player_0's Nertz pile is the AC alone (R10)
    nertz_up = called.unwrapped.action_index("nertz>foundation")
    *_, terms, truncs, infos = called.step({"player_0": nertz_up, "player_1": 0})  # R4.6 auto_call
    assert infos["player_0"]["end_reason"] == nertz_v0.END_REASONS.index("call")
    assert all(terms.values()) and not any(truncs.values()) and called.agents == []


def test_bad_actions_and_agents_raise_clear_errors():
    env = nertz_v0.parallel_env(num_players=2)
    env.reset(seed=0)
    with pytest.raises(KeyError, match="unknown agent 'player_7'"):
        env.step({"player_0": 0, "player_1": 0, "player_7": 0})
    with pytest.raises(ValueError, match="missing actions for live agent.*player_1"):
        env.step({"player_0": 0})
    with pytest.raises(ValueError, match="out of range; actions are 0..180"):
        env.step({"player_0": 181, "player_1": 0})
    with pytest.raises(TypeError, match="must be an integer"):
        env.step({"player_0": 1.5, "player_1": 0})
    with pytest.raises(TypeError, match="must be an integer"):
        env.step({"player_0": "draw", "player_1": 0})
    with pytest.raises(KeyError, match="unknown agent"):
        env.observation_space("nobody")
    with pytest.raises(ValueError, match="invalid render_mode"):
        nertz_v0.parallel_env(render_mode="rgb")
    with pytest.raises(ValueError, match="invalid num_players=9"):
        nertz_v0.parallel_env(num_players=9)
    with pytest.raises(ValueError, match="unknown option"):
        nertz_v0.parallel_env(num_player=3)


@pytest.mark.parametrize(("bad", "error", "words"), [
    (181, ValueError, "action 181 for player_0 is out of range; actions are 0..180"),
    (-1, ValueError, "action -1 for player_0 is out of range"),
    (1.5, TypeError, "action for player_0 must be an integer 0..180, got 1.5"),
    ("draw", TypeError, "action for player_0 must be an integer"),
    (None, TypeError, "action for player_0 must be an integer"),
])  # fmt: skip
def test_aec_refuses_a_bad_action_at_the_step_that_gives_it(bad, error, words):
    """R3 simultaneous play in AEC form: the action is checked when player_0 gives it, not when
    the last agent closes the tick, and it is not kept: the tick then plays as if it never came."""
    env, twin = nertz_v0.env(num_players=3), nertz_v0.env(num_players=3)
    env.reset(seed=4)
    twin.reset(seed=4)
    with pytest.raises(error, match=words):
        env.step(bad)
    assert env.agent_selection == "player_0"
    for agent in ("player_0", "player_1", "player_2"):
        assert env.agent_selection == twin.agent_selection == agent
        env.step(1)  # DRAW, legal on every fresh deal (R4.1)
        twin.step(1)
    assert env.unwrapped.snapshot() == twin.unwrapped.snapshot()
    assert env.rewards == twin.rewards and env.unwrapped.game.tick == 1


def test_aec_strict_refuses_an_illegal_action_at_its_step_and_a_done_agent_steps_none():
    env = nertz_v0.env(num_players=2, strict=True)
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"illegal action for player_0: 'call' \(2\).*R4.6"):
        env.step(2)  # R4.6: CALL needs an empty Nertz pile
    assert env.agent_selection == "player_0"
    env = nertz_v0.env(num_players=2, max_cycles=1)
    env.reset(seed=0)
    env.step(0)
    env.step(0)  # the tick ends the hand (R5 max_cycles): every agent is truncated
    assert env.truncations["player_0"]
    with pytest.raises(ValueError, match="player_0's hand is over: step\\(None\\) once"):
        env.step(0)
    for _ in range(2):
        env.step(None)
    assert env.agents == []


def test_illegal_action_is_wait_with_flag_and_penalty():
    env = nertz_v0.parallel_env(num_players=2, illegal_action_penalty=1.5)
    env.reset(seed=0)
    call = env.unwrapped.action_index("call")  # R4.6: illegal while the Nertz pile has cards
    before = env.snapshot()
    _, rewards, _, _, infos = env.step({"player_0": call, "player_1": 0})
    assert infos["player_0"]["illegal_action"] and not infos["player_1"]["illegal_action"]
    assert rewards["player_0"] == -1.5 and rewards["player_1"] == 0.0
    after = env.snapshot()
    assert after["players"] == before["players"] and after["callers"] == []


def test_strict_mode_raises_naming_the_action():
    env = nertz_v0.parallel_env(num_players=2, strict=True)
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"illegal action for player_0: 'call' \(2\).*R4.6"):
        env.step({"player_0": 2, "player_1": 0})


def test_fixed_decks_and_snapshot_are_r10():
    """R10: the first nertz_pile_size cards form the Nertz pile (first at the bottom), the next
    start the work piles, the rest is the stock with the first of them on top."""
    deck = [f"{r}{s}" for s in "CDHS" for r in "A23456789TJQK"]
    env = nertz_v0.parallel_env(num_players=2)
    env.reset(options={"decks": [deck, list(reversed(deck))]})
    snap = env.snapshot()
    p0 = snap["players"][0]
    assert p0["nertz"] == deck[:13]
    assert p0["work"] == [[c] for c in deck[13:17]]
    assert p0["stock"] == list(reversed(deck[17:]))
    assert p0["waste"] == []
    assert snap["foundations"] == [] and snap["tick"] == 0 and snap["scores"] == [-26, -26]
    json.dumps(snap)
    with pytest.raises(ValueError, match="exactly 52 cards"):
        env.reset(options={"decks": [deck[:51], deck]})
    with pytest.raises(ValueError, match="repeats AC"):
        env.reset(options={"decks": [["AC"] + deck[1:-1] + ["AC"], deck]})
    with pytest.raises(ValueError, match="unknown card 'ZZ'"):
        env.reset(options={"decks": [["ZZ"] + deck[1:], deck]})
    with pytest.raises(ValueError, match="list of 2 decks"):
        env.reset(options={"decks": [deck]})
    codes = np.array([[parse_card(c) for c in deck]] * 2)
    env.reset(options={"decks": codes})  # a 2-D array deals as the list of its rows (was refused)
    assert env.snapshot()["players"][1]["nertz"] == deck[:13]
    with pytest.raises(ValueError, match=re.escape("decks as an array must be 2-D, one row of 52 cards per player "
                                                   "(R10), got shape (1, 2, 52)")):  # fmt: skip
        env.reset(options={"decks": codes[None]})


def test_observation_hides_what_r9_hides():
    """R9: nothing below the Nertz top and no opponent's stock or waste below the top."""
    deck = [f"{r}{s}" for s in "CDHS" for r in "A23456789TJQK"]
    env = nertz_v0.parallel_env(num_players=2, stock_draw=3)
    obs, _ = env.reset(options={"decks": [deck, deck]})
    lay = env.unwrapped.observation_layout
    o = obs["player_0"]["observation"]
    assert np.flatnonzero(lay.view(o, "self.nertz_top")).tolist() == [12]  # KC is the 13th card
    assert lay.view(o, "self.nertz_count")[0] == 13
    draw = env.unwrapped.action_index("draw")
    obs, *_ = env.step({"player_0": draw, "player_1": draw})
    o0, o1 = obs["player_0"]["observation"], obs["player_1"]["observation"]
    # player_1's waste holds three cards; player_0 sees only the top one.
    assert lay.view(o0, "opp1.waste_top").sum() == 1 and lay.view(o0, "opp1.waste_count")[0] == 3
    assert sorted(lay.view(o1, "own_waste_order")[lay.view(o1, "own_waste_order") > 0]) == [1, 2, 3]
    assert lay.view(o1, "own_stock_known")[0] == 0 and not lay.view(o1, "own_stock_order").any()
    # the egocentric view: player_1's own block is player_0's opp1 block
    for part in ("nertz_top", "work0", "waste_top", "stock_count"):
        assert (lay.view(o1, f"self.{part}") == lay.view(o0, f"opp1.{part}")).all()


def test_state_holds_hidden_cards():
    env = nertz_v0.parallel_env(num_players=3)
    env.reset(seed=4)
    lay = env.unwrapped.observation_layout
    s = env.state()
    assert s.shape == (lay.state_size,)
    order = lay.view(s, "seat1.nertz_order")
    assert sorted(order[order > 0]) == list(range(1, 14))


def test_deepcopy_pickle_and_state_restore_continue_identically():
    env = nertz_v0.parallel_env(num_players=4)
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=3)
    for _ in range(20):
        obs, *_ = env.step({a: int(rng.choice(np.flatnonzero(obs[a]["action_mask"]))) for a in env.agents})
    twins = [copy.deepcopy(env), pickle.loads(pickle.dumps(env))]
    saved = env.unwrapped.get_state()
    script = [{a: int(rng.integers(181)) for a in env.possible_agents} for _ in range(200)]

    def run(e):
        out = []
        for acts in script:
            if not e.agents:
                break
            o, r, *_ = e.step({a: acts[a] for a in e.agents})
            out.append((e.snapshot(), {a: v["observation"].tobytes() for a, v in o.items()}, r))
        return out

    reference = run(env)
    for twin in twins:
        assert run(twin) == reference
    env.unwrapped.set_state(saved)
    assert run(env) == reference


def test_same_seed_same_game_byte_for_byte():
    a = random_play(nertz_v0.parallel_env(num_players=6), seed=9)
    b = random_play(nertz_v0.parallel_env(num_players=6), seed=9)
    assert len(a) == len(b)
    for (oa, ra, *_), (ob, rb, *_) in zip(a, b):
        assert ra == rb
        assert all(oa[k]["observation"].tobytes() == ob[k]["observation"].tobytes() for k in oa)


def test_config_object_and_ansi_render():
    cfg = NertzConfig(num_players=3, stock_draw=1)
    env = nertz_v0.parallel_env(config=cfg, render_mode="ansi")
    env.reset(seed=0)
    text = env.render()
    assert "player_2" in text and "foundations" in text and "work3" in text
    with pytest.raises(ValueError, match="either config"):
        nertz_v0.parallel_env(config=cfg, stock_draw=3)
    with pytest.raises(ValueError, match="either config"):
        nertz_v0.parallel_env(config=cfg, num_players=4)
    assert nertz_v0.parallel_env(config=cfg, num_players=3).possible_agents == ["player_0", "player_1", "player_2"]
    with pytest.raises(TypeError, match=re.escape("invalid config={'num_players': 2}: accepted None or a NertzConfig")):
        nertz_v0.parallel_env(config={"num_players": 2})  # was an AttributeError on config.work_piles
    assert len(nertz_v0.parallel_env().possible_agents) == 4


@pytest.mark.parametrize(("option", "value", "accepted"), [
    ("strict", "no", "True or False"),
    ("record", "no", "True or False"),
    ("strict", 1, "True or False"),
    ("info_action_mask", 1.0, "False, True or 'only'"),
    ("info_action_mask", 0, "False, True or 'only'"),
])  # fmt: skip
def test_env_switches_take_bools_only(option, value, accepted):
    """A truthy 'no' or 1.0 was silently taken as True."""
    with pytest.raises(ValueError, match=re.escape(f"invalid {option}={value!r}: accepted {accepted}")):
        nertz_v0.parallel_env(num_players=2, **{option: value})
    env = nertz_v0.parallel_env(num_players=2, strict=np.bool_(True), record=False, info_action_mask="only")
    assert env.strict is True and env.record is False and env.info_action_mask == "only"


@pytest.mark.parametrize("turn_based", [False, True])
def test_aec_step_without_a_hand_in_play_says_call_reset(turn_based):
    env = nertz_v0.raw_env(num_players=2, turn_based=turn_based, max_cycles=2)
    with pytest.raises(RuntimeError, match=re.escape("step() called before reset(); call reset()")):
        env.step(0)  # was an AttributeError on agent_selection
    env.reset(seed=0)
    while env.agents:
        env.step(None if env.terminations[env.agent_selection] or env.truncations[env.agent_selection] else 0)
    with pytest.raises(RuntimeError, match=re.escape("step() called after the hand ended; call reset()")):
        env.step(None)


@pytest.mark.parametrize("turn_based", [False, True])
def test_an_unhashable_agent_is_an_unknown_agent(turn_based):
    words = "unknown agent \\[1\\]; agents are player_0, player_1"
    aec = nertz_v0.env(num_players=2, turn_based=turn_based)
    aec.reset(seed=0)
    with pytest.raises(KeyError, match=words):
        aec.observe([1])  # was TypeError: unhashable type
    with pytest.raises(KeyError, match=words):
        aec.action_space([1])
    with pytest.raises(KeyError, match="unknown agent 'x'; agents are player_0, player_1"):
        aec.observe("x")


def test_set_state_refuses_a_config_that_is_not_a_nertz_config():
    env = nertz_v0.parallel_env(num_players=2)
    env.reset(seed=0)
    saved = env.get_state()
    with pytest.raises(ValueError, match=re.escape("set_state: state['config'] must be the NertzConfig get_state() "
                                                   "saved, got a dict")):  # fmt: skip
        env.set_state({**saved, "config": saved["config"].to_dict()})  # was: every option "differs"
    env.set_state(saved)
