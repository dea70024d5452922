"""Helpers that build exact tables from R10 fixed deals and play moves by their R10 names; and,
with ``NERTZ_COMPILE_LOG`` set, a summary of the run's numba compiles (each kernel should compile
once per cache, however many xdist workers need it: ``engine.cache.compile_once``).

The suite tests the compiled engine: with an empty cache a game compiles before it plays
(``NERTZ_INTERIM=0``), and ``tests/test_interim.py`` turns the plain-Python start on where it
tests it."""

from __future__ import annotations

import importlib.util
import os
from collections import Counter
from collections.abc import Sequence

import numpy as np
import pytest

from nertz_env.config import NertzConfig
from nertz_env.game import Game

os.environ.setdefault("NERTZ_INTERIM", "0")  # read as each game is made

# A plain install (``pip install nertz-env``) has neither: what needs them skips, saying which extra.
needs_torch = pytest.mark.skipif(importlib.util.find_spec("torch") is None,
                                 reason="needs torch: pip install 'nertz-env[training]'")  # fmt: skip
needs_pillow = pytest.mark.skipif(importlib.util.find_spec("PIL") is None,
                                  reason="needs Pillow: pip install 'nertz-env[render]'")  # fmt: skip

# Every card of one deck in a fixed order (suits C D H S, ranks A..K): the filler of ``make_deck``.
FULL_DECK = tuple(r + s for s in "CDHS" for r in "A23456789TJQK")
IDLE = list(reversed(FULL_DECK))  # a deal for a player who only waits


def make_deck(nertz: Sequence[str], work: Sequence[str], stock: Sequence[str] = (), filler=FULL_DECK) -> list[str]:
    """A 52-card R10 fixed deal with a chosen start.

    ``nertz`` is the whole Nertz pile bottom to top (its last card is the face-up one), ``work`` one
    card per work pile, ``stock`` the first cards to be turned, in turning order. The remaining
    cards follow in ``filler`` order at the bottom of the stock.
    """
    head = [*nertz, *work, *stock]
    assert len(set(head)) == len(head), f"a card repeats in {head}"
    unknown = set(head) - set(FULL_DECK)
    assert not unknown, f"write cards as R10 names such as 'TH': {unknown}"
    return head + [c for c in filler if c not in head]


def stock_rest(deck: Sequence[str], config: NertzConfig, turned: int = 0) -> list[str]:
    """The stock of a freshly dealt ``deck`` after ``turned`` cards, as a snapshot lists it
    (bottom to top: the deck's last card at the bottom, the next card to turn last)."""
    start = config.nertz_pile_size + config.work_piles + turned
    return list(reversed(deck[start:]))


def new_game(config: NertzConfig, decks: Sequence[Sequence[str]], seed: int = 0) -> Game:
    game = Game(config)
    game.reset(seed=seed, decks=decks)
    return game


def played(config: NertzConfig, ticks: int, seed: int = 0) -> Game:
    """A game after ``ticks`` of random legal play (a new hand after each end)."""
    game = Game(config)
    game.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(ticks):
        game.step([rng.choice(np.flatnonzero(game.masks[p])) for p in range(config.num_players)])
        if game.ended:
            game.reset()
    return game


def legal_names(game: Game, player: int) -> set[str]:
    return {game.catalogue.names[a] for a in np.flatnonzero(game.masks[player])}


def play(game: Game, *names: str, check: bool = True) -> dict:
    """One tick, one action name per player; by default every action must be legal. Returns the
    new snapshot."""
    assert len(names) == game.config.num_players
    actions = [game.catalogue.index(n) for n in names]
    if check:
        for p, (a, n) in enumerate(zip(actions, names)):
            assert game.masks[p, a], f"player {p}: {n!r} is not legal; legal: {sorted(legal_names(game, p))}"
    game.step(actions)
    return game.snapshot()


