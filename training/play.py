"""``nertz play`` and ``nertz watch``: hands in the terminal, told move by move.

Each tick prints the table, then one line per bot saying what it did in R10 names, with the card
it moved and the foundation races it won or lost (R6); the hand ends with the ranking and its
winner (R7), a match with the totals and the match winner (R8).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence

import numpy as np

from nertz_env import nertz_v0
from nertz_env.config import NertzConfig
from nertz_env.render import move_text, render_text


def bots(specs: Sequence[str], config: NertzConfig, seed: int) -> list:
    """Agents from ``name:key=value`` specs, seeded ``seed``, ``seed + 1``, ..."""
    from nertz_env import agents

    return [agents.make_spec(s, seed=seed + k, config=config) for k, s in enumerate(specs)]


def labels(specs: Sequence[str]) -> list[str]:
    """Seat names from agent specs; a repeated spec gets ``#2``, ``#3``, ... (as the harness does)."""
    seen: dict[str, int] = {}
    out = []
    for spec in specs:
        seen[spec] = seen.get(spec, 0) + 1
        out.append(spec if seen[spec] == 1 else f"{spec}#{seen[spec]}")
    return out


def choose(env, obs: dict, out: Callable[[str], None] = print, read: Callable[[str], str] = input) -> int | None:
    """Ask the person for a legal move by number or R10 name; None means quit."""
    legal = np.flatnonzero(obs["action_mask"])
    names = env.unwrapped.action_names
    while True:
        out("your moves: " + "  ".join(f"[{a}] {names[a]}" for a in legal))
        try:
            text = read("you (number or name, Enter = wait, q = quit) > ").strip()
        except EOFError:
            return None
        if text in ("q", "quit", "exit"):
            return None
        if text == "":
            return 0
        if text.isascii() and text.isdigit() and int(text) in legal:  # ASCII digits: not '٣'
            return int(text)
        if text in names and names.index(text) in legal:
            return names.index(text)
        out(f"{text!r} is not a legal move now; choose one of the moves listed")


def tick_lines(before: dict, actions: Sequence[str], infos: dict, names: Sequence[str], seats: Sequence[int]):
    """One line per seat in ``seats``: what that player did this tick (``render.move_text``)."""
    width = max(len(names[s]) for s in seats)
    return [
        f"  {names[s]:<{width}}  "
        + move_text(before, s, actions[s], infos[f"player_{s}"]["won_race"], infos[f"player_{s}"]["collision"])
        for s in seats
    ]


def ranking(scores: Sequence[int], names: Sequence[str], what: str = "score", winners=None) -> list[str]:
    """The players by ``scores``, best first; the ``winners`` (default: everyone on the top score,
    R7; none while a match goes on) are marked and named."""
    order = sorted(range(len(scores)), key=lambda p: (-scores[p], p))
    winners = [p for p in order if scores[p] == scores[order[0]]] if winners is None else list(winners)
    width = max(len(n) for n in names)
    lines = []
    for place, p in enumerate(order, start=1):
        mark = "  winner" if p in winners else ""
        lines.append(f"  {place}. {names[p]:<{width}}  {what} {scores[p]:+d}{mark}")
    if winners:
        lines.append(("winner: " if len(winners) == 1 else "tied for first: ") + ", ".join(names[p] for p in winners))
    return lines


