"""Trained policies as agents: the networks the self-play trainer uses, and loaders for both
checkpoint formats (``train_selfplay.py``'s ``.pt`` and sb3-contrib MaskablePPO's ``.zip``).

Two networks: ``build_scorer`` (format ``nertz-selfplay-v2``, what the trainer builds) scores each legal
move from its own features (``agents.features``) and a summary of the whole observation;
``build_network`` (``nertz-selfplay-v1``, still loadable) is a flat MLP with a fixed 181-way head.

Three policies ship in ``agents/policies/`` (its README gives how each was trained and measured):
``ppo`` (``ppo.pt``) is the best *search-free* one, whose features read only the observation, each
legal move's immediate effect (among them the ``heuristic``'s value of the table the move leaves,
a depth-1 look-ahead: no move after it) and what the opponents' cards in reach are about to free,
so a decision is one network forward pass; ``ppo-league`` (``ppo_league.pt``), the former ``ppo``,
without the opponent columns, is the policy ``rollout`` searches with; ``ppo-search``
(``ppo_search.pt``) also reads a depth-3 ``heuristic`` search of every legal move, so each of its
decisions runs that search first. The file records its look-ahead depth (``"lookahead"``), and each
name refuses a file of the other kind (``ppo`` and ``ppo-league`` read at most depth 1,
``IMMEDIATE_EFFECT``). It also records the feature groups trained zeroed (``"drop_features"``,
``train_selfplay --drop-features``; none in older files): the loaded policy plays with them zeroed too.

>>> ppo = agents.make("ppo"); mine = agents.make("policy", path="runs/x/policy.pt")  # doctest: +SKIP

torch is imported here and in ``agents._scorer`` (the move-scoring network, imported when one is built)
only, so the scripted agents and the envs never need it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from nertz_env.actions import ACTION_CALL
from nertz_env.agents import _policy_file, register
from nertz_env.agents._policy_file import FORMAT, FORMATS, INPUT_FLAGS
from nertz_env.agents.base import Agent, sample_rows
from nertz_env.config import NertzConfig
from nertz_env.layout import ObservationLayout

SHIPPED = Path(__file__).resolve().parent / "policies" / "ppo.pt"  # search-free
SHIPPED_SEARCH = SHIPPED.with_name("ppo_search.pt")  # a depth-3 search at every decision
# The deepest look-ahead a search-free policy reads: depth 1 plays each legal move once and scores
# the table it leaves, the move's immediate effect, with no move after it.
IMMEDIATE_EFFECT = 1
# The shipped policies by agent name (the module doc): their file and whether their features search.
SHIPPED_POLICIES = {"ppo": (SHIPPED, False), "ppo-league": (SHIPPED.with_name("ppo_league.pt"), False),
                    "ppo-search": (SHIPPED_SEARCH, True)}  # fmt: skip
# Who decides R4.6's call: the network ("policy"), or the heuristic's rules of that name.
CALL_RULES = ("policy", "ahead", "safe", "now")


def _torch():
    try:
        import torch
    except ImportError as exc:  # pragma: no cover - depends on the extra
        raise ModuleNotFoundError("trained policies need torch: pip install 'nertz-env[training]'") from exc
    return torch


def build_network(obs_dim: int, n_actions: int, high: np.ndarray, hidden: tuple[int, ...] = (256, 256)):
    """The actor-critic MLP: observations scaled by the layout's ``high`` into [0, 1]."""
    torch = _torch()
    from torch import nn

    from nertz_env.agents._scorer import orthogonal

    class ActorCritic(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("scale", torch.as_tensor(1.0 / np.maximum(high, 1), dtype=torch.float32))
            layers: list[nn.Module] = []
            size = obs_dim
            for h in hidden:
                layers += [nn.Linear(size, h), nn.ReLU(inplace=True)]
                size = h
            self.body = nn.Sequential(*layers)
            self.policy_head = nn.Linear(size, n_actions)
            self.value_head = nn.Linear(size, 1)
            orthogonal(np.sqrt(2), *self.body)
            orthogonal(0.01, self.policy_head)
            orthogonal(1.0, self.value_head)

        def forward(self, obs, mask):
            """Masked logits (illegal actions at a large negative number) and values."""
            z = self.body(obs.float() * self.scale)
            logits = self.policy_head(z).masked_fill(mask == 0, -1e8)
            return logits, self.value_head(z).squeeze(-1)

    return ActorCritic()


def build_scorer(
    config: NertzConfig,
    hidden: tuple[int, ...] = (128, 128),
    action_hidden: int = 64,
    lookahead: bool | int | None = True,
    drop_features: tuple[str, ...] = (),
    cycle: bool = False,
    opponent: bool = False,
    identity: bool = False,
    follow: bool = False,
    afterstate: bool = False,
    move_set: bool = False,
    race: bool = False,
):
    """The move-scoring actor-critic: ``logit[a] = head(relu(state(obs) + move(features[a]) + embed[a]))``
    over the legal moves only, the value from the state summary alone. With ``afterstate``, also
    ``+ after(state(obs after a))``: the same summary of the layout the move leads to
    (``agents._afterstate``), one more summary per legal move. With ``move_set``, also
    ``+ set_in(mean and max of relu(move(features[b]) + embed[b]) over the legal moves b)``: each
    move's score reads which other moves are legal (``agents._scorer.legal_move_summary``).

    ``forward(obs, mask)`` computes the features itself (numba, on the CPU), so a loaded policy plays
    from observations; the trainer calls ``score(obs, rows, actions, feats)`` with its rollouts' pairs.
    ``lookahead`` is the depth of the ``heuristic``'s look-ahead in the features (``True``: its default
    depth; ``False`` or 0: none). ``drop_features`` names ``agents.features.FEATURE_GROUPS`` zeroed in
    every feature vector (an ablation); ``cycle`` adds the stock-cycle columns (``CYCLE_COLUMNS``),
    ``opponent`` the opponent ones (``OPPONENT_COLUMNS``), ``identity`` the moved card's, ``follow`` the
    follow-ups', ``race`` the race columns (``agents._race.RACE_COLUMNS``)."""
    _torch()  # the error that names the extra, before the module that needs torch
    from nertz_env.agents._scorer import MoveScorer

    flags = (cycle, opponent, identity, follow, afterstate, move_set, race)
    return MoveScorer(config, hidden, action_hidden, lookahead, drop_features, *flags)


def plain(value: Any, where: str) -> Any:
    """``value`` as plain Python data (dicts with string keys, lists, str, int, float, bool, None;
    numpy scalars and arrays converted), what ``load_network`` unpickles without running code.
    Anything else is refused, naming where it sits."""
    if isinstance(value, np.ndarray | np.generic):
        return value.tolist()
    if isinstance(value, Path):
        return str(value)
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, list | tuple):
        return [plain(v, f"{where}[{k}]") for k, v in enumerate(value)]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {k: plain(v, f"{where}[{k!r}]") for k, v in value.items()}
    raise TypeError(f"{where} is a {type(value).__name__}: a policy file holds plain values only "
                    "(dicts with string keys, lists, str, int, float, bool, None, numpy values)")


