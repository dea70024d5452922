"""Where a player differs from a teacher: the teacher plays every seat, and on each of its decisions
the player's choice is compared with the teacher's, by kind of move (R4). For the commonest gap,
the teacher laying a card on a work pile where the player draws, it also counts the teacher's next
move in the same seat: what the teacher's search saw coming.

    python -m nertz_env.training.teacher_gap --player policy:path=runs/x/policy.pt \\
        --teacher heuristic:wait=soon --games 64 --ticks 1500
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from nertz_env.actions import DRAW, TO_WORK, ActionCatalogue
from nertz_env.cli_checks import USER_ERRORS, Parser, at_least
from nertz_env.config import NertzConfig
from nertz_env.engine.constants import T_KIND
from nertz_env.training.evaluate import build_agents
from nertz_env.training.move_offsets import KINDS as KIND_NAMES  # by engine kind code (R4)
from nertz_env.vector import NertzVectorEnv


def _source(name: str) -> str:
    """A catalogue name's source pile without its number: ``work2>work0:1`` -> ``work``."""
    return name.split(">")[0].rstrip("0123456789") if ">" in name else name


def teacher_gap(player: str, teacher: str, games: int = 64, ticks: int = 1500, seed: int = 7,
                num_players: int = 4) -> dict[str, Any]:  # fmt: skip
    """The counts: ``decisions``, ``differ`` and ``pairs`` ("teacher kind / player kind": count) over
    the teacher's decisions, and ``next_after_work_vs_draw`` ("kind / source": count) of the
    teacher's next move where it laid a card on a work pile and the player drew."""
    config = NertzConfig(num_players=num_players)
    (me, coach), _ = build_agents([player, teacher], config, seed)
    env = NertzVectorEnv(games, seed=seed, **config.to_dict())
    catalogue = ActionCatalogue(config)
    kinds = catalogue.table[:, T_KIND]
    n = games * num_players
    pairs: Counter[str] = Counter()  # 'teacher's kind / player's kind' where they differ
    follow: Counter[str] = Counter()  # the teacher's next move (kind / source) after waiting rows
    waiting = np.zeros(n, bool)  # rows where the teacher laid a card on a work pile and the player drew
    obs, masks = env.reset()
    for _ in range(ticks):
        o, m = obs.reshape(n, -1), masks.reshape(n, -1)
        taught, chosen = coach.act_batch(o, m), me.act_batch(o, m)
        for i in np.flatnonzero(waiting):
            follow[f"{KIND_NAMES[kinds[taught[i]]]} / {_source(catalogue.names[taught[i]])}"] += 1
        for i in np.flatnonzero(taught != chosen):
            pairs[f"{KIND_NAMES[kinds[taught[i]]]} / {KIND_NAMES[kinds[chosen[i]]]}"] += 1
        waiting = (kinds[taught] == TO_WORK) & (kinds[chosen] == DRAW)
        obs, masks, *_ = env.step(taught.reshape(games, num_players))
    return {"player": player, "teacher": teacher, "games": games, "ticks": ticks, "seed": seed,
            "decisions": ticks * n, "differ": sum(pairs.values()), "pairs": dict(pairs.most_common()),
            "next_after_work_vs_draw": dict(follow.most_common())}  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    ap = Parser(prog="python -m nertz_env.training.teacher_gap", description=__doc__.split("\n\n")[0])
    ap.add_argument("--player", required=True, help="the agent spec compared, e.g. policy:path=runs/x/policy.pt")
    ap.add_argument("--teacher", default="heuristic:wait=soon", help="the agent spec that plays every seat")
    ap.add_argument("--games", type=at_least(1), default=64, help="games played side by side")
    ap.add_argument("--ticks", type=at_least(1), default=1500, help="ticks played (hands restart as they end)")
    ap.add_argument("--seed", type=at_least(0), default=7, help="the deals' seed")
    args = ap.parse_args(argv)
    try:
        record = teacher_gap(args.player, args.teacher, args.games, args.ticks, args.seed)
    except USER_ERRORS as err:
        ap.error(str(err))
    except MemoryError as err:  # numpy's own message gives the size asked for
        ap.error(f"--games {args.games}: {err}; play fewer games side by side")
    print(json.dumps(record, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
