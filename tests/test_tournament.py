"""Tournaments (R8): advancement, recorded scores, cuts and the tie-break on constructed match
results (``training.brackets``), then a tiny real tournament for seeding, ratings, JSON and the CLI."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from nertz_env.training import brackets, cli, stats
from nertz_env.training.brackets import TableResult, cut, ladder, ladder_moves, place, single_elimination, table_sizes
from nertz_env.training.tournament import format_tournament, rate, tournament

TARGET = 100


def result(seats, before, last, winner, hands=5):
    """A table's match: each seat's total before the final hand and its score in it."""
    totals = tuple(b + h for b, h in zip(before, last))
    return TableResult(tuple(seats), totals, tuple(last), (winner,), hands)


def by_strength(strength, log=None, tiebreak_winner=None):
    """A ``play`` whose tables end in strength order: the strongest wins (reaching 100 in the final
    hand), each other player's total before the final hand is their strength."""

    def play(stage, round_no, tables):
        if log is not None:
            log.append((stage, round_no, [tuple(t) for t in tables]))
        out = []
        for table in tables:
            winner = tiebreak_winner if stage == "tiebreak" and tiebreak_winner is not None else None
            winner = winner if winner is not None else max(table, key=lambda e: strength[e])
            before = [strength[e] for e in table]
            last = [TARGET - strength[e] if e == winner else 3 for e in table]
            out.append(result(table, before, last, winner))
        return out

    return play


class FakeRng:
    """Deals the given card codes in order, for cuts with known cards."""

    def __init__(self, *deals):
        self.deals = [np.array(d + [k for k in range(52) if k not in d]) for d in deals]

    def permutation(self, n):
        return self.deals.pop(0)


# --- constructed results ------------------------------------------------------------------------


def test_recorded_scores_follow_the_snerts_example():
    """R8 (seeds/003): going in A 85, B 93, C 67, D 80; C snerts for 35 and wins the table:
    A records 85, B 93, C 100 and D 80."""
    table = result((0, 1, 2, 3), before=(85, 93, 67, 80), last=(6, 2, 35, -4), winner=2)
    assert table.totals == (91, 95, 102, 76)
    assert table.before_final == (85, 93, 67, 80)
    assert table.recorded(TARGET) == (85, 93, 100, 80)
    order, cuts = place(table, table.recorded(TARGET), 2, np.random.default_rng(0))
    assert order == [2, 1, 0, 3] and cuts == []  # the winner first, then by recorded score


def test_cut_is_high_card_ace_low_and_recuts_equal_ranks():
    """R8: tied players cut cards, the high card moves, ace low; equal ranks cut again."""
    order, draws = cut([5, 6, 7], FakeRng([0, 12, 13], [3, 1]))  # A, K, A; then 4, 2
    assert order == [6, 5, 7]
    assert draws == [{5: 1, 6: 13, 7: 1}, {5: 4, 7: 2}]


def test_a_tie_across_the_moving_boundary_is_cut_reproducibly():
    """Seats 1 and 2 tie for second (who advances): a seeded cut decides, the same every time for a
    seed, and it is a real draw (both outcomes over seeds). A tie for third decides nothing: no cut."""
    table = result((0, 1, 2, 3), before=(60, 70, 70, 20), last=(40, 1, 1, 1), winner=0)
    orders = set()
    for seed in range(12):
        order, cuts = place(table, table.totals, 2, brackets.cut_rng(seed, "elimination", 0, 0))
        again, _ = place(table, table.totals, 2, brackets.cut_rng(seed, "elimination", 0, 0))
        assert order == again and order[0] == 0 and order[3] == 3
        assert len(cuts) == 1 and cuts[0]["players"] == [1, 2] and cuts[0]["order"] == order[1:3]
        orders.add(tuple(order))
    assert orders == {(0, 1, 2, 3), (0, 2, 1, 3)}
    low_tie = result((0, 1, 2, 3), before=(60, 70, 20, 20), last=(40, 1, 1, 1), winner=0)
    order, cuts = place(low_tie, low_tie.totals, 2, np.random.default_rng(0))
    assert order == [0, 1, 2, 3] and cuts == []


