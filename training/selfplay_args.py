"""The flags of ``train_selfplay`` (``Args``), what a resumed run may change, and the check of
every flag before anything is built or written."""

from __future__ import annotations

import math
from dataclasses import dataclass

from nertz_env.agents.features import FEATURE_GROUPS, feature_columns
from nertz_env.config import REWARD_MODES
from nertz_env.training.args import arg, check_counts, check_numbers, check_seed_and_sizes, rules_config
from nertz_env.training.checkpoint import resolve_device
from nertz_env.training.opponent_pool import SAMPLINGS
from nertz_env.training.oracle import ENCODINGS
from nertz_env.training.selfplay_ppo import Seats
from nertz_env.training.symmetries import Relabeller

LR_SHAPES = ("linear", "cosine")  # --lr-schedule: train_selfplay.anneal_factor computes each


@dataclass
class Args:
    """Self-play masked PPO for Nertz."""

    exp_name: str = arg("selfplay", "name of the run (logs go to {out_dir}/nertz_v0__{exp_name}__{seed}__{time})")
    seed: int = arg(1, "the one seed of torch, numpy, the games and the opponent draws")
    total_steps: int = arg(8_000_000, "learner decisions to train on (the default takes ~21 min on one CPU core)")
    bc_steps: int = arg(
        -1, "the first decisions of total_steps train by cloning the teacher (0: pure PPO; -1: total_steps / 8)"
    )
    teacher: str = arg("heuristic:depth=3", "the agent spec cloned in the first phase and pulled towards in the second")
    bc_coef: float = arg(0.1, "weight of the pull towards the teacher when PPO starts, fading linearly to 0")
    num_envs: int = arg(64, "games stepped at once")
    num_players: int = arg(4, "players per game")
    num_steps: int = arg(64, "ticks per rollout")
    self_play_fraction: float = arg(0.5, "share of games in which the learner holds every seat")
    scripted: tuple[str, ...] = arg(("greedy", "heuristic"), "agent specs of the opponent pool (e.g. policy:path=)")
    rules: tuple[str, ...] = arg((), "NertzConfig options KEY=VALUE of the games (e.g. partners=true)")
    pool_size: int = arg(4, "past snapshots of the policy kept as opponents")
    snapshot_every: int = arg(20, "updates between snapshots added to the pool")
    pool_sampling: str = arg(
        "uniform",
        "how each mixed game's opponent is drawn at a deal: uniform, or pfsp (prioritised fictitious self-play: "
        "the members the learner wins least against more often; training.opponent_pool)",
        choices=list(SAMPLINGS),
    )
    pfsp_power: float = arg(2.0, "pfsp draws a member in proportion to (1 - the learner's win share vs it) ** this")
    pfsp_rate: float = arg(0.02, "pfsp's moving average: how far each hand moves a member's win share (0 to 1]; "
                           "a uniform run records the shares (pool/ scalars) at this rate too")
    reward: str = arg("relative", "reward mode of the env: " + ", ".join(REWARD_MODES), choices=list(REWARD_MODES))
    win_bonus: float = arg(0.0, "added to a learner's reward when a hand ends: this x (its win share - 1/players)")
    nertz_bonus: float = arg(0.0, "added to each learner's reward per card that leaves its Nertz pile (the race, R5)")
    hidden: tuple[int, ...] = arg((128, 128), "hidden layer sizes of the observation summary")
    action_hidden: int = arg(64, "width of the layers that score each move")
    lookahead_features: bool = arg(True, "also give the network the heuristic's look-ahead value of each move")
    lookahead_depth: int = arg(3, "depth of that look-ahead (1 to 4; the heuristic itself plays at 2)")
    cycle_features: bool = arg(False, "also give the network the stock-cycle columns (agents.features.CYCLE_COLUMNS)")
    opponent_features: bool = arg(False, "also give it the opponent columns (agents.features.OPPONENT_COLUMNS)")
    identity_features: bool = arg(False, "also give it the moved card's identity (agents.features.IDENTITY_COLUMNS)")
    follow_features: bool = arg(False, "also give it what may follow onto a card laid on a work pile (FOLLOW_COLUMNS)")
    race_features: bool = arg(False, "also give it how near cards are to the foundations and the opponents' "
                              "Nertz tops a foundation move feeds or blocks (agents._race.RACE_COLUMNS)")
    afterstate: bool = arg(False, "also score each move by the summary of the layout it leads to (agents._afterstate)")
    move_set: bool = arg(False, "also score each move by the mean and max of all legal moves' layers (which are legal)")
    central_critic: bool = arg(
        False, "advantages from a critic that also sees the hidden cards (training.central_critic)"
    )
    critic_lr: float = arg(0.0, "that critic's own constant learning rate (0: the policy's, annealed with it)")
    oracle_policy: bool = arg(
        False, "the policy also sees the hidden cards while it learns, fading out over --oracle-fade (training.oracle)"
    )
    oracle_hold: float = arg(0.0, "share of the PPO phase that input keeps its full weight, in [0, --oracle-fade)")
    oracle_fade: float = arg(0.5, "share of the PPO phase by which that input has faded to 0, in (0, 1]")
    oracle_input: str = arg(
        "positions",
        "how that input reads the hidden cards: positions (each card's place in its pile, scaled) or near (0/1 "
        "entries naming the cards next below each Nertz top and waste top and next turned from each stock)",
        choices=list(ENCODINGS),
    )
    aux_hidden: float = arg(0.0, "weight of an auxiliary loss: the observation summary also predicts the hidden "
                            "cards about to matter, --oracle-input near's entries (training.aux_hidden); 0: none")
    aux_opponents: float = arg(0.0, "weight of an auxiliary loss: the observation summary also predicts the group of "
                               "each opponent's move on the same tick (training.aux_opponents); 0: none")
    drop_features: tuple[str, ...] = arg(
        (), "feature groups zeroed in training and in the saved policy's play (an ablation)", choices=[*FEATURE_GROUPS]
    )
    sampler: str = arg(
        "pairs",
        "how rollouts draw moves: pairs (one draw per legal move) or catalogue (one per catalogue entry, the draws "
        "of runs before this flag; the same distribution)",
        choices=["pairs", "catalogue"],
    )
    explore_temperature: float = arg(
        1.0,
        "the PPO phase draws the learner's moves from its policy's softmax at this temperature (above 1: more "
        "exploration), scored in the update as its own draws unless --explore-correction importance; 1: the policy "
        "itself",
    )
    explore_correction: str = arg(
        "none",
        "how the update scores the tempered draws: none (as the policy's own) or importance (decoupled PPO: each "
        "move's clipped term weighted by its probability under the policy over that under the draw)",
        choices=["none", "importance"],
    )
    relabel: str = arg(
        "none",
        "the update sees each minibatch's tables relabelled by a random one of the game's symmetries "
        "(training.symmetries): an order of the learner's work piles (work), of the opponents (opponents) or both "
        "(all); none: the tables as played",
        choices=["none", "work", "opponents", "all"],
    )
    learning_rate: float = arg(3e-4, "Adam learning rate")
    anneal_lr: bool = arg(True, "anneal the learning rate to 0 over the PPO phase (its shape: --lr-schedule)")
    lr_schedule: str = arg(
        "linear",
        "the anneal's shape: linear (the rate falls in step with the PPO phase) or cosine (half a cosine wave: "
        "more updates near the full rate and near 0, fewer between)",
        choices=list(LR_SHAPES),
    )
    gamma: float = arg(0.995, "discount factor")
    gae_lambda: float = arg(0.95, "GAE lambda")
    num_minibatches: int = arg(4, "minibatches per epoch")
    update_epochs: int = arg(3, "epochs per update")
    clip_coef: float = arg(0.2, "PPO clip coefficient")
    ent_coef: float = arg(0.01, "entropy coefficient")
    vf_coef: float = arg(0.5, "value loss coefficient")
    max_grad_norm: float = arg(0.5, "gradient clipping norm")
    target_kl: float = arg(0.0, "stop the epochs of an update early above this KL (0: never)")
    device: str = arg("auto", "auto (CUDA when present), cpu or cuda")
    threads: int = arg(1, "torch CPU threads (0: torch's default; 2 idle cores: 1.2x one; results depend on it)")
    eval_every: int = arg(50, "updates between evaluations against greedy and heuristic (0: never)")
    eval_deals: int = arg(100, "duplicate deals per evaluation")
    save_every: int = arg(10, "updates between checkpoints")
    keep_policy_every: int = arg(50, "updates between kept copies of policy.pt in policies/ (0: none)")
    out_dir: str = arg("runs", "where runs are written")
    run_dir: str = arg("", "write into this directory instead of a new one under out_dir")
    resume: str = arg("", "a checkpoint.pt to continue from (same results as an uninterrupted run)")
    init_policy: str = arg("", "start the network from this policy.pt of the same shape (e.g. a clone, then PPO)")
    stop_after: int = arg(0, "stop this invocation after so many updates, with a checkpoint (0: run to the end)")
    progress: bool = arg(True, "show a progress bar")
    tensorboard: bool = arg(True, "write TensorBoard logs")


