"""The learned search's labels (training.search_labels) and their distillation (training.distill_search)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch", reason="needs torch: pip install 'nertz-env[training]'")

from nertz_env import agents  # noqa: E402
from nertz_env.training import distill_search, search_labels  # noqa: E402

SMALL = {"candidates": 2, "samples": 2, "horizon": 2}


@pytest.fixture(scope="module")
def label_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("labels")
    paths = []
    for seed in (5, 6):
        labels = search_labels.make(seed, games=3, ticks=5, **SMALL)
        paths.append(folder / f"s{seed}.npz")
        np.savez_compressed(paths[-1], **labels)
    return paths


def test_labels_replay_to_the_states_the_search_saw(label_files):
    labels = search_labels.load(label_files[0])
    obs, masks = search_labels.replay(labels)
    assert len(labels["actions"]) == 5 and len(obs) == len(labels["tick"]) > 0
    cands, pick = labels["cands"].astype(np.int64), labels["pick"].astype(np.int64)
    rows = np.arange(len(obs))
    # candidate 0 is the policy's own first choice on the replayed state; every candidate is legal
    assert (agents.make("ppo-league").act_batch(obs, masks) == cands[:, 0]).all()
    assert (masks[rows[:, None], np.maximum(cands, 0)][cands >= 0] == 1).all()
    # the label's pick is what the rollout agent plays on that state with that decision key
    keys = (labels["tick"].astype(np.uint64) << np.uint64(20)) + labels["game"].astype(np.uint64)
    played = agents.make("rollout", seed=5, **SMALL).act_batch(obs, masks, keys=keys)
    assert (played == cands[rows, pick]).all()
    # seat 0's recorded action is the policy's first choice at every tick (the search only labels)
    assert (labels["actions"][labels["tick"], labels["game"], 0] == cands[:, 0]).all()


def test_load_refuses_what_is_not_a_label_file(label_files, tmp_path):
    np.savez(tmp_path / "x.npz", seed=1)
    with pytest.raises(ValueError, match="lacks games, actions"):
        search_labels.load(tmp_path / "x.npz")
    good = dict(search_labels.load(label_files[0]))
    np.savez(tmp_path / "z.npz", **{**good, "pick": good["pick"] + 7})
    with pytest.raises(ValueError, match="a pick outside 0..1"):
        search_labels.load(tmp_path / "z.npz")
    np.savez(tmp_path / "w.npz", **{**good, "mean": good["mean"][:1]})
    with pytest.raises(ValueError, match="inconsistent shapes"):
        search_labels.load(tmp_path / "w.npz")
    (tmp_path / "y.npz").write_text("not a zip")
    with pytest.raises(ValueError, match="not a label file"):
        search_labels.load(tmp_path / "y.npz")


def _data(mean, se, pick=(0,)):
    mean = np.array(mean, np.float32)
    return {"cands": np.where(np.isnan(mean), -1, np.arange(mean.shape[1]) + 3).astype(np.int16), "mean": mean,
            "se": np.array(se, np.float32), "pick": np.array(pick, np.int8)}  # fmt: skip


def test_targets():
    nan = np.nan
    sure = _data([[0.0, 1.0, nan]], [[0.0, 0.1, nan]], pick=[1])
    unsure = _data([[0.0, 1.0, nan]], [[0.0, 10.0, nan]])
    worse = _data([[0.0, -1.0, -2.0]], [[0.0, 0.1, 0.1]])
    assert distill_search.targets(sure, "clear").tolist() == [[0, 1, 0]]
    assert distill_search.targets(unsure, "clear").tolist() == [[1, 0, 0]]
    assert distill_search.targets(worse, "clear").tolist() == [[1, 0, 0]]
    assert distill_search.targets(sure, "pick").tolist() == [[0, 1, 0]]
    soft = distill_search.targets(worse, "soft", eta=1.0)[0]
    assert soft == pytest.approx(np.exp([0, -1, -2]) / np.exp([0, -1, -2]).sum())
    with pytest.raises(ValueError, match="unknown target 'best'"):
        distill_search.targets(sure, "best")


def test_fit_writes_a_policy_that_plays(label_files, tmp_path):
    out = tmp_path / "d.pt"
    report = distill_search.fit(label_files[:1], label_files[1:], "pick", epochs=1, out=out, log=lambda _: None)
    assert [h["epoch"] for h in report["history"]] == [0, 1]
    assert report["val_states"] == len(search_labels.load(label_files[1])["tick"])
    start = report["history"][0]["val"]
    assert start["departs"] == 0.0  # the starting network is ppo: its first choice is candidate 0
    val = search_labels.load(label_files[1])
    moved = val["pick"] != 0  # the pick target: where the search left ppo's choice
    assert start["target_departs"] == moved.mean() and start["agree_target"] == 1 - moved.mean()
    assert moved.any() and start["agree_where_target_departs"] == 0.0  # ppo never takes a departure
    policy = agents.make("policy", path=str(out))
    obs, masks = search_labels.replay(search_labels.load(label_files[1]))
    chosen = policy.act_batch(obs, masks)
    assert (masks[np.arange(len(obs)), chosen] == 1).all()


def test_command_lines_refuse_bad_input(tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        search_labels.main(["make", "--seed", "1", "--games", "0", "--out", str(tmp_path / "a.npz")])
    assert stop.value.code == 2 and "argument --games: expected an integer >= 1, got '0'" in capsys.readouterr().err
    assert not (tmp_path / "a.npz").exists()
    with pytest.raises(SystemExit) as stop:
        distill_search.main([str(tmp_path / "none.npz"), "--val", str(tmp_path / "none.npz"), "--out",
                             str(tmp_path / "d.pt")])  # fmt: skip
    said = capsys.readouterr().err
    assert stop.value.code == 2 and f"error: {tmp_path / 'none.npz'} is not a label file of search_labels make" in said
    assert not (tmp_path / "d.pt").exists()


def test_make_files_with_workers_writes_one_file_per_seed(tmp_path):
    written = search_labels.make_files(tmp_path / "w.npz", 11, workers=2, games=2, ticks=2, **SMALL)
    assert [p.name for p, _, _ in written] == ["w-11.npz", "w-12.npz"]
    for (path, ticks, n), seed in zip(written, (11, 12)):
        labels = search_labels.load(path)
        assert int(labels["seed"]) == seed and len(labels["actions"]) == ticks == 2 and len(labels["tick"]) == n
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as in the workers: the same float sums
    try:
        alone = search_labels.make(11, games=2, ticks=2, **SMALL)
    finally:
        torch.set_num_threads(threads)
    first = search_labels.load(written[0][0])
    assert all(np.array_equal(alone[k], first[k], equal_nan=k in ("mean", "se")) for k in search_labels.LABEL_KEYS)


def test_departures_count_each_pick_off_the_policy_by_kind(label_files, capsys):
    from nertz_env.actions import ActionCatalogue
    from nertz_env.config import NertzConfig

    table = ActionCatalogue(NertzConfig(num_players=4)).table
    assert [search_labels.move_kind(table, a) for a in (0, 1, 2)] == ["wait", "draw", "call"]
    kinds = {search_labels.move_kind(table, a) for a in range(len(table))}
    assert {"foundation<nertz", "foundation<waste", "foundation<work", "work<waste", "under<nertz"} <= kinds
    data = [search_labels.load(p) for p in label_files]
    report = search_labels.departures(data)
    off = sum(int((d["pick"] != 0).sum()) for d in data)
    assert report["labels"] == sum(len(d["pick"]) for d in data) and report["departures"] == off
    assert sum(row["count"] for row in report["by_kind"]) == off
    for row in report["by_kind"]:
        assert row["policy"] in kinds and row["search"] in kinds
    search_labels.main(["departures", *map(str, label_files)])
    assert f'"departures": {off}' in capsys.readouterr().out


def test_departures_of_another_policy_compare_its_move_where_the_search_measured_it(label_files, capsys):
    data = [search_labels.load(p) for p in label_files]
    first = [d["cands"][:, 0] for d in data]
    # the labels' own policy replayed is candidate 0, so its report is the default one
    assert all(np.array_equal(a, b) for a, b in zip(search_labels.policy_choices(data, "ppo-league"), first))
    assert search_labels.departures(data, first) == search_labels.departures(data)
    picks = [d["cands"][np.arange(len(d["pick"])), d["pick"]] for d in data]
    followed = search_labels.departures(data, picks)  # a policy that plays the search's pick
    assert followed["departures"] == 0 and followed["outside"] == 0 and followed["mean_regret"] == 0.0
    assert followed["candidate_0"] == sum(int((d["pick"] == 0).sum()) for d in data)
    unmeasured = search_labels.departures(data, [np.full(len(d["pick"]), 9999) for d in data])
    assert unmeasured["outside"] == unmeasured["labels"] and unmeasured["departures"] == unmeasured["candidate_0"] == 0
    # candidate 1 against a pick of 2: the gain is mean[2] - mean[1], its error both differences'
    two = _data([[0.0, 1.0, 3.0]], [[0.0, 0.3, 0.4]], pick=[2])
    row = search_labels.departures([two], [np.array([4])])["by_kind"][0]
    assert row["count"] == 1 and row["mean_gain"] == pytest.approx(2.0)
    assert row["median_gain_over_se"] == pytest.approx(2.0 / 0.5)
    search_labels.main(["departures", *map(str, label_files), "--policy", "ppo"])
    assert '"outside":' in capsys.readouterr().out
    with pytest.raises(SystemExit) as stop:
        search_labels.main(["departures", str(label_files[0]), "--policy", "no-such-agent"])
    assert stop.value.code == 2 and "error: unknown agent 'no-such-agent'" in capsys.readouterr().err


def test_recheck_searches_the_departures_of_the_given_kinds_again(label_files):
    data = [search_labels.load(p) for p in label_files]
    found = search_labels.departures(data)["by_kind"][0]  # the commonest departure of the fixture
    report = search_labels.recheck(data, [found["policy"]], found["search"], horizons=(2, 50), samples=2, seed=5)
    assert report["states"] == found["count"] and set(report["horizons"]) == {"2", "50"}
    for measured in report["horizons"].values():
        assert measured["searched"] == found["count"] and 0 <= measured["still_best"] <= found["count"]
        assert 0 <= measured["share_above_policy"] <= 1 and np.isfinite(measured["mean_gain"])
    assert search_labels.recheck(data, ["no such kind"], "draw")["horizons"] == {}


def test_load_refuses_a_damaged_zip_in_one_line(tmp_path):
    """Before, a file that began as a zip but was not one was a ``BadZipFile`` traceback."""
    (tmp_path / "cut.npz").write_bytes(b"PK\x03\x04 cut short")
    with pytest.raises(ValueError, match="cut.npz is not a label file of search_labels make"):
        search_labels.load(tmp_path / "cut.npz")
