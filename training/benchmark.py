"""The benchmark's evaluation protocol: one agent (or several) on a named task, against a fixed
pool, on the task's held-out deals; its JSON is the unit of a results table.

    python -m nertz_env.training.benchmark tasks
    python -m nertz_env.training.benchmark eval --task nertz-4p --agent heuristic
    python -m nertz_env.training.benchmark eval --task nertz-4p --agent policy:path=runs/x/policy.pt \\
        --agent ppo --out result.json
    nertz benchmark eval --task nertz-2p --agent greedy
    nertz benchmark exploit --task nertz-4p --agent policy:path=runs/x/policy.pt   # training.exploit

The protocol (``protocol``), for a task ``T`` (``nertz_env.tasks``) and each submitted agent ``A``:

- against each opponent ``X`` of ``T.pool`` (``greedy``, ``heuristic``, ``heuristic:depth=3``),
  ``A`` plays ``T.eval_deals`` duplicate deals drawn from ``T.eval_seed`` (held out: no trainer
  uses it) against ``num_players - 1`` copies of ``X``, every deal once per seat rotation
  (``training.evaluate``), so ``A`` plays every deck from every seat. With partners (R8) ``A``
  and a copy of ``A`` form one team, seated opposite, against a team of two ``X``;
- it reports ``A``'s mean hand score (R7; with partners the team's summed score), its share of
  hands won (the highest score wins, ties split; ``1 / num_players`` is an even share, ``1/2``
  for teams) and its *margin*: per hand, its score minus the opponents' mean (with partners, the
  team score minus the other team's). Each has a 95% interval computed over deals: the rotations
  of one deal are one unit (``stats.clustered_interval``), never independent hands;
- with several agents, the cross-play matrix: every ordered pair ``(A, B)``, ``A`` against
  copies of ``B``, by the same rules.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any

from nertz_env import tasks
from nertz_env.agents import make_spec
from nertz_env.cli_checks import MOST_DEALS, USER_ERRORS, Parser, at_least, output_file, require
from nertz_env.training.evaluate import evaluate, versions
from nertz_env.training.report import over_deals

SCHEMA = "nertz-benchmark-eval/1"
INTERVALS = "95% Student-t over deals (cluster-robust: a deal's seat rotations are one unit)"


def lineup(task: tasks.Task, agent: str, opponent: str) -> list[str]:
    """The seats of one evaluation: ``agent`` against copies of ``opponent`` (partners: agents ``k``
    and ``k + P/2`` form a team, so ``[A, X, A, X]`` seats A's team opposite each other)."""
    p = task.num_players
    if task.partners:
        return [agent, opponent] * (p // 2)
    return [agent] + [opponent] * (p - 1)


def versus(task: tasks.Task, agent: str, opponent: str, deals: int, progress: bool | None = False) -> dict[str, Any]:
    """``agent`` against copies of ``opponent`` on the task's held-out deals: one row of the protocol."""
    report = evaluate(
        lineup(task, agent, opponent), hands=deals, seed=task.eval_seed, config=task.config,
        players=task.num_players, progress=progress,
    )
    mine = report["teams"][0] if task.partners else report["summary"][0]
    return {
        "agent": agent, "opponent": opponent, "deals": deals, "hands": report["hands_played"],
        "score": mine["score"], "score_ci": mine["score_ci"], "win_share": mine["win_share"], "win_ci": mine["win_ci"],
        **dict(zip(("margin", "margin_ci"), over_deals(margins(report["hands"], task.partners)))),
        "even_share": 1.0 / (2 if task.partners else task.num_players), "elapsed_s": report["elapsed_s"],
    }


def margins(hands: list[dict[str, Any]], partners: bool) -> list[tuple[int, float]]:
    """``(deal, margin)`` per hand for the agent of index 0: its score minus the opponents' mean;
    with partners its team's score minus the other team's."""
    out = []
    for h in hands:
        scores, seats, p = h["scores"], h["seats"], len(h["seats"])
        mine = [s for s in range(p) if seats[s] % (p // 2 if partners else p) == 0]
        if partners:
            margin = sum(scores[s] for s in mine) - sum(scores[s] for s in range(p) if s not in mine)
        else:
            margin = scores[mine[0]] - sum(scores[s] for s in range(p) if s != mine[0]) / (p - 1)
        out.append((h["key"][0], float(margin)))
    return out


def protocol(
    task: str | tasks.Task, agents: Sequence[str], deals: int | None = None, pool: Sequence[str] | None = None,
    cross_play: bool = True, progress: bool | None = False,
) -> dict[str, Any]:
    """The protocol's JSON record (``SCHEMA``) for ``agents`` (agent specs) on ``task``: a row per
    agent and pool opponent, and the cross-play rows among the agents. ``deals`` (default the
    task's ``eval_deals``) and ``pool`` (default the task's) are for cheaper checkpoints only: a
    result for the table uses the defaults."""
    task = tasks.get(task) if isinstance(task, str) else task
    agents = list(agents)
    if not agents or not all(isinstance(a, str) and a for a in agents):
        raise ValueError(f"the protocol needs one or more agent specs (name or name:key=value,...), got {agents!r}")
    deals = task.eval_deals if deals is None else deals
    if not isinstance(deals, int) or isinstance(deals, bool) or deals < 2:
        raise ValueError(f"invalid deals={deals!r}: accepted an integer >= 2 (intervals are over deals)")
    pool = list(task.pool if pool is None else pool)
    for spec in dict.fromkeys([*agents, *pool]):  # every spec built once before any row plays
        try:
            make_spec(spec, config=task.config)
        except (ValueError, TypeError, OSError, ImportError) as e:
            raise type(e)(f"task {task.name}: agent spec {spec!r}: {e}") from None
    t0 = time.perf_counter()
    rows = [versus(task, a, x, deals, progress) for a in agents for x in pool]
    cross = [versus(task, a, b, deals, progress) for a in agents for b in agents if a != b] if cross_play else []
    return {
        "schema": SCHEMA, "task": task.to_dict(), "agents": agents, "pool": pool, "deals": deals,
        "seed": task.eval_seed, "intervals": INTERVALS, "results": rows, "cross_play": cross,
        "elapsed_s": time.perf_counter() - t0, "versions": versions(),
    }


def format_protocol(record: dict[str, Any]) -> str:
    """The record as text: one line per agent and opponent, the pool first, then cross-play."""
    task = record["task"]
    lines = [
        f"task {task['name']} v{task['version']} ({task['description']}): {record['deals']} deals from seed "
        f"{record['seed']}, every seat rotation; intervals: {record['intervals']}",
        f"{'agent':<28} {'versus':<20} {'score [95% CI]':<24} {'win share [95% CI]':<24} {'margin [95% CI]':<24}",
    ]
    for title, rows in (("pool", record["results"]), ("cross-play", record["cross_play"])):
        if rows and title == "cross-play":
            lines.append("cross-play among the agents:")
        for r in rows:
            s, w, m = r["score_ci"], r["win_ci"], r["margin_ci"]
            lines.append(
                f"{r['agent'][-28:]:<28} {r['opponent'][-20:]:<20} {r['score']:>6.2f} [{s[0]:6.2f},{s[1]:6.2f}]   "
                f"{r['win_share']:.3f} [{w[0]:.3f},{w[1]:.3f}]    {r['margin']:+6.2f} [{m[0]:+.2f},{m[1]:+.2f}]"
            )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None, prog: str = "nertz benchmark") -> int:
    ap = Parser(prog=prog, description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True, parser_class=Parser)
    sub.add_parser("tasks", help="list the named tasks")
    e = sub.add_parser("eval", help="the evaluation protocol: agents against the task's pool, and cross-play")
    e.add_argument("--task", required=True, help=f"a task name: {', '.join(tasks.names())}")
    e.add_argument("--agent", action="append", required=True, help="an agent spec; repeat for cross-play")
    e.add_argument("--deals", type=at_least(2, MOST_DEALS), default=None, help="deals per opponent (default: task's)")
    e.add_argument("--no-cross-play", action="store_true", help="only the pool, no cross-play among the agents")
    e.add_argument("--out", type=output_file(".json"), default=None, help="write the record as JSON")
    e.add_argument("--quiet", action="store_true", help="no progress")
    sub.add_parser("exploit", help="the exploitability proxy ('exploit --help'; training.exploit)", add_help=False)
    argv = list(argv) if argv is not None else None
    if argv and argv[0] == "exploit":
        if not {"-h", "--help"} & set(argv[1:]):  # it trains a best responder: torch
            require(Parser(prog=f"{prog} exploit"), "torch", what="the exploitability proxy")
        from nertz_env.training import exploit

        return exploit.main(argv[1:], prog=f"{prog} exploit")
    args = ap.parse_args(argv)
    if args.command == "tasks":
        for t in tasks.TASKS.values():
            print(f"{t.name:<20} v{t.version}  {t.description}; rules {t.rules}; {t.eval_deals} deals from seed "
                  f"{t.eval_seed} vs {', '.join(t.pool)}; budget {t.agent_steps:,} agent-steps")
        return 0
    repeated = sorted({spec for spec in args.agent if args.agent.count(spec) > 1})
    if repeated:
        ap.error(f"argument --agent: {', '.join(map(repr, repeated))} given more than once; each agent is one row "
                 "of the table (and one side of cross-play): give it once")  # fmt: skip
    try:
        task = tasks.get(args.task)
        record = protocol(task, args.agent, args.deals, cross_play=not args.no_cross_play,
                          progress=False if args.quiet else None)
    except USER_ERRORS as err:
        ap.error(str(err))
    print(format_protocol(record))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(record, f, indent=1, default=float)
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    import sys

    raise SystemExit(main(sys.argv[1:], prog="python -m nertz_env.training.benchmark"))
