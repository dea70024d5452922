"""The nertz command: play a hand against bots, watch bots play, and front ends over the
harness, the tournaments, the benchmark and the trainers.

    nertz play --players 4 --opponents heuristic       # you are player_0
    nertz watch --agents heuristic greedy greedy greedy --html hand.html
    nertz eval --agents heuristic greedy greedy greedy --hands 2000
    nertz compare base.json variant.json                 # two evaluations, paired deal by deal
    nertz tournament --format ladder --agents heuristic greedy greedy random --seed 0
    nertz ladder --runs runs/x --out ladder.json --plot ladder.png
    nertz bench --quick
    nertz benchmark eval --task nertz-4p --agent heuristic
    nertz train selfplay --total-steps 200000

Every argument is checked before any work starts; a mistake is one line on stderr and exit code 2
(``nertz_env.cli_checks``). What a plain ``pip install nertz-env`` lacks (Pillow for GIFs, torch
for training) is named with the extra that brings it.
"""

from __future__ import annotations

import sys
from argparse import RawDescriptionHelpFormatter
from collections.abc import Sequence

from nertz_env.cli_checks import (
    USER_ERRORS,
    Parser,
    at_least,
    integer,
    number_from,
    output_file,
    require,
    rule_config,
    seed_number,
)

_FRONT_ENDS = {
    "eval": ("the evaluation harness: duplicate deals, intervals, ratings", "nertz_env.training.evaluate"),
    "compare": ("paired differences between players evaluated on the same deals",
                "nertz_env.training.compare_reports"),
    "tournament": ("a single elimination or table ladder tournament (R8)", "nertz_env.training.tournament"),
    "ladder": ("scripted players, shipped policies and run snapshots on one OpenSkill ladder",
               "nertz_env.training.ladder"),
    "bench": ("the throughput benchmark", "nertz_env.benchmarks.throughput"),
    "benchmark": ("the benchmark's tasks, evaluation protocol and exploitability", "nertz_env.training.benchmark"),
}
_TRAINERS = {"selfplay": "nertz_env.training.train_selfplay", "sb3": "nertz_env.training.train_sb3"}
_TRAINER_HELP = {"selfplay": "self-play masked PPO (python -m nertz_env.training.train_selfplay)",
                 "sb3": "sb3-contrib MaskablePPO, one seat or self-play (python -m nertz_env.training.train_sb3)"}


def _parser() -> Parser:
    ap = Parser(prog="nertz", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True, parser_class=Parser)
    p = sub.add_parser("play", help="play a hand (or a match) in the terminal against bots")
    p.add_argument("--players", type=at_least(2), default=4, help="players at the table, you included (2 to 8)")
    p.add_argument("--opponents", nargs="+", default=["heuristic"], help="one bot name for all, or one per seat")
    p.add_argument("--seed", type=seed_number, default=0, help="seed of the game (a match deals every hand from it)")
    p.add_argument("--match", action="store_true", help="play hands until someone reaches --target-score (R8)")
    p.add_argument("--target-score", type=integer, default=None, help="match target (R8; default 100)")
    p.add_argument("--rules", nargs="*", default=[], metavar="KEY=VALUE", help="rule options, e.g. stock_draw=1")
    w = sub.add_parser("watch", help="watch bots play a hand; optionally save it as GIF or HTML")
    w.add_argument("--agents", nargs="+", default=["heuristic", "greedy", "greedy", "greedy"], help="one per seat")
    w.add_argument("--seed", type=seed_number, default=0, help="seed of the deal")
    w.add_argument("--delay", type=number_from(0, most=3600), default=None, help="seconds between ticks (0.2)")
    w.add_argument("--quiet", action="store_true", help="do not print the table each tick")
    w.add_argument("--gif", type=output_file(".gif"), default=None, help="write the hand as an animated GIF (Pillow)")
    w.add_argument("--html", type=output_file(".html", ".htm"), default=None, help="write the hand as a web page")
    w.add_argument("--every", type=at_least(1), default=None, help="keep every n-th tick in the GIF or HTML (1)")
    w.add_argument("--rules", nargs="*", default=[], metavar="KEY=VALUE", help="rule options")
    for name, (help_text, module) in _FRONT_ENDS.items():
        sub.add_parser(name, help=f"{help_text} ('nertz {name} --help'; also python -m {module})", add_help=False)
    sub.add_parser("train", help="train: 'nertz train selfplay ...' or 'nertz train sb3 ...' (extra: training)")
    return ap