def test_a_match_left_tied_by_the_hand_cap_is_decided_by_a_cut():
    table = TableResult((4, 5, 6), (30, 30, 10), (5, 5, 0), winners=(4, 5), hands=100)
    first, cuts = brackets.decide(table, brackets.cut_rng(3, "elimination", 0, 0))
    second, _ = brackets.decide(table, brackets.cut_rng(3, "elimination", 0, 0))
    assert first.winners == second.winners and first.winners[0] in (4, 5)
    assert cuts[0]["for"] == "winner" and cuts[0]["order"][0] == first.winners[0]


def test_elimination_advances_the_top_two_until_one_table_remains():
    """R8 (seeds/000): tables of four, the top two advance; 16 entrants play 4, 2, then 1 table."""
    strength = {e: 90 - 5 * e for e in range(16)}  # entrant 0 strongest
    log = []
    rec = single_elimination(16, by_strength(strength, log), seed=7)
    assert [len(r["tables"]) for r in rec["rounds"]] == [4, 2, 1]
    for rnd, nxt in zip(rec["rounds"], rec["rounds"][1:]):
        advanced = []
        for t in rnd["tables"]:
            assert len(t["seats"]) == 4
            assert t["advance"] == sorted(t["seats"], key=lambda e: -strength[e])[:2] == t["order"][:2]
            advanced += t["advance"]
        assert sorted(e for t in nxt["tables"] for e in t["seats"]) == sorted(advanced)
    final = rec["rounds"][-1]["tables"][0]
    assert rec["champion"] == 0  # the strongest wins every table
    by_strength_order = sorted(final["seats"], key=lambda e: -strength[e])
    assert [(s["place"], s["entrant"]) for s in rec["standings"][:4]] == list(zip([1, 2, 3, 4], by_strength_order))
    assert {s["place"] for s in rec["standings"][4:8]} == {5} and {s["place"] for s in rec["standings"][8:]} == {9}
    assert [s["round_out"] for s in rec["standings"]] == [None] * 4 + [2] * 4 + [1] * 8
    # The seat draw is seeded: the same seed seats the same tables, another seed others.
    assert single_elimination(16, by_strength(strength), seed=7) == rec
    assert single_elimination(16, by_strength(strength), seed=8)["rounds"][0] != rec["rounds"][0]


@pytest.mark.parametrize(
    ("n", "rounds"),
    [(5, [[3, 2], [3]]), (6, [[3, 3], [4]]), (7, [[4, 3], [4]]), (9, [[3, 3, 3], [3, 3], [4]]), (4, [[4]]), (2, [[2]])],
)
def test_elimination_fields_that_are_not_a_multiple_of_four(n, rounds):
    """The fewest tables of at most four, even sizes; two advance from a table of three, one from a table of two."""
    rec = single_elimination(n, by_strength({e: 50 + e for e in range(n)}), seed=1)
    assert [[len(t["seats"]) for t in r["tables"]] for r in rec["rounds"]] == rounds
    for r in rec["rounds"][:-1]:
        assert [len(t["advance"]) for t in r["tables"]] == [min(2, len(t["seats"]) - 1) for t in r["tables"]]
    assert rec["champion"] == n - 1 and sorted(s["entrant"] for s in rec["standings"]) == list(range(n))
    assert table_sizes(n) == rounds[0]
    assert brackets.elimination_table_sizes(n) == {size for r in rounds for size in r}  # known before play


def test_ladder_moves_the_top_two_up_and_the_bottom_two_down():
    """R8 (seeds/003): top two of table t to t-1, bottom two to t+1; table 1's top two and the last
    table's bottom two stay."""
    orders = [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]
    assert ladder_moves(orders) == [[0, 1, 4, 5], [2, 3, 8, 9], [6, 7, 10, 11]]
    assert ladder_moves([[3, 1, 2, 0]]) == [[0, 1, 2, 3]]