REQUIRED = ("args", "update", "global_step", "net", "optimizer", "pool", "envs", "numpy_rng", "torch_rng", "obs")
MAY_CHANGE = {"total_steps", "tensorboard"}  # on resume: the saved value unless given
PER_CALL = {"resume", "stop_after", "progress"}  # on resume: this invocation's value
# Flags added after runs were saved, with the value those runs trained with: a checkpoint
# without the flag resumes as it began.
BEFORE_FLAG = {"sampler": "catalogue", "central_critic": False, "critic_lr": 0.0, "nertz_bonus": 0.0,
               "opponent_features": False, "identity_features": False, "race_features": False,
               "follow_features": False, "afterstate": False, "move_set": False, "oracle_policy": False,
               "oracle_fade": 0.5, "oracle_input": "positions", "oracle_hold": 0.0,
               "lr_schedule": "linear", "explore_temperature": 1.0,
               "explore_correction": "none", "aux_hidden": 0.0,
               "aux_opponents": 0.0, "relabel": "none"}  # fmt: skip


def check_args(args: Args, given: set[str] | frozenset[str] = frozenset()) -> None:
    """Every flag in range, or an error naming it (before anything is built or written); ``given``:
    the flags the command line gave, refused with the ones they need absent (``check_needs``)."""
    positive = ("num_envs", "num_players", "num_steps", "num_minibatches", "update_epochs", "save_every",
                "snapshot_every", "pool_size", "eval_deals", "hidden", "action_hidden")  # fmt: skip
    for name in positive:
        values = getattr(args, name) if isinstance(getattr(args, name), tuple) else (getattr(args, name),)
        if not values or min(values) < 1:
            raise ValueError(f"--{name.replace('_', '-')} {getattr(args, name)}: accepted integers >= 1")
    check_counts(args, ("eval_every", "stop_after", "threads", "keep_policy_every"), 0)
    check_seed_and_sizes(args, ("hidden", "action_hidden"))
    check_numbers(args)
    rules_config(args.num_players, args.reward, args.rules)
    if not 0.0 <= args.self_play_fraction <= 1.0:
        raise ValueError(f"--self-play-fraction {args.self_play_fraction}: accepted 0 to 1")
    check_oracle(args)
    if args.lr_schedule != "linear" and not args.anneal_lr:
        raise ValueError(f"--lr-schedule {args.lr_schedule}: accepted only with --anneal-lr true (the rate it shapes)")
    check_explore(args)
    check_relabel(args)
    if not 0.0 < args.pfsp_rate <= 1.0:
        raise ValueError(f"--pfsp-rate {args.pfsp_rate}: accepted a number in (0, 1]")
    for name in ("win_bonus", "nertz_bonus", "critic_lr", "pfsp_power", "aux_hidden", "aux_opponents"):
        if not math.isfinite(getattr(args, name)) or getattr(args, name) < 0:
            raise ValueError(f"--{name.replace('_', '-')} {getattr(args, name)}: accepted a finite number >= 0")
    check_needs(args, given)
    if args.bc_steps < -1:
        raise ValueError(f"--bc-steps {args.bc_steps}: accepted -1 (an eighth of --total-steps) or >= 0")
    if args.lookahead_features and not 1 <= args.lookahead_depth <= 4:
        raise ValueError(f"--lookahead-depth {args.lookahead_depth}: accepted 1 to 4")
    if not args.scripted:
        raise ValueError("--scripted needs at least one agent for the opponent pool")
    resolve_device(args.device)
    try:
        feature_columns(args.drop_features)
    except ValueError as exc:
        raise ValueError(f"--drop-features {' '.join(args.drop_features)}: {exc}") from None
    seats = Seats.build(args.num_envs, args.num_players, args.self_play_fraction)
    batch = args.num_steps * seats.n_learn
    if args.total_steps < batch:
        raise ValueError(
            f"--total-steps {args.total_steps} is less than one update ({args.num_steps} ticks x {seats.n_learn} "
            f"learner seats = {batch} decisions): give at least {batch}"
        )
    if args.num_minibatches > batch:
        raise ValueError(f"--num-minibatches {args.num_minibatches} exceeds the {batch} decisions of an update")


