"""Labels of the learned search (``rollout``): states, the policy's candidate moves and what the
search's play-outs say of each, to study what a search-free network can learn from the search.

    python -m nertz_env.training.search_labels make --seed 1000 --games 32 --ticks 500 --out runs/labels/s1000.npz
    python -m nertz_env.training.search_labels make --seed 1000 --workers 16 --deadline 400 --out runs/labels/s.npz
    python -m nertz_env.training.search_labels agreement runs/labels/s1000.npz --states 600 --seeds 1 2
    python -m nertz_env.training.search_labels departures runs/labels/s-1000.npz runs/labels/s-1001.npz
    python -m nertz_env.training.search_labels departures runs/labels/m256-1010.npz --policy ppo
    python -m nertz_env.training.search_labels recheck runs/labels/m256-1010.npz --policy-kind work<waste \
        --search-kind draw --horizons 8 400

``make`` plays ``games`` hands at once (``NertzVectorEnv``, 4 players, the env's seed ``--seed``):
seat 0 is the search's policy (``ppo-league``, greedy), the other seats ``--opponent``. At every tick,
each seat-0 decision with more than one legal move is searched as ``rollout`` searches it
(``RolloutAgent.search``, decision key ``tick << 20 | game``): its ``candidates`` (the policy's
most likely first), each one's mean outcome over the ``samples`` determinised play-outs, the
standard error of its paired difference to candidate 0, and the move the search plays (``pick``).
The file keeps every seat's actions of every tick, not the observations: ``replay`` deals the same
hands from the seed and plays the actions again (the engine is deterministic), so a label file is
small (about 0.4 MB for 16,000 labels). ``--deadline`` stops early and keeps what is done;
``--workers N`` makes N files at once (seeds ``seed`` to ``seed + N - 1``, ``OUT-SEED.npz``).

``agreement`` asks whether the search's choice is a function of the state: two ``rollout``
searches with different seeds choose on the same states. Where they choose differently the
labels of one search are noise that no network can learn (``distill_search`` fits them).

``departures`` counts where the search's pick leaves the policy's first choice, by the kinds of
the two moves (R4: ``draw``, ``wait``, ``foundation<waste`` for the waste top to a foundation,
...), with the mean outcome gained and the median of its ratio to the standard error.
``--policy SPEC`` asks the same of another agent's moves on the same states, where its move is
one of the candidates the play-outs measured (``outside``: where it is not), and reports its mean
regret: what the search's pick is worth over it, per label.
``recheck`` searches those departures of given kinds again, with other horizons (a horizon past the
hand's end plays it out with no critic), and reports how often the search's move still beats the
policy's.
"""

from __future__ import annotations

import json
import time
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np

from nertz_env import agents
from nertz_env.actions import CALL, DRAW, NERTZ, WAIT, WASTE, ActionCatalogue
from nertz_env.agents.rollout import RolloutAgent
from nertz_env.cli_checks import USER_ERRORS, Parser, at_least, output_file
from nertz_env.config import MOVE_KINDS, NertzConfig
from nertz_env.engine.constants import T_KIND, T_SOURCE
from nertz_env.vector import NertzVectorEnv

PLAYERS = 4
LABEL_KEYS = ("seed", "games", "actions", "tick", "game", "cands", "mean", "se", "pick", "search")