def test_ladder_records_scores_moves_players_and_sums():
    strength = {e: 80 - 7 * e for e in range(12)}
    log = []
    rec = ladder(12, by_strength(strength, log), seed=2)
    assert [stage for stage, _, _ in log] == ["ladder"] * 4  # distinct sums: no tie-break
    sums = dict.fromkeys(range(12), 0)
    for r, rnd in enumerate(rec["rounds"]):
        for t, table in enumerate(rnd["tables"]):
            assert len(table["seats"]) == 4
            for e, rec_score, before in zip(table["seats"], table["recorded"], table["before_final"]):
                if e == table["winner"]:
                    assert rec_score == TARGET
                else:
                    assert rec_score == before == strength[e]
                sums[e] += rec_score
            if r + 1 < len(rec["rounds"]):
                nxt = rec["rounds"][r + 1]["tables"]
                top, bottom = table["order"][:2], table["order"][2:]
                assert set(top) <= set(nxt[max(t - 1, 0)]["seats"]) and set(bottom) <= set(nxt[min(t + 1, 2)]["seats"])
                assert table["up"] == (top if t else []) and table["down"] == (bottom if t < 2 else [])
            else:
                assert "up" not in table and table["cuts"] == []  # no one moves after the last table
    assert all(len(s["recorded"]) == 4 and s["sum"] == sums[s["entrant"]] for s in rec["standings"])
    assert [s["sum"] for s in rec["standings"]] == sorted(sums.values(), reverse=True)
    assert rec["tiebreak"] is None and rec["champion"] == rec["standings"][0]["entrant"]
    with pytest.raises(ValueError, match="multiple of 4"):
        ladder(6, by_strength(strength), seed=0)


def test_ladder_tie_for_first_plays_a_tie_break_match():
    """R8: equal highest sums play a tie-break match to 100; its winner is first."""

    def play(stage, r, tables):
        (table,) = tables
        if stage == "tiebreak":
            assert table == (0, 1)
            return [result(table, (90, 95), (3, -2), winner=1)]
        winner = (0, 1)[r]  # 0 wins round 1, 1 wins round 2; both record 100 + 90
        before = {0: 90, 1: 90, 2: 50, 3: 40}
        return [result(table, [before[e] for e in table], [15 if e == winner else 0 for e in table], winner)]

    rec = ladder(4, play, seed=0, rounds=2)
    assert [(s["entrant"], s["sum"], s["place"]) for s in rec["standings"]] == [
        (1, 190, 1), (0, 190, 2), (2, 100, 3), (3, 80, 4)
    ]
    assert rec["tiebreak"]["seats"] == [0, 1] and rec["tiebreak"]["winner"] == 1 and rec["champion"] == 1


def test_ratings_follow_every_table():
    strength = {e: 90 - 5 * e for e in range(8)}
    rec = single_elimination(8, by_strength(strength), seed=0)
    rec = rate({"entrants": [f"p{e}" for e in range(8)], **rec})
    mus = [rec["ratings"][f"p{e}"]["mu"] for e in range(8)]
    assert mus[0] == max(mus) and mus[0] > 25 > min(mus)
    assert all(rec["ratings"][f"p{e}"]["sigma"] < 25 / 3 for e in range(8))  # everyone was rated
    tables = [t for r in rec["rounds"] for t in r["tables"]]
    assert len(tables) == 3
    expected = stats.rate_hands(((t["seats"], t["rating_scores"]) for t in tables), players=range(8))
    assert all(rec["ratings"][f"p{e}"] == {"mu": mu, "sigma": sg} for e, (mu, sg) in expected.items())
    for t in tables:  # each table ranks its players as it placed them, the winner first
        rank = dict(zip(t["seats"], t["rating_scores"]))
        assert [rank[e] for e in t["order"]] == sorted(rank.values(), reverse=True)
        assert rank[t["winner"]] > max(v for e, v in rank.items() if e != t["winner"])


