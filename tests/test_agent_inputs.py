"""The check of what agents are handed (``check_agent_inputs.AgentInputCheck``): an observation no
table can show is refused by name, whatever its values inside the observation space (R9), and every
observation the env writes passes, under every rule option. Each refusal below was acted on before
(``foundation_tops`` beyond the piles a table has corrupted the heap of the ``rollout`` search)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import played
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nertz_env import NertzConfig, agents
from nertz_env.cards import card_name
from nertz_env.game import Game
from nertz_env.layout import ObservationLayout


def first_row(config: NertzConfig, wanted, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The first observation and mask (as rows ``[1, D]``, ``[1, N]``) of random legal play for
    which ``wanted(layout, obs_row)`` holds."""
    layout, game = ObservationLayout(config), played(config, 0, seed)
    rng = np.random.default_rng(seed)
    for _ in range(5000):
        for p in range(config.num_players):
            if wanted(layout, game.obs[p]):
                return game.obs[p : p + 1].copy(), game.masks[p : p + 1].copy()
        game.step([rng.choice(np.flatnonzero(game.masks[p])) for p in range(config.num_players)])
        if game.ended:
            game.reset()
    raise AssertionError("no such row in 5000 ticks")


def refusal(config: NertzConfig, obs: np.ndarray, masks: np.ndarray) -> str:
    with pytest.raises(ValueError) as error:
        agents.make("greedy", config=config).act_batch(obs, masks)
    return str(error.value)


STANDARD = NertzConfig()
S = ObservationLayout(STANDARD).slices


def test_the_foundation_tops_of_more_piles_than_a_table_has_are_refused():
    """R4.2: a suit has one pile per deck's ace. Every value inside the space [0, P], but 52 piles of
    a suit: the rollout search wrote them past its 16-pile row, into other games' rows."""
    game = played(STANDARD, 0)
    obs = game.obs[:1].copy()
    obs[:, S["foundation_tops"]] = 4
    message = refusal(STANDARD, obs, game.masks[:1])
    assert "foundation_tops counts 52 foundation piles of suit C; accepted at most 4" in message


def test_foundation_tops_that_disagree_with_the_foundation_parts_are_refused():
    game = played(STANDARD, 300)
    obs = game.obs[:1].copy()
    piles = obs[0, S["foundation_tops"]].reshape(4, 13).sum(axis=1)
    suit = int(np.flatnonzero((piles > 0) & (piles < 4))[0])  # a suit with piles and room for another
    obs[0, S["foundation_tops"].start + 13 * suit] += 1  # an ace pile no deck's ace shows on
    message = refusal(STANDARD, obs, game.masks[:1])
    ace = card_name(13 * suit)
    assert f"foundation_tops counts {piles[suit] + 1} piles of suit {'CDHS'[suit]} reaching {ace} but the players' " \
           f"foundation parts show {piles[suit]} {ace}" in message
    assert "accepted: foundation_tops as the foundation parts give them" in message


def test_the_stock_memory_is_checked_as_the_waste_memory_is():
    """R9: the stock's order is remembered once the viewer has turned through it, card by card."""
    game = played(STANDARD, 0)
    obs, masks = game.obs[:1].copy(), game.masks[:1]
    known = obs.copy()
    known[0, S["own_stock_known"]] = 1  # a stock of 35 "known", none of its cards numbered
    assert "own_stock_order does not number the stock's cards 1..stock_count (35)" in refusal(STANDARD, known, masks)
    unknown = obs.copy()
    unknown[0, S["own_stock_order"].start + 7] = 1
    assert "own_stock_order numbers cards but own_stock_known is 0" in refusal(STANDARD, unknown, masks)
    known_stock = lambda lay, o: lay.view(o, "own_stock_known")[0] and lay.view(o, "self.stock_count")[0] > 1  # noqa: E731
    twice, masks = first_row(STANDARD, known_stock)
    order = twice[0, S["own_stock_order"]]
    order[order == 2] = 1  # two cards next to turn, none second
    assert "own_stock_order does not number" in refusal(STANDARD, twice, masks)


