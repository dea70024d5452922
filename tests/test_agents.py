"""The agents: legal play under every kind of config, determinism, the batch form, and the
heuristic's judgement in exact positions built from R10 fixed deals."""

from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import IDLE, make_deck, needs_torch, new_game, play

from nertz_env import agents
from nertz_env.config import BLOCK_MOVES, FILL_EMPTY_FROM, NertzConfig
from nertz_env.game import Game

NAMES = ("random", "passive", "greedy", "heuristic")


def random_config(rng: np.random.Generator) -> NertzConfig:
    """A config drawn over the rule options that change what is legal (R2 to R7, R4.3's
    ``block_moves`` and ``aces_to_work`` among them)."""
    return NertzConfig(
        num_players=int(rng.integers(2, 9)),
        work_piles=int(rng.integers(4, 7)),
        nertz_pile_size=int(rng.choice([3, 8, 13])),
        stock_draw=int(rng.choice([1, 3])),
        slide_under=bool(rng.integers(2)),
        fill_empty_from=str(rng.choice(FILL_EMPTY_FROM)),
        nertz_to_work=bool(rng.integers(2)),
        auto_call=bool(rng.integers(2)),
        nertz_penalty=int(rng.choice([1, 2])),
        call_bonus=int(rng.choice([0, 10])),
        collision=str(rng.choice(["random", "seat"])),
        max_cycles=300,
        block_moves=str(rng.choice(BLOCK_MOVES)),  # R4.3
        aces_to_work=bool(rng.integers(2)),  # R4.3
    )


def play_hand(game: Game, seats: list[agents.Agent], seed: int) -> int:
    """Play one hand to its end, checking every chosen action against the mask (R4)."""
    game.reset(seed=seed)
    ticks = 0
    while not game.ended:
        actions = np.array([seat.act({"observation": game.obs[p], "action_mask": game.masks[p]})
                            for p, seat in enumerate(seats)])
        for p, a in enumerate(actions):
            assert game.masks[p, a], f"{seats[p]!r} chose illegal {game.catalogue.names[a]!r}"
        game.step(actions)
        assert not game.state.illegal[0].any()
        ticks += 1
    return ticks


@pytest.mark.parametrize("draw", range(12))
def test_every_agent_plays_only_legal_actions(draw):
    rng = np.random.default_rng(draw)
    config = random_config(rng)
    game = Game(config)
    seats = [agents.make(NAMES[(p + draw) % len(NAMES)], seed=p, config=config) for p in range(config.num_players)]
    ticks = play_hand(game, seats, seed=draw)
    assert game.end_reason in ("call", "stall", "max_cycles") and ticks <= config.max_cycles


@pytest.mark.parametrize("preset", ["snerts", "nerds", "nerts"])
def test_every_agent_plays_only_legal_actions_under_the_source_presets(preset):
    """The presets' R4 options (spaces, blocks, aces, builds) reach every agent through the mask and
    the heuristic's look-ahead through the engine's legal_row."""
    config = NertzConfig.from_kwargs(preset=preset, max_cycles=300)
    game = Game(config)
    for hand in range(2):
        seats = [agents.make(NAMES[(p + hand) % len(NAMES)], seed=p, config=config) for p in range(4)]
        ticks = play_hand(game, seats, seed=hand)
        assert game.end_reason in ("call", "stall", "max_cycles") and ticks <= config.max_cycles


@pytest.mark.parametrize("name", NAMES)
def test_batch_form_agrees_with_single_decisions(name):
    """``act_batch`` on n rows equals n calls of ``act`` (for ``random``: from the same seed)."""
    obs, masks = observations(NertzConfig(num_players=3, stock_draw=1))
    config = NertzConfig(num_players=3, stock_draw=1)
    one = agents.make(name, seed=7, config=config)
    many = agents.make(name, seed=7, config=config)
    singles = [one.act({"observation": o, "action_mask": m}) for o, m in zip(obs, masks)]
    assert many.act_batch(obs, masks).tolist() == singles


@pytest.mark.parametrize("name", NAMES)
def test_agents_are_deterministic_given_their_seed(name):
    config = NertzConfig(num_players=3, stock_draw=1)
    obs, masks = observations(config)
    first = agents.make(name, seed=3, config=config).act_batch(obs, masks)
    again = agents.make(name, seed=3, config=config).act_batch(obs, masks)
    assert first.tolist() == again.tolist()
    assert all(masks[i, a] for i, a in enumerate(first))
    if name == "random":
        other = agents.make(name, seed=4, config=config).act_batch(obs, masks)
        assert other.tolist() != first.tolist()