# Flags that shape only what another flag turns on: (flag, whether it is on, what turns it on).
NEEDS = (("pfsp_power", lambda a: a.pool_sampling == "pfsp", "--pool-sampling pfsp (the draws it weighs)"),
         ("critic_lr", lambda a: a.central_critic, "--central-critic true (the critic it fits)"))  # fmt: skip


def check_needs(args: Args, given: set[str] | frozenset[str]) -> None:
    """A flag of ``NEEDS`` given on the command line (its default value too) without the flag that
    turns on what it shapes is refused by name: it would change nothing. (A saved run's values are
    not judged again on resume; ``--pfsp-rate`` is not one: a uniform run records its win shares at
    that rate too, ``training.opponent_pool``.)"""
    for name, on, needs in NEEDS:
        if name in given and not on(args):
            raise ValueError(f"--{name.replace('_', '-')} {getattr(args, name)}: accepted only with {needs}")


def check_explore(args: Args) -> None:
    """``--explore-temperature`` a finite number above 0, away from 1 only with ``--sampler pairs``;
    ``--explore-correction`` only with a temperature to correct."""
    value = args.explore_temperature
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"--explore-temperature {value}: accepted a finite number > 0")
    if value != 1.0 and args.sampler != "pairs":
        raise ValueError(f"--explore-temperature {value}: accepted only with --sampler pairs")
    if args.explore_correction != "none" and value == 1.0:
        raise ValueError(f"--explore-correction {args.explore_correction}: accepted only with an "
                         "--explore-temperature other than 1 (there is nothing to correct)")  # fmt: skip


