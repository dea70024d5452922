"""Policy files are data: ``load_network`` unpickles tensors and plain values only, so a policy
file from anyone loads without running code from it, and ``save_policy`` writes nothing else."""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="needs torch: pip install 'nertz-env[training]'")

from nertz_env import NertzConfig, agents  # noqa: E402
from nertz_env.agents.policy import (  # noqa: E402
    SHIPPED_POLICIES,
    EnsembleAgent,
    build_network,
    build_scorer,
    load_network,
    plain,
    save_policy,
)
from nertz_env.game import Game  # noqa: E402
from nertz_env.layout import ObservationLayout  # noqa: E402

CONFIG = NertzConfig(num_players=2)


class _Touch:
    """Unpickling this creates ``marker`` (what a hostile file would do with any code)."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (self.marker,))


def test_a_file_whose_unpickling_runs_code_is_refused_without_running_it(tmp_path):
    marker = tmp_path / "ran"
    torch.save({"format": "nertz-selfplay-v2", "extra": _Touch(marker)}, tmp_path / "hostile.pt")
    with pytest.raises(ValueError, match=r"hostile.pt holds more than tensors and plain values.*GLOBAL"):
        load_network(tmp_path / "hostile.pt")
    with pytest.raises(ValueError, match="could run code"):
        agents.make("policy", path=str(tmp_path / "hostile.pt"), config=CONFIG)
    assert not marker.exists()


def test_a_training_checkpoint_is_refused_with_what_to_play_instead(tmp_path):
    torch.save({"update": 3, "numpy_rng": np.arange(4)}, tmp_path / "checkpoint.pt")  # numpy arrays, as a checkpoint
    with pytest.raises(ValueError, match=r"a training checkpoint\? play its policy.pt"):
        load_network(tmp_path / "checkpoint.pt")


def test_save_policy_writes_numpy_values_as_plain_ones_and_refuses_objects(tmp_path):
    net = build_scorer(CONFIG, (16,), 8)
    extra = {"global_step": np.int64(7), "share": np.float32(0.25), "curve": np.arange(3), "runs": (Path("a"),)}
    save_policy(tmp_path / "p.pt", net, CONFIG, (16,), extra=extra, action_hidden=8)
    _, config, blob = load_network(tmp_path / "p.pt")
    assert config == CONFIG
    assert blob["extra"] == {"global_step": 7, "share": 0.25, "curve": [0, 1, 2], "runs": ["a"]}
    assert type(blob["extra"]["global_step"]) is int
    with pytest.raises(TypeError, match=r"extra\['notes'\]\[1\] is a object: a policy file holds plain values only"):
        save_policy(tmp_path / "q.pt", net, CONFIG, (16,), extra={"notes": ["ok", object()]}, action_hidden=8)
    assert not (tmp_path / "q.pt").exists()
    with pytest.raises(TypeError, match=r"extra is a dict: .*string keys"):
        plain({1: "a"}, "extra")


@pytest.mark.parametrize("name", sorted(SHIPPED_POLICIES))
def test_the_shipped_policies_are_plain_data(name):
    path = SHIPPED_POLICIES[name][0]
    blob = torch.load(path, map_location="cpu", weights_only=True)  # what load_network does
    assert blob["format"] == "nertz-selfplay-v2" and plain(blob["extra"], "extra") == blob["extra"]


@pytest.mark.parametrize(
    "content",
    [b"", b"root:x:0:0:root:/root:/bin/bash\n", np.random.default_rng(0).bytes(3000), b"PK\x03\x04" + bytes(60)],
    ids=["empty", "text", "random bytes", "a broken zip"],
)
def test_a_file_that_is_not_a_policy_is_refused_in_one_line(tmp_path, content):
    (tmp_path / "x.pt").write_bytes(content)
    with pytest.raises(ValueError, match=r"x.pt is not a policy file saved by this project \(a .pt policy\): .") as e:
        load_network(tmp_path / "x.pt")
    assert "\n" not in str(e.value)


def _saved_blob(tmp_path) -> dict:
    """The blob of a small, valid nertz-selfplay-v2 file (what a damaged file is made from)."""
    save_policy(tmp_path / "ok.pt", build_scorer(CONFIG, (16,), 8), CONFIG, (16,), action_hidden=8)
    return torch.load(tmp_path / "ok.pt", weights_only=True)


def _set(key, value):
    return lambda blob: blob.update({key: value})


def _weights(change):
    return lambda blob: change(blob["state_dict"])


DAMAGE = {  # what is done to a valid file, and what the refusal names
    "no config": (lambda blob: blob.pop("config"), r"it lacks 'config'; accepted a nertz-selfplay-v2 file holding"),
    "no hidden": (lambda blob: blob.pop("hidden"), r"it lacks 'hidden'"),
    "unknown key": (_set("frobnicate", 1), r"unknown key\(s\) 'frobnicate'; accepted: format, config"),
    "config a list": (_set("config", [2]), r"'config' is a list; accepted a dict of NertzConfig options"),
    "unknown rule": (lambda blob: blob["config"].update(foo=1), r"unknown rule option\(s\) foo; known: num_players"),
    "bad rule": (lambda blob: blob["config"].update(num_players=99), r"invalid num_players=99: accepted an integer"),
    "hidden negative": (_set("hidden", [-5]), r"hidden=\[-5\]; accepted a list of positive integers"),
    "hidden text": (_set("hidden", "abc"), r"hidden='abc'; accepted a list of positive integers"),
    "hidden not its weights'": (_set("hidden", [10**9]), r"hidden\[0\]=1000000000 disagrees with state_dict\['body"),
    "action_hidden zero": (_set("action_hidden", 0), r"action_hidden=0; accepted a positive integer"),
    "lookahead negative": (_set("lookahead", -3), r"invalid lookahead=-3: accepted a bool or a depth from 0 to"),
    "unknown feature group": (_set("drop_features", ["nope"]), r"unknown feature group 'nope': accepted kind"),
    "flag not a bool": (_set("opponent", "yes"), r"opponent='yes'; accepted true or false"),
    "weights a list": (_set("state_dict", []), r"'state_dict' is a list; accepted a dict of weight names"),
    "weight missing": (_weights(lambda w: w.pop("move_out.bias")), r"state_dict lacks move_out.bias; accepted the"),
    "weight unknown": (_weights(lambda w: w.update(extra=torch.zeros(1))), r"state_dict has unknown extra; accepted"),
    "weight shape": (_weights(lambda w: w.update({"move_out.bias": torch.zeros(3)})),
                     r"state_dict\['move_out.bias'\] is torch.float32 of shape \[3\]; the network .* needs "
                     r"torch.float32 of shape \[1\]"),
    "weight dtype": (_weights(lambda w: w.update({"move_out.bias": torch.zeros(1, dtype=torch.int64)})),
                     r"state_dict\['move_out.bias'\] is torch.int64 .* needs torch.float32"),
    "weight a list": (_weights(lambda w: w.update({"move_out.bias": [0.0]})),
                      r"state_dict\['move_out.bias'\] is a list; accepted a dense tensor"),
    "NaN weight": (_weights(lambda w: w["move_mid.weight"].__setitem__((0, 0), float("nan"))),
                   r"state_dict\['move_mid.weight'\] holds 1 NaN or infinite value\(s\) of 64 .*finite numbers only"),
    "infinite weight": (_weights(lambda w: w["embed.weight"].__setitem__((3, 1), float("-inf"))),
                        r"state_dict\['embed.weight'\] holds 1 NaN or infinite"),
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_a_damaged_policy_file_is_refused_in_one_line_naming_what_is_wrong(tmp_path, damage):
    """Before, these were a KeyError, a TypeError from NertzConfig or torch, or a RuntimeError from
    load_state_dict; and NaN weights loaded into a policy that only ever played WAIT."""
    change, message = DAMAGE[damage]
    blob = _saved_blob(tmp_path)
    change(blob)
    torch.save(blob, tmp_path / "p.pt")
    with pytest.raises(ValueError, match=rf"p.pt is not a usable policy file: .*{message}") as e:
        load_network(tmp_path / "p.pt")
    assert "\n" not in str(e.value)
    with pytest.raises(ValueError, match=message):
        agents.make("policy", path=str(tmp_path / "p.pt"))


def test_a_flat_network_file_loads_and_refuses_move_feature_settings(tmp_path):
    layout = ObservationLayout(CONFIG)
    net = build_network(layout.size, 181, layout.high.astype(np.float32), (8,))
    save_policy(tmp_path / "v1.pt", net, CONFIG, (8,))
    loaded, config, blob = load_network(tmp_path / "v1.pt")
    assert blob["format"] == "nertz-selfplay-v1" and config == CONFIG
    assert all(torch.equal(a, b) for a, b in zip(loaded.state_dict().values(), net.state_dict().values(), strict=True))
    torch.save({**blob, "lookahead": 2}, tmp_path / "v1.pt")
    with pytest.raises(ValueError, match="nertz-selfplay-v1 network reads no move features, yet the file sets"):
        load_network(tmp_path / "v1.pt")


def test_a_path_that_is_not_a_path_is_refused_with_what_is_accepted():
    with pytest.raises(ValueError, match=r"invalid path=5: accepted the path \(a str or os.PathLike\) of a .pt"):
        agents.make("policy", path=5)  # was os.fspath's TypeError
    with pytest.raises(ValueError, match=r"invalid paths=5: accepted a list of paths"):
        EnsembleAgent(5)


@pytest.mark.parametrize(
    ("content", "message"),
    [(None, "it holds nothing; accepted a zip holding data and policy.pth"), (b"garbage", "not a zip archive")],
    ids=["empty zip", "not a zip"],
)
def test_a_zip_that_is_not_a_maskable_ppo_policy_is_refused_in_one_line(tmp_path, content, message):
    """Before, an empty zip was an AssertionError from inside sb3."""
    pytest.importorskip("sb3_contrib")
    path = tmp_path / "p.zip"
    if content is None:
        zipfile.ZipFile(path, "w").close()
    else:
        path.write_bytes(content)
    with pytest.raises(ValueError, match=rf"p.zip is not a MaskablePPO policy saved by train_sb3.py .*: {message}"):
        agents.make("policy", path=str(path))


def test_a_zip_trained_under_other_input_sizes_is_refused_when_built(tmp_path):
    """A ``.zip`` keeps its spaces, not its rules: a two-player MaskablePPO model under four players
    failed at its first decision, inside SB3, naming neither (now refused at once, naming both)."""
    pytest.importorskip("sb3_contrib", reason="needs sb3-contrib: pip install 'nertz-env[training]'")
    from sb3_contrib import MaskablePPO

    from nertz_env.sb3 import NertzSB3VecEnv

    path = tmp_path / "two.zip"
    MaskablePPO("MlpPolicy", NertzSB3VecEnv(num_games=1, num_players=2), n_steps=8, batch_size=8).save(path)
    two, four = ObservationLayout(CONFIG).size, ObservationLayout(NertzConfig(num_players=4)).size
    with pytest.raises(ValueError, match=rf"two.zip was trained on observations shaped \({two},\) and 181 actions; "
                                         rf"4 players, 4 work piles and slide_under=True give \({four},\) and 181"):
        agents.make("policy", path=str(path), config=NertzConfig(num_players=4))
    agent = agents.make("policy", path=str(path), config=CONFIG)
    game = Game(CONFIG)
    game.reset(seed=0)
    obs, masks = game.obs[:1], np.zeros((1, 181), np.int8)
    masks[0, 0] = 1  # WAIT alone
    assert agent.act_batch(obs, masks).tolist() == [0]
