"""The ``nertz`` command: play a hand against bots, watch bots play, and thin front ends over
the harness, the benchmark and the trainers.

    nertz play --players 4 --opponents heuristic       # you are player_0
    nertz watch --agents heuristic greedy greedy greedy --html hand.html
    nertz eval --agents heuristic greedy greedy greedy --hands 2000
    nertz tournament --format ladder --agents heuristic greedy greedy random --seed 0
    nertz bench --quick
    nertz train selfplay --total-steps 200000
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

import numpy as np

from nertz_env import nertz_v0
from nertz_env.config import NertzConfig, parse_rule_options
from nertz_env.render import render_text


def _bots(names: Sequence[str], config: NertzConfig, seed: int):
    from nertz_env import agents

    return [agents.make_spec(n, seed=seed + k, config=config) for k, n in enumerate(names)]


def _choose(env, agent: str, obs: dict, out=print, read=input) -> int | None:
    """Ask the person for a legal move by number or R10 name; None means quit."""
    legal = np.flatnonzero(obs["action_mask"])
    names = env.unwrapped.action_names
    while True:
        out("your moves: " + "  ".join(f"[{a}] {names[a]}" for a in legal))
        try:
            text = read(f"{agent} (number or name, Enter = wait, q = quit) > ").strip()
        except EOFError:
            return None
        if text in ("q", "quit", "exit"):
            return None
        if text == "":
            return 0
        if text.isdigit() and int(text) in legal:
            return int(text)
        if text in names and names.index(text) in legal:
            return names.index(text)
        out(f"{text!r} is not a legal move now; choose one of the moves listed")


def play(args: argparse.Namespace) -> int:
    config = NertzConfig.from_kwargs(num_players=args.players, **parse_rule_options(args.rules))
    env = nertz_v0.parallel_env(config=config)
    bots = _bots(args.opponents if len(args.opponents) > 1 else args.opponents * (args.players - 1), config, args.seed)
    if len(bots) != args.players - 1:
        raise ValueError(f"{args.players} players need 1 or {args.players - 1} opponents, got {len(bots)}")
    color = sys.stdout.isatty()
    totals = np.zeros(args.players, int)
    hand = 0
    while True:
        obs, _ = env.reset(seed=args.seed + hand)
        while env.agents:
            print(
                "\n"
                + render_text(env.snapshot(), color=color, names=["you"] + [f"bot{k}" for k in range(1, args.players)])
            )
            mine = _choose(env, "you", obs["player_0"])
            if mine is None:
                print("bye")
                return 0
            actions = {"player_0": mine}
            for k, bot in enumerate(bots, start=1):
                actions[f"player_{k}"] = bot.act(obs[f"player_{k}"])
            obs, _, _, _, infos = env.step(actions)
            if infos["player_0"]["collision"]:
                print("another player reached that foundation first (R6): your card stays")
        result = env.outcome()
        final = result["final_scores"]
        totals += np.array([final[a] for a in env.possible_agents])
        hand += 1
        print(f"\nhand over ({result['end_reason']}): " + ", ".join(f"{a} {s:+d}" for a, s in final.items()))
        if not args.match or totals.max() >= args.target_score:
            if args.match:
                print("match totals: " + ", ".join(f"player_{p} {t}" for p, t in enumerate(totals)))
            return 0
        print("running totals: " + ", ".join(f"player_{p} {t}" for p, t in enumerate(totals)))


def watch(args: argparse.Namespace) -> int:
    config = NertzConfig.from_kwargs(num_players=len(args.agents), **parse_rule_options(args.rules))
    env = nertz_v0.parallel_env(config=config, record=True)
    bots = _bots(args.agents, config, args.seed)
    obs, _ = env.reset(seed=args.seed)
    color = sys.stdout.isatty()
    while env.agents:
        obs, _, _, _, infos = env.step({a: bot.act(obs[a]) for a, bot in zip(env.agents, bots)})
        if not args.quiet:
            print(render_text(env.snapshot(), color=color, names=list(args.agents)) + "\n")
            time.sleep(args.delay)
    print(
        "final scores: "
        + ", ".join(f"{n} {s:+d}" for n, s in zip(args.agents, env.outcome()["final_scores"].values()))
    )
    from nertz_env.replay import save_replay

    for path in (args.gif, args.html):
        if path:
            print(f"wrote {save_replay(env.unwrapped.recording, path, every=args.every)}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    ap = argparse.ArgumentParser(prog="nertz", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("play", help="play a hand (or a match) in the terminal against bots")
    p.add_argument("--players", type=int, default=4, help="players at the table, you included (2 to 8)")
    p.add_argument("--opponents", nargs="+", default=["heuristic"], help="one bot name for all, or one per seat")
    p.add_argument("--seed", type=int, default=0, help="seed of the deals (hand i uses seed + i)")
    p.add_argument("--match", action="store_true", help="play hands until someone reaches --target-score (R8)")
    p.add_argument("--target-score", type=int, default=100, help="match target (R8)")
    p.add_argument("--rules", nargs="*", default=[], metavar="KEY=VALUE", help="rule options, e.g. stock_draw=1")
    w = sub.add_parser("watch", help="watch bots play a hand; optionally save it as GIF or HTML")
    w.add_argument("--agents", nargs="+", default=["heuristic", "greedy", "greedy", "greedy"], help="one per seat")
    w.add_argument("--seed", type=int, default=0, help="seed of the deal")
    w.add_argument("--delay", type=float, default=0.2, help="seconds between ticks")
    w.add_argument("--quiet", action="store_true", help="do not print the table each tick")
    w.add_argument("--gif", default=None, help="write the hand as an animated GIF")
    w.add_argument("--html", default=None, help="write the hand as an HTML page with a step slider")
    w.add_argument("--every", type=int, default=1, help="keep every n-th tick in the GIF or HTML")
    w.add_argument("--rules", nargs="*", default=[], metavar="KEY=VALUE", help="rule options")
    for name, help_text in (
        ("eval", "the evaluation harness (python -m training.evaluate)"),
        ("tournament", "a single elimination or table ladder tournament, R8 (python -m training.tournament)"),
        ("bench", "the throughput benchmark (python -m benchmarks.throughput)"),
    ):
        sub.add_parser(name, help=help_text, add_help=False)
    t = sub.add_parser("train", help="train: 'nertz train selfplay ...' or 'nertz train sb3 ...'", add_help=False)
    t.add_argument("trainer", nargs="?", choices=["selfplay", "sb3"], default="selfplay")
    if argv[:1] in (["eval"], ["tournament"], ["bench"], ["train"]):  # thin front ends: the rest goes to the module
        command, rest = argv[0], argv[1:]
        if command == "eval":
            from nertz_env.training.evaluate import main as run
        elif command == "tournament":
            from nertz_env.training.tournament import main as run
        elif command == "bench":
            from nertz_env.benchmarks.throughput import main as run
        else:
            trainer = rest.pop(0) if rest and rest[0] in ("selfplay", "sb3") else "selfplay"
            if trainer == "selfplay":
                from nertz_env.training.train_selfplay import main as run
            else:
                from nertz_env.training.train_sb3 import main as run
        result = run(rest)
        return result if isinstance(result, int) else 0
    args = ap.parse_args(argv)
    try:
        return play(args) if args.command == "play" else watch(args)
    except (ValueError, KeyError) as e:
        ap.error(str(e))
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