def _play_or_watch(ap: Parser, argv: list[str]) -> int:
    from nertz_env.training import play

    args = ap.parse_args(argv)
    sub = Parser(prog=f"nertz {args.command}")
    if args.command == "play":
        specs = args.opponents if len(args.opponents) > 1 else args.opponents * (args.players - 1)
        if len(specs) != args.players - 1:
            sub.error(f"{args.players} players need 1 or {args.players - 1} --opponents, got {len(args.opponents)}")
        config = rule_config(sub, args.rules, forbid={"num_players": "use --players"}, num_players=args.players)
        if args.match or config.episode == "match":  # the engine plays the match (R8), ended by its match_end
            from nertz_env.training.evaluate import match_length

            target = match_length(sub, config, args.target_score, None)[0]
            config = config if config.episode == "match" else config.replace(episode="match", target_score=target)
        elif args.target_score is not None:
            sub.error("--target-score sets the target of a match: add --match")
        args.opponent_specs = specs
    else:
        specs = args.agents
        seats = {"num_players": "one seat per --agents name"}
        config = rule_config(sub, args.rules, forbid=seats, derived="--agents (one seat per name)",
                             num_players=len(specs))  # fmt: skip
        if args.gif:
            require(sub, "PIL", what="--gif")
        if args.every is not None and not (args.gif or args.html):  # else they would be silently unused
            sub.error("argument --every: keeps every n-th tick of the --gif or --html file: give one of them")
        if args.delay is not None and args.quiet:
            sub.error("argument --delay: paces the table printed each tick, which --quiet leaves out")
        args.every, args.delay = args.every or 1, 0.2 if args.delay is None else args.delay
    try:
        agents = play.bots(specs, config, args.seed)
    except USER_ERRORS as e:
        sub.error(str(e))
    return play.play(args, config, agents) if args.command == "play" else play.watch(args, config, agents)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    ap = _parser()
    command, rest = (argv[0], argv[1:]) if argv else (None, [])
    if command in _FRONT_ENDS:  # the module parses the rest, under the name 'nertz <command>'
        from importlib import import_module

        result = import_module(_FRONT_ENDS[command][1]).main(rest, prog=f"nertz {command}")
        return result if isinstance(result, int) else 0
    if command == "train":
        return _train(rest)
    return _play_or_watch(ap, argv)


def _train(rest: list[str]) -> int:
    """``nertz train TRAINER FLAGS``: the trainer's name comes first (a bare ``nertz train`` would
    otherwise start a default run of millions of steps)."""
    trainer = rest.pop(0) if rest else None
    trainers = "\n".join(f"  {name:<9} {text}" for name, text in _TRAINER_HELP.items())
    tp = Parser(prog="nertz train", usage="nertz train {selfplay,sb3} [FLAGS]", description=f"trainers:\n{trainers}",
                epilog="'nertz train TRAINER --help' lists its flags", formatter_class=RawDescriptionHelpFormatter)
    if trainer in ("-h", "--help"):
        tp.print_help()
        return 0
    if trainer not in _TRAINERS:
        got = f", got {trainer!r}" if trainer is not None else ""
        tp.error(f"name the trainer first: selfplay or sb3 (e.g. nertz train selfplay --total-steps 200000){got}")
    extras = ("stable_baselines3", "sb3_contrib") if trainer == "sb3" else ()
    require(Parser(prog=f"nertz train {trainer}"), "torch", *extras, what="training")
    from importlib import import_module

    from nertz_env.training.args import named

    with named(f"nertz train {trainer}"):
        result = import_module(_TRAINERS[trainer]).main(rest, as_command=True)
    return result if isinstance(result, int) else 0


if __name__ == "__main__":
    raise SystemExit(main())