def make(seed: int, games: int, ticks: int, opponent: str = "heuristic:depth=3", candidates: int = 4,
         samples: int = 16, horizon: int = 8, deadline: float | None = None) -> dict[str, Any]:  # fmt: skip
    """The labels of ``ticks`` ticks of ``games`` hands (module doc), as arrays."""
    env = NertzVectorEnv(games, num_players=PLAYERS, seed=seed)
    obs, masks = env.reset()
    search = RolloutAgent(seed=seed, candidates=candidates, samples=samples, horizon=horizon)
    others = agents.make_spec(opponent, seed=seed)
    logs: dict[str, list] = {k: [] for k in ("actions", "tick", "game", "cands", "mean", "se", "pick")}
    for t in range(ticks):
        if deadline is not None and time.time() > deadline:
            break
        own_obs, own_masks = obs[:, 0].copy(), masks[:, 0].copy()
        keys = decision_keys(t, np.arange(games))
        logits, rows, cands, outcomes = search.search(own_obs, own_masks, keys)
        actions = np.empty((games, PLAYERS), np.int64)
        actions[:, 0] = np.where(own_masks != 0, logits, -np.inf).argmax(axis=1)
        for g, cand, outcome in zip(rows, cands, outcomes):
            _keep_label(logs, t, g, cand, outcome, search._pick(outcome), candidates)
        rest = obs[:, 1:].reshape(-1, obs.shape[2]), masks[:, 1:].reshape(-1, masks.shape[2])
        actions[:, 1:] = others.act_batch(*rest).reshape(games, PLAYERS - 1)
        logs["actions"].append(actions.astype(np.int16))
        obs, masks, *_ = env.step(actions)
    k = candidates
    return {
        "seed": np.int64(seed), "games": np.int64(games),
        "actions": np.array(logs["actions"], np.int16).reshape(-1, games, PLAYERS),
        "tick": np.array(logs["tick"], np.int32), "game": np.array(logs["game"], np.int32),
        "cands": np.array(logs["cands"], np.int16).reshape(-1, k),
        "mean": np.array(logs["mean"], np.float32).reshape(-1, k),
        "se": np.array(logs["se"], np.float32).reshape(-1, k),
        "pick": np.array(logs["pick"], np.int8),
        "search": np.array(f"rollout:candidates={k},samples={samples},horizon={horizon};opponent={opponent}"),
    }  # fmt: skip


def _keep_label(logs: dict[str, list], tick: int, game: int, cand: np.ndarray, outcome: np.ndarray, pick: int,
                k: int) -> None:  # fmt: skip
    """Append one decision's label, its candidates padded to ``k`` with -1 (mean and se NaN)."""
    n = len(cand)
    cands, mean, se = np.full(k, -1, np.int16), np.full(k, np.nan, np.float32), np.full(k, np.nan, np.float32)
    cands[:n] = cand
    mean[:n] = outcome.mean(axis=0)
    diff = outcome - outcome[:, :1]
    se[:n] = diff.std(axis=0, ddof=1) / np.sqrt(len(diff)) if len(diff) > 1 else 0.0
    logs["tick"].append(tick)
    logs["game"].append(game)
    logs["cands"].append(cands)
    logs["mean"].append(mean)
    logs["se"].append(se)
    logs["pick"].append(pick)


def make_files(out: str | Path, seed: int, workers: int = 1, **options: Any) -> list[tuple[Path, int, int]]:
    """``make`` for seeds ``seed .. seed + workers - 1``, one process each, every file written as
    it ends: ``out`` itself for one worker, else ``{out's stem}-{seed}.npz`` beside it. Returns
    each file with its ticks and labels. ``options`` go to ``make`` (``deadline`` included)."""
    out = Path(out)
    paths = [out] if workers == 1 else [out.with_name(f"{out.stem}-{seed + w}.npz") for w in range(workers)]
    jobs = [(seed + w, str(path), options, workers > 1) for w, path in enumerate(paths)]
    if workers == 1:
        return [_make_file(jobs[0])]
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    with ProcessPoolExecutor(workers, mp_context=get_context("spawn")) as pool:
        return list(pool.map(_make_file, jobs))


def _make_file(job: tuple[int, str, dict[str, Any], bool]) -> tuple[Path, int, int]:
    seed, path, options, one_thread = job
    if one_thread:  # a worker among others: torch on one thread each
        import torch

        torch.set_num_threads(1)
    labels = make(seed, **options)
    np.savez_compressed(path, **labels)
    return Path(path), len(labels["actions"]), len(labels["tick"])


