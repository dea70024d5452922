"""The pieces of ``train_selfplay``'s loop: the seats, the rollout, GAE and the update (the
opponent pool is ``training.opponent_pool``).

Each function does one step of CleanRL's ppo.py over ``NertzVectorEnv``; ``train_selfplay.main``
calls them in order. Every random draw comes from torch's global generator (seeded by the
trainer, saved in its checkpoints) or the pool's numpy generator, in a fixed order.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from nertz_env.agents.base import O_NERTZ_COUNT
from nertz_env.training.pair_policy import draw, pair_log_softmax, pair_of
from nertz_env.training.stats import win_shares


@dataclass
class Seats:
    """Which (game, seat) pairs the learner holds: every seat of the self-play games, seat 0 of
    the rest (the ``mixed`` games, whose other seats belong to an opponent from the pool)."""

    learn_idx: np.ndarray
    mixed: np.ndarray

    @classmethod
    def build(cls, num_envs: int, num_players: int, self_play_fraction: float) -> Seats:
        n_self = int(round(num_envs * self_play_fraction))
        learn = np.zeros((num_envs, num_players), bool)
        learn[:n_self] = True
        learn[n_self:, 0] = True
        return cls(np.flatnonzero(learn.reshape(-1)), np.arange(n_self, num_envs))

    @property
    def n_learn(self) -> int:
        return len(self.learn_idx)

    @classmethod
    def update_decisions(cls, args: Any) -> int:
        """The learner decisions of one update of a run with ``args`` (``train_selfplay``'s): its
        ``num_steps`` ticks times the learner seats."""
        return args.num_steps * cls.build(args.num_envs, args.num_players, args.self_play_fraction).n_learn


@dataclass
class Rollout:
    """One rollout's tensors ``[num_steps, n_learn]`` and the legal (row, move) pairs with their
    features, row-major, rows numbered ``step * n_learn + seat``: the update reads them back."""

    obs: torch.Tensor
    masks: torch.Tensor
    actions: torch.Tensor
    teacher: torch.Tensor
    logprobs: torch.Tensor
    rewards: torch.Tensor
    dones: torch.Tensor
    values: torch.Tensor
    hidden: torch.Tensor | None = None  # ``[num_steps, n_learn, players * 156]``: with a central critic or oracle
    weights: torch.Tensor | None = None  # ``[num_steps, n_learn]``: importance weights (--explore-correction)
    opponent_moves: torch.Tensor | None = None  # ``[num_steps, n_learn, P - 1]``: with --aux-opponents
    rows: list[np.ndarray] = field(default_factory=list)
    acts: list[np.ndarray] = field(default_factory=list)
    feats: list[np.ndarray] = field(default_factory=list)
    times: dict[str, float] = field(default_factory=dict)

    @classmethod
    def empty(cls, num_steps: int, n_learn: int, obs_dim: int, n_actions: int) -> Rollout:
        def z(*shape, dtype=torch.float32):
            return torch.zeros((num_steps, n_learn, *shape), dtype=dtype)

        return cls(z(obs_dim, dtype=torch.int8), z(n_actions, dtype=torch.int8), z(dtype=torch.long),
                   z(dtype=torch.long), z(), z(), z(), z())  # fmt: skip

    @classmethod
    def for_trainer(cls, t: Any) -> Rollout:
        """The rollout buffer of a trainer ``t`` (``train_selfplay.Trainer``), with room for the
        hidden cards when it has a central critic or an oracle input."""
        buf = cls.empty(t.args.num_steps, t.seats.n_learn, t.obs_dim, t.n_actions)
        reader = hidden_reader(t)
        if reader is not None:
            buf.hidden = torch.zeros((t.args.num_steps, t.seats.n_learn, reader.width), dtype=torch.int8)
        if t.args.explore_correction == "importance":
            buf.weights = torch.ones((t.args.num_steps, t.seats.n_learn))
        if t.aux_opponents is not None:
            shape = (t.args.num_steps, t.seats.n_learn, t.args.num_players - 1)
            buf.opponent_moves = torch.zeros(shape, dtype=torch.int8)
        return buf


def hidden_reader(t: Any):
    """What reads the learner seats' hidden cards (``central_critic.HiddenCards``): the central
    critic, else the oracle input, else the auxiliary head (``training.aux_hidden``), else None."""
    for reader in (t.critic, t.oracle, t.aux):
        if reader is not None:
            return reader
    return None


def hidden_needed(t: Any) -> bool:
    """Whether this update reads the hidden cards: for the central critic or the auxiliary head, or
    for the oracle input while its weight is above 0 (after the fade, a run with the oracle alone
    reads none)."""
    if t.critic is not None or t.aux is not None:
        return True
    return t.oracle is not None and t.oracle_weight > 0


def oracle_pre(t: Any, hidden: torch.Tensor) -> torch.Tensor | None:
    """The oracle's addition to the first layer for rows of ``hidden`` (``training.oracle``), or
    None without an oracle or once its weight is 0."""
    if t.oracle is None or t.oracle_weight <= 0:
        return None
    return t.oracle.pre_add(hidden.to(t.device), t.oracle_weight)


@dataclass
class Loop:
    """The state the loop carries from one rollout to the next (saved in every checkpoint)."""

    obs: np.ndarray
    masks: np.ndarray
    opponent: np.ndarray
    next_done: torch.Tensor
    actions: np.ndarray
    recent: list[float]
    global_step: int


def collect(t: Any, buf: Rollout, loop: Loop, bc_coef: float, temperature: float = 1.0) -> None:
    """One rollout of ``num_steps`` ticks into ``buf`` (``t``: the trainer's pieces); the learner
    draws its moves at ``temperature`` (``pair_policy.draw``)."""
    a, seats, D, n_actions = t.args, t.seats, t.obs_dim, t.n_actions
    P, n_learn, device = a.num_players, seats.n_learn, t.device
    buf.rows, buf.acts, buf.feats = [], [], []
    t_env = t_feat = t_teacher = t_net = t_opp = 0.0
    nertz_col = int(t.features.offsets[O_NERTZ_COUNT])  # what --nertz-bonus reads
    for step in range(a.num_steps):
        flat_obs = loop.obs.reshape(-1, D)[seats.learn_idx]
        flat_masks = loop.masks.reshape(-1, n_actions)[seats.learn_idx]
        buf.obs[step] = torch.from_numpy(flat_obs)
        buf.masks[step] = torch.from_numpy(flat_masks)
        buf.dones[step] = loop.next_done
        if hidden_needed(t):
            assert buf.hidden is not None  # for_trainer made room: a reader reads them
            buf.hidden[step] = hidden_reader(t).hidden_cards(t.envs)
        tf = time.perf_counter()
        rows, acts, feats, choice = t.features.with_choice(flat_obs, flat_masks)
        tt = time.perf_counter()
        if bc_coef > 0:
            labels = choice if t.teacher_in_features else t.teacher.act_batch(flat_obs, flat_masks)
            buf.teacher[step] = torch.from_numpy(labels)
        tn = time.perf_counter()
        t_feat += tt - tf
        t_teacher += tn - tt
        buf.rows.append(rows + step * n_learn)
        buf.acts.append(acts)
        buf.feats.append(feats)
        pre = oracle_pre(t, buf.hidden[step]) if buf.hidden is not None else None
        drawn = draw(t.net, a.sampler, flat_obs, rows, acts, feats, device, pre_add=pre, temperature=temperature,
                     weigh=buf.weights is not None)  # fmt: skip
        action, logprob, value = drawn[:3]
        if buf.weights is not None:
            buf.weights[step] = drawn[3]
        t_net += time.perf_counter() - tn
        buf.actions[step], buf.logprobs[step], buf.values[step] = torch.from_numpy(action), logprob, value
        loop.actions.reshape(-1)[seats.learn_idx] = action
        to = time.perf_counter()
        mixed = seats.mixed  # the other seats of the mixed games
        loop.actions[mixed, 1:] = t.pool.act_games(loop.opponent, loop.obs[mixed, 1:], loop.masks[mixed, 1:], device)
        te = time.perf_counter()
        t_opp += te - to
        if buf.opponent_moves is not None:  # the tick's joint action is whole
            buf.opponent_moves[step] = t.aux_opponents.targets(loop.actions)
        before = loop.obs[..., nertz_col].astype(np.int64) if a.nertz_bonus else None
        loop.obs, loop.masks, rewards, terms, truncs, infos = t.envs.step(loop.actions)
        t_env += time.perf_counter() - te
        done = (terms | truncs).reshape(-1)[seats.learn_idx]
        ended = np.flatnonzero(infos["episode"]["done"])
        if a.win_bonus and len(ended):
            rewards = rewards + a.win_bonus * win_advantage(infos["episode"], ended, P)
        if a.nertz_bonus:
            assert before is not None  # read above with --nertz-bonus
            rewards = rewards + a.nertz_bonus * nertz_cards_out(before, loop.obs, infos, nertz_col)
        buf.rewards[step] = torch.from_numpy(rewards.reshape(-1)[seats.learn_idx].astype(np.float32))
        loop.next_done = torch.from_numpy(done.astype(np.float32))
        if len(ended):
            scores = infos["episode"]["scores"][ended]
            loop.recent.extend(scores[:, 0].tolist())
            mixed_ended = np.isin(seats.mixed, ended)
            t.pool.record(loop.opponent[mixed_ended], infos["episode"]["team_scores"][seats.mixed[mixed_ended]])
            loop.opponent[mixed_ended] = t.pool.draw(int(mixed_ended.sum()))
        loop.global_step += n_learn
    buf.times.update(env=t_env, features=t_feat, teacher=t_teacher, net=t_net, opponents=t_opp)


def nertz_cards_out(before: np.ndarray, obs: np.ndarray, infos: dict[str, Any], column: int) -> np.ndarray:
    """``[num_envs, P]``: the cards that left each seat's Nertz pile this step (R7 counts the ones
    left), from the Nertz counts ``before`` it and after it (``column`` of the observation); a hand
    that ended counts to its ``final_observation``, not the new deal's full pile."""
    after = obs[..., column].astype(np.int64)
    ended = infos["episode"]["done"]
    if ended.any():
        after[ended] = infos["final_observation"][ended][..., column]
    return before - after


def win_advantage(episode: dict[str, np.ndarray], ended: np.ndarray, num_players: int) -> np.ndarray:
    """``[num_envs, P]``: for the games of ``ended`` (whose episodes ended this step) each seat's
    win share of the episode minus the even share (``1/P``; with R8 partners ``1/teams``), 0
    elsewhere. The win share is the evaluation's (``training.stats.win_shares``): the top score
    wins, a tie splits it; with partners the team's (``episode["team_scores"]``, seat ``p`` in
    team ``p % teams``), so both partners get their team's."""
    out = np.zeros(episode["done"].shape + (num_players,), np.float64)
    scores = episode["team_scores"]
    teams = scores.shape[1]
    seat_team = np.arange(num_players) % teams
    for g in ended:
        out[g] = np.asarray(win_shares(scores[g].tolist()))[seat_team] - 1.0 / teams
    return out


def advantages(t: Any, buf: Rollout, loop: Loop) -> tuple[torch.Tensor, torch.Tensor]:
    """Generalized advantage estimation, per (game, seat) trajectory; returns (advantages, returns).
    With a central critic (``training.central_critic``) over its values, else the network's."""
    a, seats = t.args, t.seats
    with torch.no_grad():
        flat_obs = torch.from_numpy(loop.obs.reshape(-1, t.obs_dim)[seats.learn_idx])
        flat_masks = loop.masks.reshape(-1, t.n_actions)[seats.learn_idx]
        hidden = hidden_reader(t).hidden_cards(t.envs) if hidden_needed(t) else None  # read once
        pre = None if hidden is None else oracle_pre(t, hidden)
        if t.critic is not None:
            assert buf.hidden is not None  # the central critic reads the hidden cards (for_trainer)
            values = t.critic.values(t.net, buf.obs.reshape(t.batch_size, -1), buf.hidden.reshape(t.batch_size, -1))
            values = values.reshape(buf.values.shape)
            next_value = t.critic.values(t.net, flat_obs, hidden)
        elif pre is not None:
            values = buf.values
            next_value = t.net.value_head(t.net.summary(flat_obs.to(t.device), pre)).squeeze(-1)
        else:
            values = buf.values
            _, next_value = t.net(flat_obs.to(t.device), torch.from_numpy(flat_masks).to(t.device))
        next_value = next_value.cpu()
        adv = torch.zeros_like(buf.rewards)
        last = torch.zeros(seats.n_learn)
        for step in reversed(range(a.num_steps)):
            not_done = 1.0 - (loop.next_done if step == a.num_steps - 1 else buf.dones[step + 1])
            nv = next_value if step == a.num_steps - 1 else values[step + 1]
            delta = buf.rewards[step] + a.gamma * nv * not_done - values[step]
            last = delta + a.gamma * a.gae_lambda * not_done * last
            adv[step] = last
        return adv, adv + values


@dataclass
class Batch:
    """An update's rollout, flattened: each row's observation, move played, its log-probability,
    advantage and return, and the legal (row, move) pairs with their features; ``played`` and
    ``taught`` are each row's pair of the move played and of the teacher's label (None without
    the pull)."""

    obs: torch.Tensor
    logprobs: torch.Tensor
    adv: torch.Tensor
    ret: torch.Tensor
    acts: np.ndarray
    feats: torch.Tensor
    n_pairs: np.ndarray
    first_pair: np.ndarray
    played: np.ndarray
    taught: np.ndarray | None
    hidden: torch.Tensor | None = None  # ``[batch, players * 156]`` with a central critic or oracle
    weights: torch.Tensor | None = None  # ``[batch]``: importance weights (--explore-correction)
    opponent_moves: torch.Tensor | None = None  # ``[batch, P - 1]``: with --aux-opponents

    @classmethod
    def of(cls, t: Any, buf: Rollout, adv: torch.Tensor, ret: torch.Tensor, bc_coef: float) -> Batch:
        batch_size = t.batch_size
        all_rows, all_acts = np.concatenate(buf.rows), np.concatenate(buf.acts)
        n_pairs = np.bincount(all_rows, minlength=batch_size)
        taught = pair_of(all_rows, all_acts, buf.teacher.reshape(-1).numpy()) if bc_coef > 0 else None
        return cls(buf.obs.reshape(batch_size, t.obs_dim), buf.logprobs.reshape(-1), adv.reshape(-1),
                   ret.reshape(-1), all_acts, torch.from_numpy(np.concatenate(buf.feats)), n_pairs,
                   np.cumsum(n_pairs) - n_pairs, pair_of(all_rows, all_acts, buf.actions.reshape(-1).numpy()),
                   taught, None if buf.hidden is None else buf.hidden.reshape(batch_size, -1),
                   None if buf.weights is None else buf.weights.reshape(-1),
                   None if buf.opponent_moves is None else buf.opponent_moves.reshape(batch_size, -1))  # fmt: skip


def update(t: Any, buf: Rollout, adv: torch.Tensor, ret: torch.Tensor, cloning: bool, bc_coef: float) -> dict:
    """The update: PPO, or cloning the teacher, or both (see train_selfplay's module doc), then
    the hidden-card critic's fit where the trainer has one. Returns the last minibatch's losses
    and the epoch statistics for logging. The softmax runs over each row's legal moves only (the
    rollout's pairs), never over the whole catalogue."""
    a, batch_size = t.args, t.batch_size
    batch = Batch.of(t, buf, adv, ret, bc_coef)
    stats: dict[str, Any] = {"clipfracs": [], "agreement": [], "approx_kl": torch.tensor(0.0)}
    stats["pg_loss"] = stats["bc_loss"] = torch.tensor(0.0)
    for _epoch in range(a.update_epochs):
        order = torch.randperm(batch_size)
        for start in range(0, batch_size, t.minibatch):
            loss = total_loss(loss_terms(t, batch, order[start : start + t.minibatch], cloning, bc_coef, stats))
            t.optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(t.parameters(), a.max_grad_norm)
            t.optimizer.step()
        if a.target_kl and stats["approx_kl"] > a.target_kl:
            break
    if t.critic is not None:  # --central-critic: fitted at --critic-lr, else at the policy's rate of this update
        lr = a.critic_lr or t.optimizer.param_groups[0]["lr"]
        stats["central"] = t.critic.fit(t.net, buf, ret, a.update_epochs, a.num_minibatches, lr)
    return stats


def loss_terms(t: Any, batch: Batch, mb_index: torch.Tensor, cloning: bool, bc_coef: float,
               stats: dict) -> dict[str, torch.Tensor]:  # fmt: skip
    """The weighted terms of one minibatch's loss (rows ``mb_index`` of ``batch``): ``value``
    (``--vf-coef`` x the value loss), ``teacher`` (``bc_coef`` x the cross-entropy to the
    teacher's labels, when ``bc_coef > 0``), ``aux`` and ``aux_opponents`` (``--aux-hidden``,
    ``--aux-opponents`` x that auxiliary loss, with the flag), and, unless ``cloning``, ``policy``
    (PPO's clipped loss) and ``entropy`` (``--ent-coef`` x the mean entropy); ``total_loss`` sums
    them. Records the minibatch's statistics in ``stats``."""
    a, device, aux = t.args, t.device, t.aux
    mb = mb_index.numpy()
    # The pairs of the minibatch's rows, renumbered 0 .. len(mb) - 1.
    counts = batch.n_pairs[mb]
    offset = np.cumsum(counts) - counts
    mb_rows = torch.from_numpy(np.repeat(np.arange(len(mb)), counts)).to(device)
    pairs = np.repeat(batch.first_pair[mb] - offset, counts) + np.arange(int(counts.sum()))
    # index_select copies whole rows (an int8 observation row is 1631 bytes): about 20x
    # faster than advanced indexing, which copies element by element; the same tensors.
    hidden = None if batch.hidden is None else batch.hidden.index_select(0, mb_index)
    obs, acts = batch.obs.index_select(0, mb_index), batch.acts[pairs]
    if t.relabel is not None:  # --relabel: the minibatch's tables as one of the game's symmetries relabels them
        columns, moved = t.relabel.draw()
        obs, acts = obs.index_select(1, columns), moved[acts]
    scores, value, *summary = t.net.pair_scores(
        obs.to(device),
        mb_rows,
        torch.from_numpy(acts).to(device),
        batch.feats.index_select(0, torch.from_numpy(pairs)).to(device),
        None if hidden is None else oracle_pre(t, hidden),
        with_summary=aux is not None or batch.opponent_moves is not None,
    )
    logp, entropy = pair_log_softmax(scores, mb_rows, len(mb))
    stats["entropy"] = entropy
    stats["v_loss"] = v_loss = 0.5 * ((value - batch.ret[mb].to(device)) ** 2).mean()
    terms = {"value": a.vf_coef * v_loss}
    if aux is not None:
        stats["aux_loss"] = aux_loss = aux.loss(summary[0], hidden)
        terms["aux"] = a.aux_hidden * aux_loss
    if batch.opponent_moves is not None:
        stats["aux_opponents_loss"] = moves_loss = t.aux_opponents.loss(summary[0], batch.opponent_moves[mb_index])
        terms["aux_opponents"] = a.aux_opponents * moves_loss
    if bc_coef > 0:
        assert batch.taught is not None  # Batch.of labels the pairs with bc_coef > 0 (the same)
        target = torch.from_numpy(offset + batch.taught[mb] - batch.first_pair[mb]).to(device)
        stats["bc_loss"] = bc_loss = -logp[target].mean()
        terms["teacher"] = bc_coef * bc_loss
        best = torch.zeros(len(mb), device=device)
        best = best.scatter_reduce_(0, mb_rows, logp.detach(), "amax", include_self=False)
        stats["agreement"].append((logp.detach()[target] >= best).float().mean().item())
    if not cloning:
        chosen = torch.from_numpy(offset + batch.played[mb] - batch.first_pair[mb]).to(device)
        weights = None if batch.weights is None else batch.weights[mb].to(device)
        terms["policy"] = _policy_loss(a, logp[chosen], batch.logprobs[mb].to(device), batch.adv[mb].to(device), stats,
                                       weights)  # fmt: skip
        terms["entropy"] = a.ent_coef * entropy.mean()
    return terms


def total_loss(terms: dict[str, torch.Tensor]) -> torch.Tensor:
    """The loss the update steps on, from ``loss_terms``: ``value + teacher + aux + aux_opponents +
    policy - entropy``."""
    loss = terms["value"]
    for term in ("teacher", "aux", "aux_opponents"):
        if term in terms:
            loss = loss + terms[term]
    if "policy" in terms:
        loss = loss + terms["policy"] - terms["entropy"]
    return loss


def _policy_loss(a: Any, newlogprob, old_logprobs, adv, stats: dict, weights=None) -> torch.Tensor:
    """PPO's clipped policy loss; with ``weights`` (each move's importance weight, the policy's
    probability at the draw over the tempered draw's), decoupled PPO's: the clipped term of each
    move, the ratio taken against the policy at the draw, times its weight."""
    logratio = newlogprob - old_logprobs
    ratio = logratio.exp()
    with torch.no_grad():
        stats["approx_kl"] = ((ratio - 1) - logratio).mean()
        stats["clipfracs"].append(((ratio - 1.0).abs() > a.clip_coef).float().mean().item())
    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    clipped = ratio.clamp(1 - a.clip_coef, 1 + a.clip_coef)
    per_move = torch.max(-adv * ratio, -adv * clipped)
    stats["pg_loss"] = pg_loss = (per_move if weights is None else weights * per_move).mean()
    return pg_loss
