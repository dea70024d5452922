"""``nertz_env.benchmarks.first_start``: its arguments, one case in a fresh process with an empty
cache, and the medians it reports (the real cases compile for a minute, so the cases here are
stand-ins that compile nothing or one small kernel)."""

from __future__ import annotations

import json

import pytest

from nertz_env.benchmarks import first_start


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--repeats", "0"], "--repeats: expected an integer >= 1, got '0'"),
        (["--cases", "nope"], "invalid choice: 'nope'"),
        (["--json", "/no/such/folder/x.json"], "the folder '/no/such/folder' of"),
    ],
)
def test_bad_arguments_are_one_line_errors(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        first_start.main(argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_a_case_runs_in_a_fresh_process_and_counts_its_compiles(monkeypatch):
    kernel = "from numba import njit; njit(lambda x: x + 1)(1)"
    monkeypatch.setitem(first_start.CASES, "nothing", ["-c", "pass"])
    monkeypatch.setitem(first_start.CASES, "one kernel", ["-c", kernel])
    idle = first_start.run_case("nothing", "1")
    assert idle["compiles"] == 0 and idle["wall_s"] > 0 and idle["cpu_s"] > 0
    assert first_start.run_case("one kernel", "1")["cpu_s"] > idle["cpu_s"]


def test_the_json_report_holds_the_medians_of_each_case_and_setting(monkeypatch, tmp_path):
    walls = iter([3.0, 10.0, 1.5, 70.0, 1.0, 30.0, 0.5, 60.0, 2.0, 20.0, 1.0, 80.0])  # medians 2, 20, 1, 70
    calls = []

    def fake_run(case, jobs, interim=""):
        calls.append((case, jobs, interim))
        return {"wall_s": next(walls), "cpu_s": 5.0, "compiles": 4, "distinct": 4}

    monkeypatch.setattr(first_start, "run_case", fake_run)
    out = tmp_path / "first.json"
    assert first_start.main(["--cases", "parallel", "--repeats", "3", "--json", str(out)]) == 0
    settings = [("parallel", "", ""), ("parallel", "1", ""), ("parallel", "", "first step"),
                ("parallel", "", "until compiled")]  # fmt: skip
    assert calls == settings * 3
    report = json.loads(out.read_text())
    assert report["repeats"] == 3 and report["cores"] >= 1
    assert report["cases"]["parallel NERTZ_COMPILE_JOBS=default"]["wall_s"] == 2.0
    assert report["cases"]["parallel NERTZ_COMPILE_JOBS=1"]["wall_s"] == 20.0
    assert report["cases"]["parallel NERTZ_INTERIM=1 first step"]["wall_s"] == 1.0
    assert report["cases"]["parallel NERTZ_INTERIM=1 until compiled"]["wall_s"] == 70.0


def test_the_compile_profile_names_each_compiled_function_with_its_own_time(monkeypatch, capsys):
    from numba import njit

    from nertz_env.benchmarks import compile_profile

    def inner(x):
        return x * 2

    def outer(x):
        return jitted_inner(x) + 1

    jitted_inner = njit(inner)
    monkeypatch.setattr(compile_profile, "run_case", lambda case: njit(outer)(3))
    compile_profile.profile("vector", top=5)
    said = capsys.readouterr().out.splitlines()
    assert said[0].startswith("vector: ") and " 2 compiles" in said[0]
    rows = {line.split()[-1]: [float(v) for v in line.split()[:2]] for line in said[2:-1]}
    assert set(rows) == {f"{__name__}.{f.__qualname__}" for f in (inner, outer)}
    own, total = rows[f"{__name__}.{outer.__qualname__}"]
    inner_total = rows[f"{__name__}.{inner.__qualname__}"][1]
    assert 0 < own < total and abs(total - own - inner_total) <= 0.02  # printed to 0.01 s
    assert said[-1] == "compiled more than once: none"


def test_the_compile_profile_refuses_an_unknown_case(capsys):
    from nertz_env.benchmarks import compile_profile

    with pytest.raises(SystemExit) as exit_info:
        compile_profile.main(["nope"])
    assert exit_info.value.code == 2
    assert "invalid choice: 'nope'" in capsys.readouterr().err


def test_the_compile_profile_runs_first_starts_command_lines_in_process(capsys, monkeypatch):
    from nertz_env.benchmarks import compile_profile

    assert tuple(first_start.CASES) == compile_profile.CASES
    monkeypatch.setitem(first_start.CASES, "main", ["-m", "nertz_env.training.cli", "eval", "--agents", "random",
                                                    "random", "--hands", "2", "--seed", "0"])  # fmt: skip
    compile_profile.run_case("main")  # the README's main job, two deals of two random players
    assert "duplicate: 2 deals" in capsys.readouterr().out
    monkeypatch.setitem(first_start.CASES, "vector", ["-c", "print('ran', 6 * 7)"])
    compile_profile.run_case("vector")
    assert capsys.readouterr().out == "ran 42\n"