def play(args: argparse.Namespace, config: NertzConfig, opponents: list) -> int:
    """A person (``player_0``) against ``opponents``; Ctrl-C or ``q`` leaves cleanly. With
    ``config.episode == "match"`` the episode is the whole match (R8), and the engine decides when
    it ends and who wins it, by ``config.match_end``; each hand's result is printed as it ends."""
    env = nertz_v0.parallel_env(config=config)
    names = ["you"] + [f"bot{k} ({spec})" for k, spec in enumerate(args.opponent_specs, start=1)]
    table_names = ["you"] + [f"bot{k}" for k in range(1, config.num_players)]
    color = sys.stdout.isatty()
    obs, _ = env.reset(seed=args.seed)
    try:
        while env.agents:
            print("\n" + render_text(env.snapshot(), color=color, names=table_names))
            mine = choose(env, obs["player_0"])
            if mine is None:
                print("bye")
                return 0
            actions = {"player_0": mine}
            for k, bot in enumerate(opponents, start=1):
                actions[f"player_{k}"] = bot.act(obs[f"player_{k}"])
            before = env.snapshot()
            obs, _, _, _, infos = env.step(actions)
            moved = [env.unwrapped.action_names[actions[f"player_{s}"]] for s in range(config.num_players)]
            print(f"tick {before['tick']}:")
            print("\n".join(tick_lines(before, moved, infos, names, range(config.num_players))))
            if infos["player_0"].get("hand_over") and env.agents:
                _print_hand(env.unwrapped.last_hand(), env.possible_agents, names)
    except KeyboardInterrupt:
        print("\ninterrupted; bye")
        return 130
    result = env.unwrapped.outcome()  # the ended episode by name (nertz_env.infos.outcome)
    if config.episode == "match":
        _print_hand(env.unwrapped.last_hand(), env.possible_agents, names)
        winners = [env.possible_agents.index(a) for a in result["match_winners"]]
        totals = [result["final_scores"][a] for a in env.possible_agents]
        print(f"\nmatch over after {result['hands']} hand(s), to {config.target_score} (R8):")
        print("\n".join(ranking(totals, names, what="total", winners=winners)))
        return 0
    print(f"\nhand over after {env.snapshot()['tick']} ticks: {_reason(result, names)}")
    print("\n".join(ranking([result["final_scores"][a] for a in env.possible_agents], names)))
    return 0


def _print_hand(hand: dict, agents: Sequence[str], names: Sequence[str]) -> None:
    """A hand of a match as it ends (``nertz_env.infos.last_hand``): why, the scores, the totals."""
    print(f"\nhand {hand['hand']} over after {hand['ticks']} ticks: {_reason(hand, names)}")
    print("\n".join(ranking([hand["hand_scores"][a] for a in agents], names, winners=[])))
    print("  totals: " + ", ".join(f"{names[p]} {hand['totals'][a]:+d}" for p, a in enumerate(agents)))


def _reason(result: dict, names: Sequence[str]) -> str:
    """Why the hand ended, from ``outcome()``: who called, or the stall rule, or the tick limit."""
    if result["end_reason"] == "call":
        callers = [names[int(a.rsplit("_", 1)[1])] for a in result["callers"]]
        return f"{' and '.join(callers)} called Nertz! (R5)"
    return {"stall": "nobody could move: the stall rule ended it (R5)", "max_cycles": "the tick limit"}.get(
        result["end_reason"], result["end_reason"]
    )


def watch(args: argparse.Namespace, config: NertzConfig, players: list) -> int:
    """Bots play a hand: the table and every move each tick, the ranking, then the replays."""
    env = nertz_v0.parallel_env(config=config, record=True)
    names = labels(args.agents)
    obs, _ = env.reset(seed=args.seed)
    color = sys.stdout.isatty()
    try:
        while env.agents:
            before = env.snapshot()
            actions = {a: bot.act(obs[a]) for a, bot in zip(env.agents, players)}
            obs, _, _, _, infos = env.step(actions)
            if not args.quiet:
                moved = [env.unwrapped.action_names[actions[a]] for a in env.possible_agents]
                print(f"tick {before['tick']}:")
                print("\n".join(tick_lines(before, moved, infos, names, range(config.num_players))))
                print(render_text(env.snapshot(), color=color, names=names) + "\n")
                time.sleep(args.delay)
    except KeyboardInterrupt:
        print("\ninterrupted; bye")
        return 130
    result = env.unwrapped.outcome()  # the ended hand by name (nertz_env.infos.outcome)
    print(f"hand over after {env.snapshot()['tick']} ticks: {_reason(result, names)}")
    print("\n".join(ranking([result["final_scores"][a] for a in env.possible_agents], names)))
    from nertz_env.replay import save_replay

    for path in (args.gif, args.html):
        if path:
            print(f"wrote {save_replay(env.unwrapped.recording, path, every=args.every, names=names)}")
    return 0