def save_policy(path: str | Path, network, config: NertzConfig, hidden: tuple[int, ...], extra: dict | None = None,
                action_hidden: int | None = None):  # fmt: skip
    """Write a small, self-describing policy file (atomically: a temporary file, then rename).
    ``action_hidden`` given: a ``build_scorer`` network (v2), else a ``build_network`` MLP (v1)."""
    torch = _torch()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    cfg = config.to_dict()
    if cfg["speed"] is not None:
        cfg["speed"] = list(cfg["speed"])
    blob = {
        "format": FORMAT if action_hidden is not None else FORMATS[0],
        "config": cfg,
        "hidden": list(hidden),
        "action_hidden": action_hidden,
        "lookahead": getattr(network, "lookahead", None),
        "drop_features": list(getattr(network, "drop_features", ())),
        **{name: bool(getattr(network, name, False)) for name in INPUT_FLAGS},
        "state_dict": {k: v.detach().cpu() for k, v in network.state_dict().items()},
        "extra": plain(extra or {}, "extra"),
    }
    tmp = path.with_suffix(path.suffix + ".tmp")
    try:
        torch.save(blob, tmp)
    except BaseException:
        tmp.unlink(missing_ok=True)  # a full disk leaves no partial file
        raise
    tmp.replace(path)
    return path


_TORCH_BOILERPLATE = ("Weights only load failed", "Check the documentation", "(1)", "(2)", "Please file an issue")