def cards_of(snapshot: dict, player: int) -> list[str]:
    """Every card of ``player``'s deck on the table (R1), wherever it lies: with R4.8 builds also in
    other players' Nertz and work piles (the snapshot lists the owners there)."""
    out: list[str] = []
    for holder, me in enumerate(snapshot["players"]):
        nertz_owners = me.get("nertz_owners", [holder] * len(me["nertz"]))
        out += [card for card, owner in zip(me["nertz"], nertz_owners) if owner == player]
        work_owners = me.get("work_owners", [[holder] * len(pile) for pile in me["work"]])
        for pile, owners in zip(me["work"], work_owners):
            out += [card for card, owner in zip(pile, owners) if owner == player]
    me = snapshot["players"][player]
    out += [*me["stock"], *me["waste"]]
    for pile in snapshot["foundations"]:
        out += [card for owner, card in pile["cards"] if owner == player]
    return out


# --- the tables of the rule scenarios (test_rules_moves, test_rules_hand, test_timing, test_seed_rules)


def rules(**options) -> NertzConfig:
    """Two players, three-card Nertz piles, lower seat wins races, no stall unless a test asks."""
    base = {"num_players": 2, "nertz_pile_size": 3, "collision": "seat", "stall_ticks": 10_000}
    return NertzConfig(**{**base, **options})


def one_card_nertz(config, tops=("AS", "AH"), work1=("KC", "KD", "KH", "KS")):
    """Two players whose Nertz piles start at ``tops`` (one card each with ``nertz_pile_size=1``);
    player 0's work piles 9S 9H 9D 9C, player 1's ``work1``."""
    deck0 = make_deck([tops[0]], ["9S", "9H", "9D", "9C"])
    deck1 = make_deck([tops[1]], list(work1))
    return new_game(config, [deck0, deck1])


def mid_hand(num_envs: int = 12, seed: int = 7, ticks: int = 25) -> tuple[np.ndarray, np.ndarray]:
    """Observations and masks ``[num_envs, 4, ...]`` of ``NertzVectorEnv`` tables after ``ticks``
    of random play: many kinds of legal move, for tests that score them two ways and compare."""
    from nertz_env.vector import NertzVectorEnv

    env = NertzVectorEnv(num_envs, seed=seed)
    obs, masks = env.reset()
    for _ in range(ticks):
        obs, masks, *_ = env.step(env.sample_actions())
    return obs, masks


def scorer_nets(k: int, seed: int = 0) -> list:
    """``k`` small move-scoring networks (``agents.policy.build_scorer``, 4 players, no look-ahead)
    in eval mode, their scores drawn far apart so that a wrong network shows (needs torch)."""
    import torch

    from nertz_env.agents.policy import build_scorer

    torch.manual_seed(seed)
    nets = [build_scorer(NertzConfig(), (32, 16), 8, lookahead=False) for _ in range(k)]
    for net in nets:
        torch.nn.init.normal_(net.move_out.weight, std=2.0)
        torch.nn.init.normal_(net.body[0].bias, std=0.5)
    return [net.eval() for net in nets]


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    """The compiles ``NERTZ_COMPILE_LOG`` recorded (the controller's summary only): how many, in how
    many processes, and any kernel compiled more than once for the same signature and cache."""
    path = os.environ.get("NERTZ_COMPILE_LOG")
    if not path or hasattr(config, "workerinput") or not os.path.exists(path):
        return
    with open(path) as log:
        rows = [line.rstrip("\n").split("\t") for line in log if line.count("\t") == 4]
    rows = [row for row in rows if row[3]]  # cached kernels only (numba's own helpers compile per process)
    times = Counter((kernel, signature, folder) for _, kernel, signature, folder, _ in rows)
    again = {key: n for key, n in times.items() if n > 1}
    terminalreporter.write_sep("-", "numba compiles (NERTZ_COMPILE_LOG)")
    terminalreporter.write_line(
        f"{len(rows)} compiles of {len(times)} kernel signatures in {len({r[0] for r in rows})} processes; "
        f"compiled more than once in the same cache: {len(again)}"
    )
    for (kernel, _, folder), n in sorted(again.items()):
        terminalreporter.write_line(f"  {kernel} x{n} ({folder})")
