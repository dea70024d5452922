"""training.teacher_gap: where a player's moves differ from a teacher's, by kind of move."""

import pytest

pytest.importorskip("torch", reason="needs torch: pip install 'nertz-env[training]'")

from nertz_env.training import teacher_gap as tg


def test_a_teacher_does_not_differ_from_itself():
    record = tg.teacher_gap("heuristic", "heuristic", games=4, ticks=60)
    assert record["decisions"] == 4 * 4 * 60 and record["differ"] == 0 and record["pairs"] == {}


def test_the_gaps_are_counted_by_kind_and_the_teachers_next_move_follows_a_work_move_against_a_draw():
    record = tg.teacher_gap("passive", "heuristic", games=4, ticks=150)
    assert 0 < record["differ"] == sum(record["pairs"].values()) < record["decisions"]
    assert all(len(pair.split(" / ")) == 2 for pair in record["pairs"])
    followed = sum(record["next_after_work_vs_draw"].values())
    assert 0 < followed <= record["pairs"]["work / draw"]  # the last tick's gaps have no next move


def test_a_bad_agent_spec_is_a_clear_cli_error(capsys):
    with pytest.raises(SystemExit) as exit_info:
        tg.main(["--player", "nosuchagent"])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and "error: unknown agent 'nosuchagent'; known agents: " in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_more_games_than_memory_holds_is_one_line_naming_the_flag(capsys):
    with pytest.raises(SystemExit) as exit_info:  # was a MemoryError traceback from the vector env
        tg.main(["--player", "heuristic", "--games", str(10**12), "--ticks", "1"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert f"error: --games {10**12}: Unable to allocate" in err and "play fewer games" in err
    assert "Traceback" not in err