def load(path: str | Path) -> dict[str, np.ndarray]:
    """A label file written by ``make``; anything else is refused, naming what is missing."""
    try:
        with np.load(Path(path), allow_pickle=False) as z:
            data = {k: z[k] for k in z.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as e:
        raise ValueError(f"{path} is not a label file of search_labels make: {e}") from e
    missing = [k for k in LABEL_KEYS if k not in data]
    if missing:
        raise ValueError(f"{path} is not a label file of search_labels make: it lacks {', '.join(missing)}")
    n, (_, k) = len(data["tick"]), np.shape(data["cands"])
    shapes = {"game": (n,), "pick": (n,), "cands": (n, k), "mean": (n, k), "se": (n, k)}
    wrong = [f"{name} {np.shape(data[name])}" for name, shape in shapes.items() if np.shape(data[name]) != shape]
    if wrong or np.ndim(data["actions"]) != 3 or np.shape(data["actions"])[1:] != (int(data["games"]), PLAYERS):
        raise ValueError(f"{path}: arrays of inconsistent shapes ({', '.join(wrong) or 'actions'}) for {n} labels")
    if n and (data["pick"].min() < 0 or data["pick"].max() >= k or data["game"].min() < 0 or data["cands"].min() < -1):
        raise ValueError(f"{path}: a pick outside 0..{k - 1}, a negative game or a candidate below -1")
    return data


def replay(labels: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The observations and masks ``[n_labels, ...]`` of seat 0 at each label, dealt again from the
    file's seed and played again from its actions."""
    games, actions = int(labels["games"]), labels["actions"].astype(np.int64)
    env = NertzVectorEnv(games, num_players=PLAYERS, seed=int(labels["seed"]))
    obs, masks = env.reset()
    tick, game = labels["tick"], labels["game"]
    if len(tick) and (np.any(np.diff(tick) < 0) or tick[-1] >= len(actions) or game.max() >= games):
        raise ValueError("label file: ticks out of order or beyond its actions")
    out_obs = np.zeros((len(tick), obs.shape[2]), np.int8)
    out_masks = np.zeros((len(tick), masks.shape[2]), np.int8)
    bounds = np.searchsorted(tick, np.arange(len(actions) + 1))
    for t in range(len(actions)):
        at = slice(bounds[t], bounds[t + 1])
        out_obs[at], out_masks[at] = obs[game[at], 0], masks[game[at], 0]
        obs, masks, *_ = env.step(actions[t])
    return out_obs, out_masks


def move_kind(table: np.ndarray, action: int) -> str:
    """A catalogue row's kind (``config.MOVE_KINDS``, or ``wait``), and its source for a card move:
    ``work<waste``, ``draw``, ..."""
    kind, source = int(table[action, T_KIND]), int(table[action, T_SOURCE])
    name = ("wait", *MOVE_KINDS)[kind]
    if kind in (WAIT, DRAW, CALL):
        return name
    return f"{name}<{'nertz' if source == NERTZ else 'waste' if source == WASTE else 'work'}"


def decision_keys(tick, game) -> np.ndarray:
    """The search's decision keys (``RolloutAgent.search``) of label ticks and games: uint64
    ``tick << 20 | game`` (a game number below 2**20)."""
    return (np.asarray(tick, np.uint64) << np.uint64(20)) | np.asarray(game, np.uint64)


def _label_table() -> np.ndarray:
    """The catalogue table of the labels' game (``make``: 4 players, the standard rules)."""
    return ActionCatalogue(NertzConfig(num_players=PLAYERS)).table


def departures(labels: Sequence[dict[str, np.ndarray]], choices: Sequence[np.ndarray] | None = None) -> dict[str, Any]:
    """Where the search's pick departs from the policy's move, counted by (policy's kind, search's
    kind). The policy's move is candidate 0 (the labels' own policy), or ``choices[f][i]``: another
    policy's move on label ``i`` of file ``f`` (``policy_choices``), compared where it is one of the
    candidates; ``outside`` counts the labels where it is not (the play-outs did not measure it),
    ``candidate_0`` those where it is the labels' policy's own move."""
    table = _label_table()
    found: dict[tuple[str, str], list[tuple[float, float]]] = {}
    n, outside, at_candidate_0, regret = 0, 0, 0, []
    for f, data in enumerate(labels):
        n += len(data["pick"])
        moves = data["cands"][:, 0] if choices is None else np.asarray(choices[f])
        for move, cands, mean, se, pick in zip(moves, data["cands"], data["mean"], data["se"], data["pick"]):
            hit = np.flatnonzero(cands == move)
            if not len(hit):
                outside += 1
                continue
            k = hit[0]
            at_candidate_0 += int(k == 0)
            regret.append(float(mean[pick] - mean[k]))
            if pick != k:  # se: of each candidate's paired difference to candidate 0
                error = se[pick] if k == 0 else np.hypot(se[pick], se[k])
                key = (move_kind(table, move), move_kind(table, cands[pick]))
                found.setdefault(key, []).append((float(mean[pick] - mean[k]), float(error)))
    rows = sorted(found.items(), key=lambda kv: -len(kv[1]))
    return {"labels": n, "departures": sum(len(v) for v in found.values()), "outside": outside,
            "candidate_0": at_candidate_0, "mean_regret": float(np.mean(regret)) if regret else 0.0,
            "by_kind": [{"policy": a, "search": b, "count": len(v), "mean_gain": float(np.mean([g for g, _ in v])),
                         "median_gain_over_se": float(np.median([g / max(e, 1e-6) for g, e in v]))}
                        for (a, b), v in rows]}  # fmt: skip


def policy_choices(labels: Sequence[dict[str, np.ndarray]], spec: str) -> list[np.ndarray]:
    """The moves of the agent ``spec`` (greedy, seed 0) on the replayed states of each label file."""
    agent = agents.make(spec, config=NertzConfig(num_players=PLAYERS))
    return [agent.act_batch(*replay(data)) for data in labels]


def recheck(labels: Sequence[dict[str, np.ndarray]], policy_kinds: Sequence[str], search_kind: str,
            horizons: Sequence[int] = (8, 400), samples: int = 64, seed: int = 77) -> dict[str, Any]:  # fmt: skip
    """The labels' departures from a policy move of ``policy_kinds`` to a search move of
    ``search_kind`` (``move_kind``), searched again at each horizon: the mean outcome of the
    search's move minus the policy's, and how often it is still the best candidate."""
    table = _label_table()
    states: dict[str, list] = {"obs": [], "masks": [], "tick": [], "game": [], "move": []}
    for data in labels:
        obs, masks = replay(data)
        for i, (cands, pick) in enumerate(zip(data["cands"], data["pick"])):
            if pick == 0:
                continue
            if move_kind(table, cands[0]) in policy_kinds and move_kind(table, cands[pick]) == search_kind:
                states["obs"].append(obs[i])
                states["masks"].append(masks[i])
                states["tick"].append(int(data["tick"][i]))
                states["game"].append(int(data["game"][i]))
                states["move"].append(int(cands[pick]))
    report: dict[str, Any] = {"policy_kinds": list(policy_kinds), "search_kind": search_kind, "samples": samples,
                              "seed": seed, "states": len(states["move"]), "horizons": {}}  # fmt: skip
    if not states["move"]:
        return report
    obs, masks, keys = np.array(states["obs"]), np.array(states["masks"]), decision_keys(states["tick"], states["game"])
    for horizon in horizons:
        search = RolloutAgent(seed=seed, candidates=int(labels[0]["cands"].shape[1]), samples=samples, horizon=horizon)
        _, rows, cands, outcomes = search.search(obs, masks, keys)
        gains, best = [], 0
        for row, cand, outcome in zip(rows, cands, outcomes):
            at = np.flatnonzero(np.asarray(cand) == states["move"][row])
            if len(at):
                mean = outcome.mean(axis=0)
                gains.append(float(mean[at[0]] - mean[0]))
                best += int(mean.argmax() == at[0])
        some = np.array(gains, np.float64) if gains else np.full(1, np.nan)  # nan: none searched
        above = float(np.mean(some > 0)) if gains else float("nan")
        report["horizons"][str(horizon)] = {"searched": len(gains), "still_best": best,
                                            "mean_gain": float(some.mean()), "share_above_policy": above}  # fmt: skip
    return report


def agreement(obs: np.ndarray, masks: np.ndarray, seeds: Sequence[int] = (1, 2), **options: Any) -> dict[str, Any]:
    """How often two ``rollout`` searches (``seeds``, the same ``options``) choose the same move on
    the same states, overall and where at least one departs from the policy's own choice."""
    searches = [cast(RolloutAgent, agents.make("rollout", seed=s, **options)) for s in seeds[:2]]
    picks = [search.act_batch(obs, masks) for search in searches]
    policy = searches[0].policy.act_batch(obs, masks)
    same = picks[0] == picks[1]
    departs = (picks[0] != policy) | (picks[1] != policy)
    return {
        "states": len(obs),
        "seeds": list(seeds[:2]),
        "options": {k: str(v) for k, v in options.items()},
        "departs": [float(np.mean(p != policy)) for p in picks],
        "agree": float(same.mean()) if len(obs) else float("nan"),
        "agree_where_a_search_departs": float(same[departs].mean()) if departs.any() else float("nan"),
        "departing_states": int(departs.sum()),
    }


def main(argv: Sequence[str] | None = None) -> int:
    ap = Parser(prog="python -m nertz_env.training.search_labels", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    mk = sub.add_parser("make", help="label the seat-0 decisions of a batch of hands")
    mk.add_argument("--seed", type=at_least(0), required=True, help="the env's seed (the hands) and the search's")
    mk.add_argument("--games", type=at_least(1), default=32, help="hands played at once")
    mk.add_argument("--ticks", type=at_least(1), default=500, help="ticks played (ended hands are dealt again)")
    mk.add_argument("--opponent", default="heuristic:depth=3", help="agent spec of seats 1 to 3")
    mk.add_argument("--candidates", type=at_least(2), default=4, help="the policy's best moves searched")
    mk.add_argument("--samples", type=at_least(2), default=16, help="determinised tables per candidate")
    mk.add_argument("--horizon", type=at_least(1), default=8, help="ticks of each play-out")
    mk.add_argument("--deadline", type=at_least(1), default=None, help="stop after this many seconds")
    mk.add_argument("--workers", type=at_least(1), default=1, help="processes, one file and seed each (seed, seed+1..)")
    mk.add_argument("--out", type=output_file(".npz"), required=True, help="the label file (OUT-SEED.npz with workers)")
    ag = sub.add_parser("agreement", help="two searches with different seeds on the states of a label file")
    ag.add_argument("labels", help="a label file of make")
    ag.add_argument("--states", type=at_least(1), default=600, help="states drawn from the file")
    ag.add_argument("--seeds", type=at_least(0), nargs=2, default=[1, 2], help="the two searches' seeds")
    ag.add_argument("--samples", type=at_least(2), default=16, help="determinised tables per candidate")
    dep = sub.add_parser("departures", help="where the search's pick departs from the policy, by kind of move")
    dep.add_argument("labels", nargs="+", help="label files of make")
    dep.add_argument("--policy", default=None, help="an agent spec whose moves replace candidate 0's (e.g. ppo)")
    rc = sub.add_parser("recheck", help="search departures of given kinds again at other horizons")
    rc.add_argument("labels", nargs="+", help="label files of make")
    rc.add_argument("--policy-kind", nargs="+", required=True, help="the policy's move kinds (departures' kinds)")
    rc.add_argument("--search-kind", required=True, help="the search's move kind")
    rc.add_argument("--horizons", type=at_least(1), nargs="+", default=[8, 400], help="play-out ticks (past the end)")
    rc.add_argument("--samples", type=at_least(2), default=64, help="determinised tables per candidate")
    rc.add_argument("--seed", type=at_least(0), default=77, help="the searches' seed")
    a = ap.parse_args(argv)
    try:
        if a.command == "make":
            stop = None if a.deadline is None else time.time() + a.deadline
            options = {"games": a.games, "ticks": a.ticks, "opponent": a.opponent, "candidates": a.candidates,
                       "samples": a.samples, "horizon": a.horizon, "deadline": stop}  # fmt: skip
            for path, ticks, n in make_files(a.out, a.seed, a.workers, **options):
                print(f"wrote {path}: {ticks} ticks, {n} labels")
        elif a.command == "recheck":
            report = recheck([load(p) for p in a.labels], a.policy_kind, a.search_kind, a.horizons, a.samples, a.seed)
            print(json.dumps(report, indent=1))
        elif a.command == "departures":
            data = [load(path) for path in a.labels]
            choices = None if a.policy is None else policy_choices(data, a.policy)
            print(json.dumps(departures(data, choices), indent=1))
        else:
            obs, masks = replay(load(a.labels))
            at = np.random.default_rng(0).choice(len(obs), size=min(a.states, len(obs)), replace=False)
            print(json.dumps(agreement(obs[np.sort(at)], masks[np.sort(at)], a.seeds, samples=a.samples)))
    except USER_ERRORS as exc:
        ap.error(str(exc))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
