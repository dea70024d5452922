"""What a policy file must hold, checked before anything is built from it (``agents.policy.load_network``
and the ``.zip`` loader): its keys, the rules it was trained for (``NertzConfig``'s own checks), its
network's sizes and settings, and each weight's name, shape, dtype and finiteness. A damaged or
hand-edited file is one ``ValueError`` naming the file, what is wrong and what is accepted, never an
error from deep inside torch, and never a policy that loads and then plays only WAIT (NaN weights).

torch and the feature modules are imported by the functions that need them (a file is being loaded),
so importing ``agents.policy`` stays light.
"""

from __future__ import annotations

import dataclasses
import pickle
import warnings
import zipfile
from pathlib import Path
from typing import Any

from nertz_env.config import NertzConfig, option_names
from nertz_env.options import INPUT_RULES, PLAY_RULES, rules_that_differ

FORMAT = "nertz-selfplay-v2"
FORMATS = ("nertz-selfplay-v1", FORMAT)
# What a saved policy reads besides the observation, each a flag of build_scorer after drop_features: the
# ActionFeatures column flags, the afterstate summaries, the legal-move summary (a file written before a flag
# reads as without it).
INPUT_FLAGS = ("cycle", "opponent", "identity", "follow", "afterstate", "move_set", "race")
# The keys of a policy file (agents.policy.save_policy): those every file holds, those a
# nertz-selfplay-v2 file adds, and those a file written before their setting existed lacks.
REQUIRED_KEYS = ("format", "config", "hidden", "state_dict")
SCORER_KEYS = ("action_hidden",)
OPTIONAL_KEYS = ("action_hidden", "lookahead", "drop_features", *INPUT_FLAGS, "extra")


@dataclasses.dataclass(frozen=True)
class PolicySettings:
    """What ``build_scorer`` (or, with ``action_hidden`` None, ``build_network``) is called with."""

    hidden: tuple[int, ...]
    action_hidden: int | None
    lookahead: bool | int | None
    drop_features: tuple[str, ...]
    flags: tuple[bool, ...]  # INPUT_FLAGS, in order


def _refuse(path: Path | str, problem: str) -> ValueError:
    return ValueError(f"{path} is not a usable policy file: {problem}")