def check_relabel(args: Args) -> None:
    """``--relabel`` only without the inputs and heads that read the hidden cards or the opponents'
    moves by seat (they are not relabelled), and its opponents only where they are alike (R6)."""
    if args.relabel == "none":
        return
    seat_readers = ("central_critic", "oracle_policy", "aux_hidden", "aux_opponents")
    readers = [f"--{name.replace('_', '-')}" for name in seat_readers if getattr(args, name)]
    if readers:
        raise ValueError(f"--relabel {args.relabel}: accepted only without {' and '.join(readers)} (what they read "
                         "by seat is not relabelled)")  # fmt: skip
    try:
        Relabeller(rules_config(args.num_players, args.reward, args.rules), args.relabel)
    except ValueError as exc:
        raise ValueError(f"--relabel {args.relabel}: {exc}") from None


def check_oracle(args: Args) -> None:
    """The oracle input's flags in range, and none of them away from its default without
    ``--oracle-policy true`` (they would shape nothing)."""
    if not 0.0 < args.oracle_fade <= 1.0:
        raise ValueError(f"--oracle-fade {args.oracle_fade}: accepted a number in (0, 1]")
    if not 0.0 <= args.oracle_hold < args.oracle_fade:
        accepted = f"accepted a number in [0, --oracle-fade {args.oracle_fade})"
        raise ValueError(f"--oracle-hold {args.oracle_hold}: {accepted}")
    if args.oracle_policy:
        return
    for name in ("oracle_hold", "oracle_fade", "oracle_input"):
        value = getattr(args, name)
        if value != BEFORE_FLAG[name]:  # these equal the defaults
            raise ValueError(f"--{name.replace('_', '-')} {value}: accepted only with --oracle-policy true")