def _not_a_policy(path: str | Path, error: Exception) -> str:
    """Why ``path`` is refused, in one line (torch's own message runs to several)."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    refused = next((line for line in lines if "GLOBAL" in line), None)
    if refused is not None:
        return (f"{path} holds more than tensors and plain values, which a policy file saved by this project "
                f"never does (a training checkpoint? play its policy.pt); it is not unpickled, as that could run "
                f"code: {refused.split(' Please use', 1)[0]}")  # fmt: skip
    reason = next((line for line in lines if not line.startswith(_TORCH_BOILERPLATE)), None) or repr(error)
    return f"{path} is not a policy file saved by this project (a .pt policy): {reason}"


def load_network(path: str | Path):
    """``(network, config, blob)`` from a policy file written by this project (``save_policy``),
    unpickled as tensors and plain values only (``torch.load(weights_only=True)``), so a policy file
    from anyone can be loaded without running code from it. Its keys, rules, settings and weights are
    checked before they are used (``agents._policy_file``): a damaged file is one ``ValueError`` naming it."""
    torch = _torch()
    try:  # tensors and plain values only: unpickling anything else could run code from the file
        blob = torch.load(Path(path), map_location="cpu", weights_only=True)
    except Exception as e:  # torch's restricted unpickler raises many kinds on a file that is not a policy
        raise ValueError(_not_a_policy(path, e)) from e
    if not isinstance(blob, dict) or blob.get("format") not in FORMATS:
        raise ValueError(f"{path} is not a nertz self-play policy ({FORMATS}); MaskablePPO files end in .zip")
    _policy_file.check_keys(path, blob)  # each part checked before a network is built from it (agents._policy_file)
    config = _policy_file.read_config(path, blob["config"])
    settings = _policy_file.read_settings(path, blob)
    if blob["format"] == FORMAT:  # files from before a setting drop no features and lack the flag
        assert settings.action_hidden is not None  # read_settings requires it of this format
        net = build_scorer(config, settings.hidden, settings.action_hidden, settings.lookahead,
                           settings.drop_features, *settings.flags)  # fmt: skip
    else:
        from nertz_env.actions import ActionCatalogue

        layout = ObservationLayout(config)
        high = layout.high.astype(np.float32)
        net = build_network(layout.size, len(ActionCatalogue(config)), high, settings.hidden)
    _policy_file.check_weights(path, net, blob["state_dict"])
    net.load_state_dict(blob["state_dict"])
    net.eval()
    return net, config, blob


class PolicyAgent(Agent):
    """A trained policy behind the agent protocol. ``greedy=True`` (default) plays the most likely
    legal action; ``greedy=False`` samples from the masked policy with the agent's seed. ``call``
    (a ``.pt`` policy only): ``"policy"`` (default), or a ``heuristic`` rule that decides R4.6's call."""

    name = "policy"
    _net: Any  # the network (its torch classes are built when a file is loaded); None for a .zip

    def __init__(self, path: str | Path, config: NertzConfig | None = None, seed: int = 0, greedy: bool = True,
                 call: str = "policy"):  # fmt: skip
        if not isinstance(path, str | os.PathLike):
            raise ValueError(f"invalid path={path!r}: accepted the path (a str or os.PathLike) of a .pt policy from "
                             "train_selfplay.py or a .zip from train_sb3.py")  # fmt: skip
        path = Path(path)
        if not isinstance(greedy, (bool, np.bool_)):
            raise ValueError(f"invalid greedy={greedy!r}: accepted true or false")
        if not isinstance(call, str) or call not in CALL_RULES or (call != "policy" and path.suffix == ".zip"):
            raise ValueError(f"invalid call={call!r} for {path.name}: accepted {', '.join(CALL_RULES)} (.pt only)")
        if not path.exists():
            raise FileNotFoundError(f"no policy file at {path}")
        if path.suffix == ".zip":
            self._sb3 = _policy_file.load_maskable_ppo(path)
            self._net, trained_on = None, None  # a .zip keeps its spaces only (check_zip_fits below)
        else:
            self._sb3 = None
            self._net, trained_on, _ = load_network(path)
        config = config if config is not None else trained_on
        super().__init__(config=config, seed=seed)
        if self._sb3 is not None:
            _policy_file.check_zip_fits(path, self._sb3, self.config, self.obs_size, len(self.catalogue))
        elif trained_on is not None:  # refused under rules of other input sizes, a warning under other play
            _policy_file.check_rules(path, trained_on, self.config)  # self.config is config, given or trained_on
        self.path = path
        self.greedy = bool(greedy)
        # The depth of the heuristic search its features run at every decision (0: none).
        self.lookahead = int(getattr(self._net, "lookahead", 0) or 0)
        # The feature groups it was trained and plays with zeroed (agents.features.FEATURE_GROUPS).
        self.drop_features = tuple(getattr(self._net, "drop_features", ()))
        self.call = call  # "ahead": R4.6's call by the heuristic's rule, not the network (an ablation)
        self._caller = None if call == "policy" else _heuristic(self.config, call)

    def _choose(self, obs: np.ndarray, masks: np.ndarray, out: np.ndarray) -> None:
        torch = _torch()
        if self._sb3 is not None:
            if self.greedy:
                out[:] = self._sb3.predict(obs, action_masks=masks.astype(bool), deterministic=True)[0]
                return
            with torch.no_grad():
                policy = self._sb3.policy
                dist = policy.get_distribution(policy.obs_to_tensor(obs)[0], action_masks=masks.astype(bool))
                probs = dist.distribution.probs.cpu().numpy()
        else:
            logits = self._scores(obs, masks)[0]
            if self.greedy:
                out[:] = logits.argmax(-1).numpy()
                return
            probs = torch.softmax(logits.double(), -1).numpy()
        # Sampled with the agent's seed (row_uniforms: per decision key in the arena).
        out[:] = sample_rows(probs, masks, self.row_uniforms(len(out)))

    def scores(self, obs: np.ndarray, masks: np.ndarray):
        """The masked logits ``[n, N]`` and values ``[n]`` (torch tensors) of rows of observations
        and masks (``.pt`` only; checked as ``act_batch`` checks them), R4.6's call by the ``call``
        rule when one is set. A value is what the critic expects of the rest of the hand in the
        reward it was trained on (``relative`` for ``ppo``)."""
        if self._net is None:
            raise ValueError(f"{self.path.name}: scores are read from a .pt policy's network, not a .zip")
        return self._scores(*self.checked_rows(obs, masks))

    def _scores(self, obs: np.ndarray, masks: np.ndarray):
        """``scores`` of rows already checked or written by the engine for this config."""
        torch = _torch()
        with torch.no_grad():
            logits, values = self._net(torch.from_numpy(obs), torch.from_numpy(masks))
        if self._caller is not None:  # CALL exactly where the rule calls
            calls = torch.from_numpy(self._caller._calls(obs, masks))
            logits[:, ACTION_CALL] = -torch.inf
            logits[calls] = -torch.inf
            logits[calls, ACTION_CALL] = 0.0
        return logits, values


