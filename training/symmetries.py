"""Does a trained policy play alike on relabelled tables, and would averaging over them help?

Two relabellings leave a table's play unchanged: the order of a player's work piles (alike from
the deal on, R2; a move names its pile by number only, R10) and, under R6's default random races,
the order of the opponents (everyone moves at once, R3). A network reads them at fixed places of
the observation (R9) and learns each place apart. This diagnostic measures (1) how often the
policy's greedy move on a relabelled table, mapped back, is its move on the table itself, on
tables of its own play, and (2) the player that averages the policy's move log-probabilities over
a group of relabellings (one forward pass per relabelling), paired deal by deal with the policy,
as ``training.move_offsets`` pairs its shifted players. A gain would be what a network that
respects the symmetries (trained on relabelled tables) could add; none says it adds nothing.

    python -m nertz_env.training.symmetries --policy agents/policies/ppo.pt --groups work-cycle work \\
        opponents --hands 2000 --seed 3001 --json symmetries.json
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from nertz_env import agents
from nertz_env.actions import TO_NERTZ, TO_WORK, UNDER, WORK_SOURCE, ActionCatalogue
from nertz_env.agents.policy import PolicyAgent
from nertz_env.cli_checks import USER_ERRORS, Parser, at_least, output_file
from nertz_env.config import NertzConfig
from nertz_env.engine.constants import T_DEST, T_KIND, T_SOURCE
from nertz_env.layout import ObservationLayout
from nertz_env.training.compare_reports import compare
from nertz_env.training.evaluate import evaluate
from nertz_env.training.move_offsets import OPPONENTS, paired_text, print_table
from nertz_env.vector import NertzVectorEnv

GROUPS = ("work", "work-cycle", "opponents")


@dataclass(frozen=True)
class View:
    """One relabelling: the relabelled observation is ``obs[:, columns]``, and action ``a`` of the
    table is action ``actions[a]`` of the relabelled table."""

    name: str
    columns: np.ndarray
    actions: np.ndarray


def _actions(table: np.ndarray, work: np.ndarray, seats: np.ndarray) -> np.ndarray:
    """Where each catalogue row goes when own pile ``j`` becomes pile ``work[j]`` and opponent
    ``k`` becomes opponent ``seats[k]`` (R4.8's builds name the opponent)."""
    rows = table.astype(np.int64)
    moved = rows.copy()
    from_work = rows[:, T_SOURCE] >= WORK_SOURCE
    moved[from_work, T_SOURCE] = WORK_SOURCE + work[rows[from_work, T_SOURCE] - WORK_SOURCE]
    to_pile = np.isin(rows[:, T_KIND], (TO_WORK, UNDER))
    moved[to_pile, T_DEST] = work[rows[to_pile, T_DEST]]
    to_nertz = rows[:, T_KIND] == TO_NERTZ
    moved[to_nertz, T_DEST] = seats[rows[to_nertz, T_DEST]]
    index = {tuple(r): i for i, r in enumerate(rows)}
    return np.array([index[tuple(r)] for r in moved], np.int64)


def views(config: NertzConfig, group: str) -> list[View]:
    """The relabellings of ``group`` (identity first): ``work``, every order of the learner's work
    piles; ``work-cycle``, their cyclic turns; ``opponents``, every order of the opponents, which
    needs R6's random races, no partners and no turns (a seat then matters)."""
    layout, table = ObservationLayout(config), ActionCatalogue(config).table
    w, p, block, place = config.work_piles, config.num_players, layout.block_size, np.arange(layout.size)
    if group in ("work", "work-cycle"):
        orders = list(itertools.permutations(range(w)))
        orders = orders if group == "work" else [tuple((i + k) % w for i in range(w)) for k in range(w)]
        out = []
        for order in orders:  # the relabelled pile j is the table's pile order[j]
            columns = place.copy()
            for j, old in enumerate(order):
                columns[layout.slices[f"self.work{j}"]] = place[layout.slices[f"self.work{old}"]]
            actions = _actions(table, np.argsort(order), np.arange(p))
            out.append(View("work" + "".join(map(str, order)), columns, actions))
        return out
    if group != "opponents":
        raise ValueError(f"unknown group {group!r}: accepted {', '.join(GROUPS)}")
    if config.collision != "random" or config.speed is not None or config.partners or config.turn_based:
        raise ValueError("the opponents are alike only under collision='random', no speed weights, no partners and "
                         f"no turns (R6, R8, R3); this config has collision={config.collision!r}, speed="
                         f"{config.speed!r}, partners={config.partners}, turn_based={config.turn_based}")  # fmt: skip
    out = []
    for order in itertools.permutations(range(1, p)):  # the relabelled opponent k is the table's order[k - 1]
        columns = place.copy()
        for k, old in enumerate(order, start=1):
            columns[k * block : (k + 1) * block] = place[old * block : (old + 1) * block]
        seats = np.argsort((0, *order))
        out.append(View("opponents" + "".join(map(str, order)), columns, _actions(table, np.arange(w), seats)))
    return out


class Relabeller:
    """``train_selfplay --relabel``: a relabelling drawn for each minibatch of an update, from the
    work piles' orders, the opponents' or both (one of each, composed). A move's features describe
    its effect, not its pile's number, so they are the same on the relabelled table (a test checks
    it pair by pair): the update relabels the observations and the moves' indices only."""

    def __init__(self, config: NertzConfig, which: str):
        groups = {"work": ("work",), "opponents": ("opponents",), "all": ("work", "opponents")}.get(which)
        if groups is None:
            raise ValueError(f"unknown relabelling {which!r}: accepted work, opponents or all")
        self.groups = [views(config, group) for group in groups]

    def draw(self) -> tuple[torch.Tensor, np.ndarray]:
        """The observation's columns ``[D]`` and the moves' new indices ``[N]`` of one relabelling,
        drawn from torch's generator (a run's seed fixes it)."""
        first = self.groups[0][0]
        columns, actions = np.arange(first.columns.size), np.arange(first.actions.size)  # the identity
        for group in self.groups:
            view = group[int(torch.randint(len(group), (1,)))]
            columns, actions = columns[view.columns], view.actions[actions]
        return torch.from_numpy(columns), actions


def relabelled(view: View, obs: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows of observations and masks as ``view`` relabels them."""
    moved = np.zeros_like(masks)
    moved[:, view.actions] = masks
    return np.ascontiguousarray(obs[:, view.columns]), moved


class SymmetrisedPolicy(PolicyAgent):
    """A ``.pt`` policy whose move log-probabilities are averaged over ``views`` (each a forward
    pass of its network on the relabelled table, mapped back)."""

    name = "symmetrised-policy"

    def __init__(self, path, views: Sequence[View], config: NertzConfig | None = None, seed: int = 0):
        super().__init__(path, config=config, seed=seed)
        if self._net is None:
            raise ValueError(f"{path}: relabelled tables are scored by a .pt policy's network; accepted a "
                             "train_selfplay.py policy")  # fmt: skip
        self.views = list(views)

    def __repr__(self) -> str:  # the report's spec of this player
        return f"symmetrised-policy(path={self.path}, views={len(self.views)})"

    def _scores(self, obs: np.ndarray, masks: np.ndarray):
        logp: torch.Tensor | int = 0
        values: torch.Tensor | int = 0
        for view in self.views:
            logits, value = super()._scores(*relabelled(view, obs, masks))
            logp = logp + torch.log_softmax(logits, -1)[:, torch.from_numpy(view.actions)]
            values = values + value
        return logp / len(self.views), values / len(self.views)


def own_tables(policy: PolicyAgent, opponents: Sequence[str], games: int, ticks: int, seed: int):
    """The learner's observations and masks in ``games`` games of ``ticks`` ticks of the policy
    (seat 0) against ``opponents``, where it has more than one legal move."""
    env = NertzVectorEnv(games, seed=seed, config=policy.config)
    others = [agents.make_spec(spec, seed=seed + k, config=policy.config) for k, spec in enumerate(opponents, 1)]
    obs, masks = env.reset()
    kept_obs, kept_masks = [], []
    for _ in range(ticks):
        kept_obs.append(obs[:, 0].copy())
        kept_masks.append(masks[:, 0].copy())
        actions = np.stack([a.act_batch(obs[:, s], masks[:, s]) for s, a in enumerate([policy, *others])], 1)
        obs, masks, *_ = env.step(actions)
    obs, masks = np.concatenate(kept_obs), np.concatenate(kept_masks)
    choice = masks.sum(1) > 1
    return obs[choice], masks[choice]


def agreement(policy: PolicyAgent, group: Sequence[View], obs: np.ndarray, masks: np.ndarray) -> dict[str, float]:
    """Per view, the share of rows where the greedy move on the relabelled table, mapped back, is
    the greedy move on the table."""
    plain = policy.scores(obs, masks)[0].argmax(-1)
    shares = {}
    for view in group:  # the relabelled tables pass the agent's input checks as tables of the game
        logits = policy.scores(*relabelled(view, obs, masks))[0][:, torch.from_numpy(view.actions)]
        shares[view.name] = float((logits.argmax(-1) == plain).float().mean())
    return shares


def screen(policy: str, groups: Sequence[str], hands: int = 1000, seed: int = 3001, games: int = 64,
           opponents: Sequence[str] = OPPONENTS) -> dict[str, Any]:  # fmt: skip
    """For each group: the agreement of every view on tables of the policy's own play, and the
    symmetrised player's win share and paired differences with the policy on ``hands`` deals."""
    config = NertzConfig(num_players=1 + len(opponents))
    plain = PolicyAgent(policy, config=config)
    obs, masks = own_tables(plain, opponents, games, 100, seed)

    def play(player) -> dict[str, Any]:
        return evaluate([player, *opponents], hands=hands, seed=seed, config=config, progress=False)

    base, rows = play(plain), []
    for group in groups:
        group_views = views(config, group)
        report = play(SymmetrisedPolicy(policy, group_views, config=config))
        paired = compare(base, report)
        rows.append({"group": group, "views": len(group_views), "win_share": report["summary"][0]["win_share"],
                     "agreement": agreement(plain, group_views, obs, masks)} | {k: paired[k] for k in
                    ("win_share_diff", "win_share_diff_ci", "score_diff", "score_diff_ci")})  # fmt: skip
    return {"policy": str(policy), "opponents": list(opponents), "hands": hands, "seed": seed, "tables": len(obs),
            "base_win_share": base["summary"][0]["win_share"], "rows": rows}  # fmt: skip


def format_screen(record: dict[str, Any]) -> str:
    lines = [f"{record['policy']}: win share {record['base_win_share']:.4f} ({record['hands']} deals of seed "
             f"{record['seed']}); agreement on {record['tables']} tables of its own play; the symmetrised player, "
             "paired with it:"]  # fmt: skip
    for r in record["rows"]:
        shares = sorted(r["agreement"].values())
        lines.append(f"  {r['group']:<11} {r['views']:>3} views  agreement {shares[0]:.4f} to {shares[-1]:.4f}  "
                     f"{paired_text(r)}")  # fmt: skip
    return "\n".join(lines)


def markdown_table(records: Sequence[dict[str, Any]], names: Sequence[str]) -> str:
    """One row per group of the first record, one column per record (``names``): the symmetrised
    player's paired win share difference with its interval, and the lowest agreement of a view."""
    groups = [r["group"] for r in records[0]["rows"]]
    for name, record in zip(names, records):
        if [r["group"] for r in record["rows"]] != groups:
            raise ValueError(f"{name} screened other groups than {names[0]}: accepted records of one --groups list")
    lines = ["| averaged over | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|",
             "| (none: the policy's win share) | " + " | ".join(f"{r['base_win_share']:.4f}" for r in records) + " |"]
    for i, group in enumerate(groups):
        cells = []
        for record in records:
            row = record["rows"][i]
            (low, high), lowest = row["win_share_diff_ci"], min(row["agreement"].values())
            cells.append(f"{row['win_share_diff']:+.4f} [{low:+.4f}, {high:+.4f}]; {lowest:.3f}")
        lines.append(f"| `{group}` ({records[0]['rows'][i]['views']} views) | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    ap = Parser(prog="python -m nertz_env.training.symmetries", description=__doc__.split("\n\n")[0])
    ap.add_argument("--policy", help="a train_selfplay.py policy.pt")
    ap.add_argument("--groups", nargs="+", choices=GROUPS, default=list(GROUPS),
                    help="the relabellings to average over")  # fmt: skip
    ap.add_argument("--opponents", nargs="+", default=list(OPPONENTS), help="the other seats' agent specs")
    ap.add_argument("--hands", type=at_least(1), default=1000, help="duplicate deals per player")
    ap.add_argument("--seed", type=at_least(0), default=3001, help="the deals' seed, apart from the evaluation's")
    ap.add_argument("--games", type=at_least(1), default=64, help="games of 100 ticks whose tables measure agreement")
    ap.add_argument("--json", type=output_file(".json"), help="also write the record here")
    ap.add_argument("--table", nargs="+", metavar="NAME=RECORD.json",
                    help="instead: print the markdown table of these records (--json files), one column each")
    args = ap.parse_args(argv)
    if args.table:
        if args.policy or args.json:
            ap.error("--table prints kept records; it takes no --policy or --json")
        return print_table(ap, args.table, markdown_table)
    if not args.policy:
        ap.error("--policy is needed to screen (or --table to print kept records)")
    try:
        record = screen(args.policy, args.groups, args.hands, args.seed, args.games, tuple(args.opponents))
    except USER_ERRORS as err:
        ap.error(str(err))
    print(format_screen(record))
    if args.json:
        Path(args.json).write_text(json.dumps(record, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