# --- a real tournament ---------------------------------------------------------------------------

AGENTS = ["greedy", "random", "passive", "greedy", "random", "greedy", "passive", "random"]


@pytest.fixture(scope="module")
def real_ladder():
    return tournament(AGENTS, format="ladder", seed=5, target_score=10)


def test_a_real_tournament_is_reproducible_from_its_seed(real_ladder):
    again = tournament(AGENTS, format="ladder", seed=5, target_score=10)
    assert json.dumps(again) == json.dumps(real_ladder)
    assert json.dumps(tournament(AGENTS, format="ladder", seed=6, target_score=10)) != json.dumps(real_ladder)


def test_a_real_ladder_plays_matches_to_the_target(real_ladder):
    assert [len(r["tables"]) for r in real_ladder["rounds"]] == [2, 2, 2, 2]
    for rnd in real_ladder["rounds"]:
        for t in rnd["tables"]:
            w = t["seats"].index(t["winner"])
            assert t["totals"][w] >= 10 and t["totals"][w] == max(t["totals"])  # R8 (no cap at this target)
            assert t["recorded"][w] == 10
            assert [r for k, r in enumerate(t["recorded"]) if k != w] == [
                b for k, b in enumerate(t["before_final"]) if k != w
            ]
    assert set(real_ladder["ratings"]) == set(real_ladder["entrants"]) and len(real_ladder["entrants"]) == 8
    assert all(r["sigma"] < 25 / 3 for r in real_ladder["ratings"].values())


def test_a_real_elimination_and_the_json_round_trip(tmp_path):
    rec = tournament(AGENTS[:6], format="elimination", seed=1, target_score=10)
    assert [[len(t["seats"]) for t in r["tables"]] for r in rec["rounds"]] == [[3, 3], [4]]
    assert rec["champion"] == rec["rounds"][-1]["tables"][0]["winner"]
    path = tmp_path / "t.json"
    path.write_text(json.dumps(rec))
    loaded = json.loads(path.read_text())
    assert loaded == rec and format_tournament(loaded) == format_tournament(rec)
    text = format_tournament(rec)
    assert "Final" in text and f"Champion: {rec['entrants'][rec['champion']]}" in text


def test_cli_writes_the_record(tmp_path):
    out = tmp_path / "t.json"
    res = subprocess.run(
        [sys.executable, "-m", "nertz_env.training.tournament", "--format", "ladder", "--agents", *AGENTS[:4],
         "--seed", "3",
         "--target-score", "10", "--rules", "stock_draw=1", "--out", str(out)],
        capture_output=True, text=True, timeout=300,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    assert "Table ladder (R8)" in res.stdout and "Standings" in res.stdout
    data = json.loads(out.read_text())
    assert data["format"] == "ladder" and data["seed"] == 3 and data["config"]["stock_draw"] == 1
    assert data["entrants"] == ["greedy", "random", "passive", "greedy#2"]
    bad = subprocess.run(
        [sys.executable, "-m", "nertz_env.training.tournament", "--format", "ladder",
         "--agents", "greedy", "random", "random"],
        capture_output=True, text=True, timeout=300,
    )
    assert bad.returncode == 2 and "multiple of 4" in bad.stderr and "Traceback" not in bad.stderr


def test_nertz_tournament_front_end(capsys):
    assert cli.main(["tournament", "--agents", "greedy", "random", "passive", "--target-score", "5"]) == 0
    text = capsys.readouterr().out
    assert "Single elimination (R8)" in text and "Champion:" in text


def test_partners_rules_are_refused_by_name():
    """A tournament decides its matches and advances by each player's own total, so R8's teams of
    partners would be played and then ignored (before, ``--rules partners=true`` was accepted)."""
    bad = subprocess.run(
        [sys.executable, "-m", "nertz_env.training.tournament", "--format", "ladder", "--agents", *AGENTS[:4],
         "--rules", "partners=true"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert "argument --rules: partners=true: a tournament seats, scores and advances each player alone" in bad.stderr