class EnsembleAgent(Agent):
    """Several trained ``.pt`` policies voting as one: each legal move scored by the mean of the
    members' log-probabilities (each a softmax over the legal moves), the best played (``greedy``)
    or one drawn from their normalised product with the agent's seed. A decision costs a forward
    pass per member, and the move features once for each set of members that read the same ones: a
    baseline for what ensembling training seeds adds (and distilling them could give one network),
    not a search-free single network."""

    name = "ensemble"

    def __init__(self, paths: Sequence[str | Path], config: NertzConfig | None = None, seed: int = 0,
                 greedy: bool = True):  # fmt: skip
        if isinstance(paths, str) or not isinstance(paths, Sequence) or not all(
                isinstance(p, str | os.PathLike) for p in paths):  # fmt: skip
            raise ValueError(f"invalid paths={paths!r}: accepted a list of paths (str or os.PathLike) of .pt policies")
        policy_paths = [Path(p) for p in paths]
        if not policy_paths or any(p.suffix != ".pt" for p in policy_paths):
            raise ValueError(f"invalid paths={'+'.join(map(str, policy_paths))!r}: accepted one or more .pt policies "
                             "joined by '+' (a train_selfplay.py policy.pt each)")  # fmt: skip
        first = PolicyAgent(policy_paths[0], config=config, seed=seed, greedy=greedy)  # the rules: given, or its own
        self.members = [first] + [PolicyAgent(p, config=first.config, seed=seed) for p in policy_paths[1:]]
        super().__init__(config=first.config, seed=seed)
        self.greedy = self.members[0].greedy

    def _choose(self, obs: np.ndarray, masks: np.ndarray, out: np.ndarray) -> None:
        torch = _torch()
        logits = self._member_logits(obs, masks)
        mean = sum(torch.log_softmax(member.double(), -1) for member in logits) / len(logits)
        if self.greedy:
            out[:] = mean.argmax(-1).numpy()
            return
        out[:] = sample_rows(torch.softmax(mean, -1).numpy(), masks, self.row_uniforms(len(out)))

    def member_logits(self, obs: np.ndarray, masks: np.ndarray) -> list:
        """Each member's masked logits, as its ``PolicyAgent.scores`` gives them (bit for bit), the
        move features computed once for all members that read the same ones (``_feature_key``);
        the rows are checked as ``act_batch`` checks them."""
        return self._member_logits(*self.checked_rows(obs, masks))

    def _member_logits(self, obs: np.ndarray, masks: np.ndarray) -> list:
        torch = _torch()
        shared: dict[tuple, tuple] = {}
        logits = []
        for member in self.members:
            key = _feature_key(member)
            if key is None:
                logits.append(member._scores(obs, masks)[0])
                continue
            if key not in shared:
                shared[key] = tuple(map(torch.from_numpy, member._net.features(obs, masks)))
            with torch.no_grad():
                logits.append(member._net.score(torch.from_numpy(obs), *shared[key])[0])
        return logits