def observations(config: NertzConfig, hands: int = 4) -> tuple[np.ndarray, np.ndarray]:
    """Observations and masks of every seat along a few hands of mixed play."""
    game = Game(config)
    players = [agents.make(NAMES[p % 4], seed=p, config=config) for p in range(config.num_players)]
    obs, masks = [], []
    for h in range(hands):
        game.reset(seed=100 + h)
        while not game.ended and game.tick < 150:
            obs.append(game.obs.copy())
            masks.append(game.masks.copy())
            game.step([pl.act_batch(game.obs[p : p + 1], game.masks[p : p + 1])[0] for p, pl in enumerate(players)])
    return np.concatenate(obs), np.concatenate(masks)


def test_heuristic_self_play_has_no_degenerate_loops():
    """Work-to-work moves are not progress (R5); a player that shuffles blocks back and forth
    would stall every hand. The heuristic makes one only when it strictly gains."""
    config = NertzConfig(num_players=4, max_cycles=2000)
    game = Game(config)
    seats = [agents.make("heuristic", config=config) for _ in range(4)]
    shuffles = total = 0
    for h in range(6):
        game.reset(seed=h)
        while not game.ended:
            actions = seats[0].act_batch(game.obs, game.masks)
            for a in actions:
                kind, src = game.catalogue.table[a, :2]
                shuffles += int(kind == 4 and src >= 2)  # TO_WORK from a work pile
                total += 1
            game.step(actions)
        assert game.end_reason != "max_cycles"
    assert shuffles < 0.05 * total