def test_the_viewers_cards_are_conserved():
    """R1: the viewer's 52 cards in one place each, counted once. The fuzzing's observation (all
    52 cards in the waste, numbered 1..52, and a known stock numbering none) is refused at each of
    its faults in turn, each by the part it lies in."""
    game = played(STANDARD, 0)
    obs, masks = game.obs[:1].copy(), game.masks[:1]
    obs[0, S["self.waste_count"]] = 52
    obs[0, S["own_waste_order"]] = np.arange(1, 53)  # AC numbered 1: the waste top
    obs[0, S["own_stock_known"]] = 1
    obs[0, S["own_stock_order"]] = 0
    assert "self.waste_top shows 0 cards but self.waste_count is 52" in refusal(STANDARD, obs, masks)
    obs[0, S["self.waste_top"].start] = 1
    message = refusal(STANDARD, obs, masks)  # 104 cards of one deck
    assert "self's piles hold 104 cards (nertz_count 13 + work piles 4 + stock_count 35 + waste_count 52" in message
    obs[0, S["self.stock_count"]], obs[0, S["self.waste_count"]] = 0, 35  # counted right: 13 + 4 + 35
    obs[0, S["own_waste_order"]] = np.where(np.arange(52) < 35, np.arange(1, 53), 0)  # AC..9H
    layout = ["self.nertz_top"] + [f"self.work{j}" for j in range(4)]
    shown = {name: set(np.flatnonzero(obs[0, S[name]])) for name in layout}
    card = min(c for cards in shown.values() for c in cards if c < 35)  # in the waste memory and the layout
    place = next(name for name, cards in shown.items() if card in cards)
    message = refusal(STANDARD, obs, masks)
    assert f"own_waste_order shows {card_name(card)} of self's deck, which also lies in {place}; accepted" in message
    fresh = game.obs[:1].copy()
    fresh[0, S["self.stock_count"]] += 1
    message = refusal(STANDARD, fresh, masks)
    assert "self's piles hold 53 cards (nertz_count 13 + work piles 4 + stock_count 36 + waste_count 0" in message
    assert "accepted: its deck's 52, each card in one place (R1)" in message
    fresh[0, S["self.stock_count"]] -= 1
    fresh[0, S["opp2.waste_count"]] = 1  # a waste count with no waste top
    assert "opp2.waste_top shows 0 cards but opp2.waste_count is 1" in refusal(STANDARD, fresh, masks)


def test_the_waste_top_is_the_top_of_the_viewers_memory():
    obs, masks = first_row(STANDARD, lambda lay, o: lay.view(o, "self.waste_count")[0] > 1)
    order = obs[0, S["own_waste_order"]].copy()
    obs[0, S["own_waste_order"]] = np.where(order == 1, 2, np.where(order == 2, 1, order))  # top and second swapped
    assert "self.waste_top is not the card own_waste_order numbers 1" in refusal(STANDARD, obs, masks)


def test_with_nertz_builds_the_table_counts_every_deck():
    """R4.8: Nertz and work piles may hold other decks' cards, so a player's own piles need not
    hold 52; but the stock, waste and foundation hold only its own, and the table all decks'."""
    config = NertzConfig(nertz_builds=True, num_players=3)
    s = ObservationLayout(config).slices
    obs, masks = first_row(config, lambda lay, o: lay.view(o, "opp1.waste_count")[0] > 0)
    obs[0, s["opp1.stock_count"]] += 1
    message = refusal(config, obs, masks)
    assert "hold 157 cards; accepted the 3 decks' 156, each card in one place (R1)" in message
    waste = int(obs[0, s["opp1.waste_count"]][0])
    obs[0, s["opp1.stock_count"]] = 52
    assert f"opp1's stock_count 52 + waste_count {waste} + foundation" in refusal(config, obs, masks)
    assert "accepted at most its 52 (R1)" in refusal(config, obs, masks)