def _feature_key(member: PolicyAgent) -> tuple | None:
    """What a move-scoring member's features depend on (its rules and feature flags); ``None`` for
    a member that scores otherwise (a flat ``nertz-selfplay-v1`` network, or a ``call`` rule)."""
    features = getattr(member._net, "features", None)
    if features is None or member._caller is not None:
        return None
    return (features.config, features.depth, features.drop_features, features.cycle, features.opponent,
            features.identity, features.follow, features.race)  # fmt: skip


def _ensemble(config: NertzConfig | None = None, seed: int = 0, paths: str | None = None,
              greedy: bool = True) -> EnsembleAgent:  # fmt: skip
    if not isinstance(paths, str) or not paths.strip():
        raise ValueError("agent 'ensemble' needs paths=A.pt+B.pt+... (train_selfplay.py policies, joined by '+')")
    return EnsembleAgent(paths.split("+"), config=config, seed=seed, greedy=greedy)


def _heuristic(config: NertzConfig, call: str):
    from nertz_env.agents.heuristic import HeuristicAgent

    return HeuristicAgent(config, depth=1, call=call)


# The factories name PolicyAgent's options, so agents.make refuses any other by name (check_options).
def _policy(config: NertzConfig | None = None, seed: int = 0, path: str | None = None, greedy: bool = True,
            call: str = "policy") -> PolicyAgent:  # fmt: skip
    if path is None or (isinstance(path, str) and not path.strip()):
        raise ValueError("agent 'policy' needs path=... (a .pt from train_selfplay.py or a .zip from train_sb3.py)")
    return PolicyAgent(path, config=config, seed=seed, greedy=greedy, call=call)


def _shipped(name: str):
    """The factory of a shipped policy: its file, checked to be of the kind its name promises."""
    path, searches = SHIPPED_POLICIES[name]

    def factory(config: NertzConfig | None = None, seed: int = 0, greedy: bool = True, call: str = "policy"
                ) -> PolicyAgent:  # fmt: skip
        if not path.exists():
            raise FileNotFoundError(f"the shipped policy {path} is missing; train one with training/train_selfplay.py")
        agent = PolicyAgent(path, config=config, seed=seed, greedy=greedy, call=call)
        searching = agent.lookahead > IMMEDIATE_EFFECT
        if searching != searches:
            kind = f"runs a depth-{agent.lookahead} search at every decision" if searching else "is search-free"
            raise ValueError(
                f"{path} {kind}, but {name!r} names the {'search-using' if searches else 'search-free'} policy: "
                "ship a policy trained with --lookahead-features false, or --lookahead-depth 1 (each move's "
                "immediate effect), as ppo.pt ('ppo') and one that searches deeper as ppo_search.pt ('ppo-search')"
            )
        return agent

    return factory


register("policy", _policy, overwrite=True)
register("ensemble", _ensemble, overwrite=True)
for _name in SHIPPED_POLICIES:
    register(_name, _shipped(_name), overwrite=True)