def _is_size(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def check_keys(path: Path | str, blob: dict) -> None:
    """Every key the file's format needs is there, and none other."""
    required = REQUIRED_KEYS + (SCORER_KEYS if blob["format"] == FORMAT else ())
    missing = [key for key in required if key not in blob]
    if missing:
        optional = [key for key in OPTIONAL_KEYS if key not in required]
        raise _refuse(path, f"it lacks {', '.join(map(repr, missing))}; accepted a {blob['format']} file holding "
                            f"{', '.join(required)} (and optionally {', '.join(optional)})")  # fmt: skip
    unknown = sorted(str(key) for key in blob if key not in REQUIRED_KEYS + OPTIONAL_KEYS)
    if unknown:
        raise _refuse(path, f"unknown key(s) {', '.join(map(repr, unknown))}; accepted: "
                            f"{', '.join(REQUIRED_KEYS + OPTIONAL_KEYS)}")  # fmt: skip
    if not isinstance(blob.get("extra", {}), dict):
        raise _refuse(path, f"'extra' is a {type(blob['extra']).__name__}; accepted a dict")
    weights = blob["state_dict"]
    if not isinstance(weights, dict) or not all(isinstance(name, str) for name in weights):
        raise _refuse(path, f"'state_dict' is a {type(weights).__name__}; accepted a dict of weight names to tensors")


def read_config(path: Path | str, saved: Any) -> NertzConfig:
    """The rules a file was trained for, judged by ``NertzConfig``'s own checks."""
    if not isinstance(saved, dict) or not all(isinstance(key, str) for key in saved):
        raise _refuse(path, f"'config' is a {type(saved).__name__}; accepted a dict of NertzConfig options")
    known = option_names()
    unknown = sorted(set(saved) - set(known))
    if unknown:
        raise _refuse(path, f"'config' holds unknown rule option(s) {', '.join(unknown)}; known: {', '.join(known)}")
    options = dict(saved)
    if isinstance(options.get("speed"), list):
        options["speed"] = tuple(options["speed"])
    try:
        return NertzConfig(**options)
    except (ValueError, TypeError) as e:
        raise _refuse(path, f"'config' is not valid rules: {e}") from e


def read_settings(path: Path | str, blob: dict) -> PolicySettings:
    """The network settings of a file whose keys ``check_keys`` passed, each checked, and the layer
    sizes checked against the file's own weights (so a wrong size never builds a huge network)."""
    from nertz_env.agents._search import lookahead_depth  # imported with the network it describes
    from nertz_env.agents.features import feature_groups

    scorer = blob["format"] == FORMAT
    hidden, action_hidden = blob["hidden"], blob.get("action_hidden")
    if not isinstance(hidden, list | tuple) or not all(map(_is_size, hidden)) or (scorer and not hidden):
        raise _refuse(path, f"hidden={hidden!r}; accepted a list of positive integers, the width of each layer "
                            f"({'at least one' if scorer else 'none for a linear network'})")  # fmt: skip
    if scorer and not _is_size(action_hidden):
        raise _refuse(path, f"action_hidden={action_hidden!r}; accepted a positive integer (the move layers' width)")
    weights = blob["state_dict"]
    widths = [(f"hidden[{i}]", h, f"body.{2 * i}.weight", 0) for i, h in enumerate(hidden)]
    for what, width, name, axis in widths + ([("action_hidden", action_hidden, "embed.weight", 1)] if scorer else []):
        shape = getattr(weights.get(name), "shape", None)
        if shape is None or len(shape) != 2 or shape[axis] != width:
            held = f"shape {list(shape)}" if shape is not None else "missing"
            raise _refuse(path, f"{what}={width} disagrees with state_dict[{name!r}] ({held}); accepted the sizes "
                                "of the weights it holds")  # fmt: skip
    lookahead, dropped = blob.get("lookahead"), blob.get("drop_features")
    flags = tuple(blob.get(name) for name in INPUT_FLAGS)
    for name, flag in zip(INPUT_FLAGS, flags, strict=True):
        if flag is not None and not isinstance(flag, bool):
            raise _refuse(path, f"{name}={flag!r}; accepted true or false")
    if dropped is not None and (not isinstance(dropped, list | tuple) or not all(isinstance(g, str) for g in dropped)):
        raise _refuse(path, f"drop_features={dropped!r}; accepted a list of feature group names")
    if not scorer:
        if action_hidden is not None or lookahead is not None or dropped or any(flags):
            raise _refuse(path, f"a {blob['format']} network reads no move features, yet the file sets "
                                "action_hidden, lookahead, drop_features or a feature flag; accepted none")  # fmt: skip
        return PolicySettings(tuple(hidden), None, None, (), (False,) * len(INPUT_FLAGS))
    try:
        lookahead_depth(lookahead, 0)
        dropped = feature_groups(dropped or ())
    except ValueError as e:
        raise _refuse(path, str(e)) from e
    return PolicySettings(tuple(hidden), action_hidden, lookahead, dropped, tuple(map(bool, flags)))


def check_weights(path: Path | str, network, weights: dict) -> None:
    """``weights`` are exactly those of ``network`` (the one the file's settings describe, freshly
    built): the same names, shapes and dtypes, and finite numbers."""
    import torch

    expected = network.state_dict()
    missing, unknown = sorted(set(expected) - set(weights)), sorted(set(weights) - set(expected))
    if missing or unknown:
        said = [f"lacks {', '.join(missing)}"] * bool(missing) + [f"has unknown {', '.join(unknown)}"] * bool(unknown)
        raise _refuse(path, f"its state_dict {' and '.join(said)}; accepted the weights of the network its settings "
                            f"describe: {', '.join(expected)}")  # fmt: skip
    for name, want in expected.items():
        held = weights[name]
        if not isinstance(held, torch.Tensor) or held.layout != torch.strided:
            raise _refuse(path, f"state_dict[{name!r}] is a {type(held).__name__}; accepted a dense tensor")
        if held.shape != want.shape or held.dtype != want.dtype:
            raise _refuse(path, f"state_dict[{name!r}] is {held.dtype} of shape {list(held.shape)}; the network its "
                                f"settings describe needs {want.dtype} of shape {list(want.shape)}")  # fmt: skip
    refuse_non_finite(path, weights)


def refuse_non_finite(path: Path | str, weights: dict) -> None:
    """Refuse, naming the first tensor, weights that hold NaN or infinite values (a diverged run's)."""
    import torch

    for name, held in weights.items():
        if isinstance(held, torch.Tensor) and held.is_floating_point():
            bad = int(held.numel() - torch.isfinite(held).sum())
            if bad:
                raise _refuse(path, f"state_dict[{name!r}] holds {bad} NaN or infinite value(s) of {held.numel()} "
                                    "(a diverged run's?); accepted finite numbers only")  # fmt: skip


# What sb3's loader raises on a zip that is not one of its models (beyond the file system's errors).
_SB3_REFUSALS = (ValueError, KeyError, RuntimeError, AssertionError, TypeError, AttributeError, EOFError,
                 pickle.UnpicklingError, zipfile.BadZipFile)  # fmt: skip


def load_maskable_ppo(path: Path):
    """A MaskablePPO model (``train_sb3.py``'s ``.zip``) on the CPU, or one ``ValueError`` saying why
    the file is not one. sb3 unpickles the model, so load ``.zip`` files only from people you trust."""
    from sb3_contrib import MaskablePPO

    what = f"{path} is not a MaskablePPO policy saved by train_sb3.py (a .zip policy)"
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.namelist()
    except (zipfile.BadZipFile, EOFError) as e:
        raise ValueError(f"{what}: not a zip archive ({e})") from e
    if "data" not in members or "policy.pth" not in members:
        raise ValueError(f"{what}: it holds {', '.join(members) or 'nothing'}; accepted a zip holding data and "
                         "policy.pth (MaskablePPO.save)")  # fmt: skip
    try:
        model = MaskablePPO.load(path, device="cpu")
    except _SB3_REFUSALS as e:
        reason = next((line.strip() for line in str(e).splitlines() if line.strip()), "")
        raise ValueError(f"{what}: {type(e).__name__}: {reason}") from e
    refuse_non_finite(path, model.policy.state_dict())
    return model


def check_zip_fits(path: Path, model, config: NertzConfig, obs_size: int, num_actions: int) -> None:
    """Refuse a MaskablePPO model whose spaces are not those of ``config`` (a ``.zip`` keeps no
    rules, only its spaces: SB3 would fail at the first decision, naming neither)."""
    held = (tuple(getattr(model.observation_space, "shape", None) or ()), getattr(model.action_space, "n", None))
    if held != ((obs_size,), num_actions):
        raise ValueError(f"{path} was trained on observations shaped {held[0]} and {held[1]} actions; "
                         f"{_input_rules(config)} give ({obs_size},) and {num_actions}: "
                         "build the agent with the rules it was trained under")  # fmt: skip


# INPUT_RULES (a policy is refused under others), PLAY_RULES (it plays under others, with a warning
# naming them, once per file and set of differences in a process) and OTHER_RULES: nertz_env.options.
_WARNED: set[tuple[str, tuple[str, ...]]] = set()


def _input_rules(config: NertzConfig) -> str:
    return f"{config.num_players} players, {config.work_piles} work piles and slide_under={config.slide_under}"


def check_rules(path: Path, trained_on: NertzConfig, config: NertzConfig) -> None:
    """A ``ValueError`` when ``config`` differs from the rules the file was trained under in one of
    ``INPUT_RULES``; a ``UserWarning`` when it differs in ``PLAY_RULES``: the policy still plays, as
    its inputs fit, but has never seen those rules."""
    if rules_that_differ(trained_on, config, INPUT_RULES):
        raise ValueError(f"{path} was trained for {_input_rules(trained_on)}; it cannot play {_input_rules(config)} "
                         "(its inputs' sizes depend on these rules)")  # fmt: skip
    differ = rules_that_differ(trained_on, config, PLAY_RULES)
    if not differ or (str(path), differ) in _WARNED:
        return
    _WARNED.add((str(path), differ))
    trained = ", ".join(f"{k}={getattr(trained_on, k)!r}" for k in differ)
    given = ", ".join(f"{k}={getattr(config, k)!r}" for k in differ)
    warnings.warn(f"{path} was trained under {trained}; it plays {given}, which it never saw in training (its "
                  "inputs fit, so it plays on)", UserWarning, stacklevel=3)  # fmt: skip
