"""``training.move_offsets``: a trained policy's logits shifted by move group (R4), screened on
duplicate deals against its unshifted self."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="needs torch: pip install 'nertz-env[training]'")

from conftest import mid_hand  # noqa: E402

from nertz_env import NertzConfig, agents  # noqa: E402
from nertz_env.actions import ACTION_CALL, ActionCatalogue  # noqa: E402
from nertz_env.agents.policy import SHIPPED_POLICIES  # noqa: E402
from nertz_env.training import move_offsets as mo  # noqa: E402
from nertz_env.training.compare_reports import compare  # noqa: E402

PPO = str(SHIPPED_POLICIES["ppo"][0])


def tables() -> tuple[np.ndarray, np.ndarray]:
    obs, masks = mid_hand(num_envs=64)
    return obs.reshape(-1, obs.shape[-1]), masks.reshape(-1, masks.shape[-1])


def test_every_action_has_one_group_named_by_its_kind_source_and_destination():
    for config in (NertzConfig(), NertzConfig(nertz_builds=True)):
        catalogue = ActionCatalogue(config)
        groups = mo.move_groups(catalogue)
        assert len(groups) == len(catalogue) and set(groups) <= set(mo.MOVE_GROUPS)
        named = dict(zip(catalogue.names, groups))
        assert named["wait"] == "wait" and named["draw"] == "draw" and named["call"] == "call"
        assert named["waste>foundation"] == "waste>foundation" and named["work2>foundation"] == "work>foundation"
        assert named["nertz>work3"] == "nertz>work" and named["waste>under0"] == "waste>under"
        assert named["work0>work2:5"] == "work>work"
    assert mo.move_groups(ActionCatalogue(NertzConfig(nertz_builds=True))).count("work>nertz") == 12  # R4.8


def test_no_offset_plays_as_the_policy_and_a_large_one_chooses_its_group_wherever_legal():
    obs, masks = tables()
    plain = agents.make("ppo").act_batch(obs, masks)
    np.testing.assert_array_equal(mo.OffsetPolicy(PPO, {}).act_batch(obs, masks), plain)
    in_group = np.array(mo.move_groups(ActionCatalogue(NertzConfig()))) == "waste>work"
    laying = mo.OffsetPolicy(PPO, {"waste>work": 1e4}).act_batch(obs, masks)
    can_lay = (masks[:, in_group] == 1).any(axis=1)
    assert can_lay.any() and (~can_lay).any() and (~in_group[plain[can_lay]]).any()
    assert in_group[laying[can_lay]].all() and masks[np.arange(len(laying)), laying].all()
    np.testing.assert_array_equal(laying[~can_lay], plain[~can_lay])  # a shift never makes a move legal
    huge = mo.OffsetPolicy(PPO, {"waste>work": 1e12, "draw": -1e12}).act_batch(obs, masks)
    assert masks[np.arange(len(huge)), huge].all()  # however large, illegal moves stay out
    assert repr(mo.OffsetPolicy(PPO, {"call": -1e4})) == f"offset-policy(path={PPO}, offsets=call=-10000)"
    never_call = mo.OffsetPolicy(PPO, {"call": -1e4}).act_batch(obs, masks)
    assert (never_call != ACTION_CALL).all() and masks[np.arange(len(never_call)), never_call].all()


@pytest.mark.parametrize(
    ("offsets", "message"),
    [({"foundation": 1.0}, "unknown move group 'foundation': accepted wait, draw, call"),
     ({"draw": float("nan")}, "invalid offset draw=nan: accepted a finite number"),
     ({"draw": True}, "invalid offset draw=True"), ({"draw": "1"}, "invalid offset draw='1'"),
     (["draw"], "invalid offsets ['draw']: accepted a mapping of move group to a number")],
)  # fmt: skip
def test_bad_offsets_name_what_was_wrong_and_what_is_accepted(offsets, message):
    with pytest.raises(ValueError, match="^" + re.escape(message)):
        mo.OffsetPolicy(PPO, offsets)


def test_the_cli_form_parses_each_shifted_player_and_refuses_a_bad_entry(capsys):
    assert mo.parse_offsets("draw=-0.3,call=3") == {"draw": -0.3, "call": 3.0}
    for bad, named in (("draw", "accepted GROUP=NUMBER"), ("draw=x", "'x' is not a number"), ("pile=1", "pile"),
                       ("draw=1,draw=-1", "draw is given twice")):
        with pytest.raises(SystemExit) as exit_info:
            mo.main(["--policy", PPO, "--offsets", bad])
        assert exit_info.value.code == 2 and named in capsys.readouterr().err


def test_the_screen_pairs_each_shifted_player_with_the_unshifted_one_on_the_same_deals(tmp_path, capsys):
    out = tmp_path / "screen.json"
    kept = tmp_path / "reports"
    assert mo.main(["--policy", PPO, "--offsets", "draw=0", "draw=1e4", "--hands", "3", "--seed", "5",
                    "--json", str(out), "--reports", str(kept)]) == 0  # fmt: skip
    record = json.loads(out.read_text())
    same, drawing = record["rows"]
    assert record["hands"] == 3 and record["seed"] == 5 and record["opponents"] == ["heuristic:depth=3"] * 3
    assert same["win_share_diff"] == 0 == same["score_diff"] and same["win_share"] == record["base_win_share"]
    assert drawing["score_diff"] < 0  # drawing at every chance empties no Nertz pile onto a foundation
    assert "draw=10000" in capsys.readouterr().out
    reports = [json.loads((kept / f"{name}.json").read_text()) for name in ("unshifted", "shifted_1", "shifted_2")]
    assert all(r["deals"] == 3 and r["seed"] == 5 for r in reports)  # harness reports, as nertz eval --out
    again = compare(reports[0], reports[2])
    assert again["win_share_diff"] == drawing["win_share_diff"] and again["score_diff"] == drawing["score_diff"]
    with pytest.raises(SystemExit) as exit_info:
        mo.main(["--policy", PPO, "--offsets", "draw=1", "--reports", str(out)])
    assert exit_info.value.code == 2 and "is a file, not a folder" in capsys.readouterr().err


def test_kept_records_print_as_one_table_and_records_of_other_screens_are_refused(tmp_path, capsys):
    def record(win: float, entries: list[dict]) -> dict:
        rows = [{"offsets": e, "win_share_diff": -0.001 * i, "win_share_diff_ci": [-0.002 * i, 0.0005]}
                for i, e in enumerate(entries, 1)]  # fmt: skip
        return {"base_win_share": win, "rows": rows}

    a, b, c = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "c.json"
    a.write_text(json.dumps(record(0.27, [{"draw": -1.0}, {"wait": 1.0, "call": -3.0}])))
    b.write_text(json.dumps(record(0.26, [{"draw": -1.0}, {"wait": 1.0, "call": -3.0}])))
    c.write_text(json.dumps(record(0.26, [{"draw": 1.0}])))
    assert mo.main(["--table", f"seed1={a}", f"seed2={b}"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "| offsets | seed1 | seed2 |" and lines[2].endswith("| 0.2700 | 0.2600 |")
    assert lines[3] == "| `draw=-1` | -0.0010 [-0.0020, +0.0005] | -0.0010 [-0.0020, +0.0005] |"
    assert lines[4].startswith("| `wait=1,call=-3` | -0.0020 [-0.0040, +0.0005]")
    for argv, named in ((["--table", f"seed1={a}", f"x={c}"], "x screened other offsets than seed1"),
                        (["--table", str(a)], "accepted NAME=RECORD.json"),
                        (["--table", f"s={tmp_path / 'none.json'}"], "No such file"), ([], "--policy and --offsets"),
                        (["--table", f"s={a}", "--policy", PPO], "--table prints kept records; it takes no")):
        with pytest.raises(SystemExit) as exit_info:
            mo.main(argv)
        assert exit_info.value.code == 2 and named in capsys.readouterr().err