def test_make_register_and_specs():
    config = NertzConfig(num_players=2)
    assert isinstance(agents.make("greedy", config=config), agents.GreedyAgent)
    assert agents.make("greedy").config == NertzConfig()
    h = agents.make_spec("heuristic:depth=1,call=now", config=config)
    assert h.options["depth"] == 1 and h.options["call"] == "now"
    assert agents.parse_spec("x:a=1,b=2.5,c=true,d=none,e=word") == (
        "x", {"a": 1, "b": 2.5, "c": True, "d": None, "e": "word"})
    with pytest.raises(ValueError, match="unknown agent 'nobody'"):
        agents.make("nobody")
    with pytest.raises(ValueError, match=r"'heuristic:depth=3,call=now' is an agent spec \(name:key=value,...\): "
                                         r"build it with agents.make_spec\('heuristic:depth=3,call=now'\) or "
                                         r"agents.make\('heuristic', depth=3, call='now'\)"):
        agents.make("heuristic:depth=3,call=now")  # was "unknown agent ... (did you mean 'heuristic'?)"
    with pytest.raises(ValueError, match="unknown agent 'nobody:depth=3'"):
        agents.make("nobody:depth=3")
    with pytest.raises(TypeError, match="the agent name must be a str, got int 5; known agents: .*greedy"):
        agents.make(5)  # was a TypeError from inside difflib
    with pytest.raises(ValueError, match="unknown heuristic option"):
        agents.make("heuristic", depth_of_search=3)
    with pytest.raises(ValueError, match="already registered"):
        agents.register("greedy", agents.GreedyAgent)
    with pytest.raises(ValueError, match="observations of size"):
        agents.make("greedy", config=config).act_batch(np.zeros((1, 5), np.int8), np.ones((1, 3), np.int8))
    assert "policy" in agents.names()  # the hook for trained players, resolved on first use
    with pytest.raises(FileNotFoundError, match="no policy file at nowhere.pt"):  # checked before torch is needed
        agents.make("policy", path="nowhere.pt")
    pytest.importorskip("torch", reason="the policy agent needs torch")
    with pytest.raises(ValueError, match="agent 'policy' needs path=..."):
        agents.make_spec("policy:path=")  # was "`.` is not a policy file"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("heuristic:empty=abc", "invalid empty='abc': accepted a finite number"),
        ("heuristic:race=nan", "invalid race=nan: accepted a finite number"),
        ("heuristic:out=inf", "invalid out=inf: accepted a finite number"),
        ("heuristic:draw=true", "invalid draw=True: accepted a finite number"),
        ("heuristic:gamma=1.5", "invalid gamma=1.5: accepted a number from 0 to 1"),
        ("heuristic:stuck=-3", "invalid stuck=-3: accepted a finite number >= 0"),
        ("heuristic:wat=soon", "unknown heuristic option.s. wat; known: wait, depth"),
        ("greedy:x=1", "unknown option.s. x for agent 'greedy'; accepted: none"),
        ("random:x=1,y=2", "unknown option.s. x, y for agent 'random'; accepted: none"),
        ("rollout:sample=8", "unknown option.s. sample for agent 'rollout'; accepted: policy, candidates, samples"),
        ("ppo:temperature=0.5", "unknown option.s. temperature for agent 'ppo'; accepted: greedy, call"),
        ("ppo:path=other.pt", "unknown option.s. path for agent 'ppo'; accepted: greedy, call"),
        ("policy:greed=true", "unknown option.s. greed for agent 'policy'; accepted: path, greedy, call"),
        ("ppo:greedy=maybe", "invalid greedy='maybe': accepted true or false"),
        ("ppo:greedy=1", "invalid greedy=1: accepted true or false"),
    ],
)
def test_agent_options_are_refused_by_name(spec, message):
    """Every agent option that its agent does not take, or that is out of range, is refused by name
    with what is accepted (the heuristic's weights go to compiled code: never NaN or infinite)."""
    with pytest.raises(ValueError, match=message):
        agents.make_spec(spec)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("heuristic:depth=1,depth=2", "agent option depth is given twice in 'heuristic:depth=1,depth=2'"),
        ("heuristic: depth=1 , depth =2", "agent option depth is given twice"),
        ("heuristic:", "'heuristic:' has no options after ':'; give name or name:key=value,..."),
        ("heuristic:depth=1,,call=now", "empty agent option in 'heuristic:depth=1,,call=now'"),
        ("heuristic:depth=1,", "empty agent option in 'heuristic:depth=1,'"),
        ("heuristic:=1", "agent option '=1' in 'heuristic:=1' is not of the form key=value"),
    ],
)
def test_a_spec_with_a_repeated_or_empty_option_is_refused(spec, message):
    """A spec is read whole: an option given twice (which would silently keep the last), a ':'
    with nothing after it and an empty item are mistakes named with the spec."""
    with pytest.raises(ValueError, match=re.escape(message)):
        agents.parse_spec(spec)


@pytest.mark.parametrize("value", [["ahead"], np.array(["ahead"]), ("now",), {"safe": 1}])
def test_a_mode_option_given_as_a_list_or_an_array_is_refused_by_name(value):
    """``make("heuristic", call=["ahead"])`` raised "TypeError: unhashable type: 'list'", and
    ``wait=np.array(["soon"])`` was taken (the array compared equal to "soon") and kept as the array."""
    with pytest.raises(ValueError, match=re.escape(f"invalid call={value!r}: accepted now, safe, ahead")):
        agents.make("heuristic", call=value)
    wait = np.array(["soon"]) if isinstance(value, np.ndarray) else value
    with pytest.raises(ValueError, match=re.escape(f"invalid wait={wait!r}: accepted never, soon")):
        agents.make("heuristic", wait=wait)


@needs_torch
def test_a_policys_call_rule_given_as_a_list_is_refused_by_name():
    for value in (["ahead"], np.array(["now"])):
        with pytest.raises(ValueError, match=re.escape(f"invalid call={value!r} for ppo.pt: accepted policy, ahead")):
            agents.make("ppo", call=value)


@pytest.mark.parametrize("name", ["my agent", " mine", "mine\n", "tab\there", "a:b", "a,b", "", "bell\x07", 5])
def test_register_refuses_a_name_no_spec_can_carry(name):
    """``register("my agent", ...)`` succeeded, though a spec strips its name and a command line
    splits on blanks."""
    with pytest.raises(ValueError, match=re.escape(f"agent names are non-empty strings without ':', ',', blanks or "
                                                   f"unprintable characters (a spec name:key=value,... must carry "
                                                   f"them), got {name!r}")):  # fmt: skip
        agents.register(name, agents.GreedyAgent)
    assert name not in agents.names()


