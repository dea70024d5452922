"""Policy files are data: ``load_network`` unpickles tensors and plain values only, so a policy
file from anyone loads without running code from it, and ``save_policy`` writes nothing else."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from nertz_env import NertzConfig, agents  # noqa: E402
from nertz_env.agents.policy import SHIPPED_POLICIES, build_scorer, load_network, plain, save_policy  # noqa: E402

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