def is_run(cards: list[int]) -> bool:
    """R4.3 as written: a work pile holds one card a rank, its ranks consecutive, its colours
    alternating (clubs and spades black, diamonds and hearts red)."""
    ranks = sorted(c % 13 for c in cards)
    red = {c % 13: c // 13 in (1, 2) for c in cards}
    consecutive = ranks == list(range(ranks[0], ranks[0] + len(ranks))) if ranks else True
    return consecutive and all(red[r] != red[r + 1] for r in ranks[:-1])


@st.composite
def piles(draw) -> set[int]:
    """Any few cards, a run (from rank ``low``, colours alternating from ``red``, suits picked), or
    a run with one card more or less (the near misses)."""
    if draw(st.booleans()):
        return draw(st.sets(st.integers(0, 51), max_size=8))
    low, red = draw(st.integers(0, 12)), draw(st.booleans())
    n = draw(st.integers(1, 13 - low))
    cards = {draw(st.sampled_from([1, 2] if (red + r) % 2 else [0, 3])) * 13 + low + r for r in range(n)}
    return cards ^ {draw(st.integers(0, 51))} if draw(st.booleans()) else cards


@settings(max_examples=300, deadline=None)
@given(cards=piles())
def test_a_work_pile_passes_exactly_when_it_is_a_run(cards):
    """The scan reads a work pile as bits: it accepts exactly the R4.3 runs, and counts them."""
    from nertz_env.agent_input_scan import _bits, _run_length

    part = np.zeros(52, np.int8)
    part[list(cards)] = 1
    length = _run_length(_bits(part, 0))
    assert length == (len(cards) if is_run(list(cards)) else -1)


def test_two_tops_and_a_card_in_two_places_are_refused_by_part():
    game = played(STANDARD, 100)
    obs, masks = game.obs[:1].copy(), game.masks[:1]
    two = obs.copy()
    two[0, S["opp1.nertz_top"]] = 0
    two[0, S["opp1.nertz_top"].start + np.array([2, 4])] = 1  # 3C and 5C
    assert "opp1.nertz_top holds more than one card (a pile has one top)" in refusal(STANDARD, two, masks)
    shown = {name: np.flatnonzero(obs[0, S[name]]) for name in ("opp2.waste_top", "opp2.foundation")}
    assert shown["opp2.waste_top"].size and shown["opp2.waste_top"][0] not in shown["opp2.foundation"]
    twice = obs.copy()
    twice[0, S["opp2.foundation"].start + shown["opp2.waste_top"][0]] = 1
    message = refusal(STANDARD, twice, masks)
    assert (f"opp2.waste_top shows {card_name(int(shown['opp2.waste_top'][0]))} of opp2's deck, which also lies in "
            "opp2.foundation; accepted: each card of a deck in one place (R1)") in message  # fmt: skip


@st.composite
def configs(draw) -> NertzConfig:
    players = draw(st.integers(2, 6))
    options: dict = {"num_players": players, "work_piles": draw(st.integers(4, 6))}
    options["nertz_pile_size"] = draw(st.sampled_from([13, 1, 5, 20]))
    options["stock_draw"] = draw(st.sampled_from([1, 3]))
    if players in (4, 6) and draw(st.booleans()):  # teams of two seated opposite (R8)
        options["partners"] = True
    for name in ("nertz_builds", "nertz_to_work", "aces_to_work", "slide_under", "auto_call", "turn_based"):
        options[name] = draw(st.booleans())
    options["block_moves"] = draw(st.sampled_from(["any", "whole", "none"]))
    options["fill_empty_from"] = draw(st.sampled_from(["any", "nertz", "nertz_or_waste"]))
    options["move_ticks"] = draw(st.sampled_from([None, None, {"draw": 2, "foundation": 3}]))
    if draw(st.booleans()):
        options.update(episode="match", target_score=draw(st.integers(10, 60)))
    return NertzConfig(**options)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(config=configs(), seed=st.integers(0, 2**32 - 1))
def test_every_observation_of_real_play_passes(config, seed):
    """The check accepts what the env writes: every viewer's observation and mask on every tick
    of play mixing the greedy player (cards reach the foundations) with random legal moves (stocks
    get turned through), under random rule options (R3 timing, R4 options, R4.8, R8)."""
    greedy = agents.make("greedy", config=config)
    game = Game(config)
    game.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(300):
        chosen = greedy.act_batch(game.obs, game.masks)  # checks every row first (AgentInputCheck)
        random = [rng.choice(np.flatnonzero(m)) for m in game.masks]
        game.step(np.where(rng.random(config.num_players) < 0.5, chosen, random))
        if game.ended:
            game.reset()