@pytest.mark.parametrize("factory", [5, "greedy", None, agents.GreedyAgent(config=NertzConfig(num_players=2))])
def test_register_refuses_a_factory_it_cannot_call(factory):
    """``register("zzz", 5)`` succeeded; ``make("zzz")`` then failed with "'int' object is not callable"."""
    with pytest.raises(TypeError, match=re.escape("the factory of agent 'zzz' must be callable, factory(config=..., "
                                                  "seed=..., **options) returning an agents.Agent")):  # fmt: skip
        agents.register("zzz", factory)
    assert "zzz" not in agents.names()


def test_register_takes_a_name_a_spec_can_carry(monkeypatch):
    monkeypatch.setattr(agents, "_REGISTRY", dict(agents._REGISTRY))  # registered for this test only
    agents.register("my-greedy_2.0=x", agents.GreedyAgent, overwrite=True)
    assert type(agents.make_spec("my-greedy_2.0=x", config=NertzConfig(num_players=2))) is agents.GreedyAgent


def test_agent_options_in_range_are_taken():
    h = agents.make_spec("heuristic:empty=-2,gamma=0,stuck=0,out=4.5,wait=soon")
    assert [h.options[key] for key in ("empty", "gamma", "stuck", "out")] == [-2, 0, 0, 4.5] and h.wait == "soon"


@needs_torch
def test_policy_options_in_range_are_taken():
    assert agents.make_spec("ppo:greedy=false,call=ahead").greedy is False


# --- judgement in exact positions -------------------------------------------------------------


def rules(**options) -> NertzConfig:
    base = {"num_players": 2, "nertz_pile_size": 3, "collision": "seat", "stall_ticks": 10_000, "stock_draw": 1}
    return NertzConfig(**{**base, **options})


def choice(game: Game, name: str, player: int = 0) -> str:
    agent = agents.make(name, config=game.config)
    return game.catalogue.names[agent.act({"observation": game.obs[player], "action_mask": game.masks[player]})]


def test_the_nertz_top_goes_first():
    """The seeds' advice: a playable Nertz top before any other card (R4.2)."""
    me = make_deck(nertz=["9C", "5D", "AS"], work=["AH", "KC", "KD", "QS"])
    game = new_game(rules(), [me, IDLE])
    for name in ("greedy", "heuristic"):
        assert choice(game, name) == "nertz>foundation"
    assert choice(game, "passive") == "nertz>foundation"


def test_heuristic_builds_from_the_waste_only_toward_the_nertz_card():
    """8C on 9H is worth a move only because the Nertz 7D can follow it (R4.3)."""
    me = make_deck(nertz=["2H", "3C", "7D"], work=["9H", "KC", "KS", "QS"], stock=["8C", "JD"])
    game = new_game(rules(), [me, IDLE])
    assert choice(game, "heuristic") == "draw"
    play(game, "draw", "wait")
    assert choice(game, "heuristic") == "waste>work0"
    play(game, "waste>work0", "wait")
    assert choice(game, "heuristic") == "nertz>work0"

    plain = make_deck(nertz=["2H", "3C", "4D"], work=["9H", "KC", "KS", "QS"], stock=["8C", "JD"])
    game = new_game(rules(), [plain, IDLE])
    play(game, "draw", "wait")
    assert choice(game, "heuristic") == "draw"  # 8C would lead nowhere
    assert choice(game, "greedy") == "waste>work0"


def test_heuristic_calls_only_when_ahead():
    """R4.6 is a choice: calling behind loses the hand, playing on cannot lower an empty-pile
    score (R7). Both players are out after one tick; the opponent's ace put it ahead."""
    me = make_deck(nertz=["5C"], work=["6H", "KC", "KS", "QS"])
    rich = make_deck(nertz=["AC"], work=["KH", "KD", "QH", "QD"])
    stuck = make_deck(nertz=["2C"], work=["KH", "KD", "QH", "QD"])
    for opponent, ahead in ((rich, False), (stuck, True)):
        game = new_game(rules(nertz_pile_size=1), [me, opponent])
        play(game, "nertz>work0", "nertz>foundation" if ahead is False else "wait")
        assert "call" in {game.catalogue.names[a] for a in game.legal_actions(0)}
        assert (choice(game, "heuristic") == "call") is ahead
        assert choice(game, "greedy") == "call"
