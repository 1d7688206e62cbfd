"""The scoreboards' rules on hand-built sequences, each expected road derived by hand from the
published rules (`projections.roads`' docstring): ties on the big road's cells, the dragon's
tail, and the derived roads' column comparisons from their first cells."""

from __future__ import annotations

from domain.game.coup import Outcome
from projections.roads import (
    BigCell,
    Result,
    big_road,
    columns_of,
    derived_marks,
    is_pair,
    place,
    scoreboard,
)

B, P, T = Outcome.BANKER, Outcome.PUNTER, Outcome.TIE


def results(text: str) -> list[Result]:
    codes = {"B": B, "P": P, "T": T}
    return [Result(coup=i + 1, outcome=codes[c], punter=0, banker=0) for i, c in enumerate(text)]


def shape(columns: list[list[BigCell]]) -> list[str]:
    return ["".join(cell.outcome.value[0].upper() + "t" * cell.ties for cell in column)
            for column in columns]


def test_big_road_columns_and_ties_on_the_cell_before() -> None:
    assert shape(big_road(results("BBPPPBTP"))) == ["BB", "PPP", "Bt", "P"]
    assert shape(big_road(results("BTTPTB"))) == ["Btt", "Pt", "B"]


def test_ties_before_the_first_win_go_on_the_first_cell() -> None:
    assert shape(big_road(results("TBTTP"))) == ["Bttt", "P"]
    assert big_road(results("TT")) == []


def test_derived_roads_start_at_their_first_cells() -> None:
    lengths = [len(c) for c in big_road(results("BBPPPBTP"))]  # columns of 2, 3, 1, 1
    # big eye boy: (col 1, row 1) col 0 has row 1: red; (1, 2) col 0 stops just above: blue;
    # (2, 0) cols 1 and 0 differ: blue; (3, 0) cols 2 and 1 differ: blue.
    assert derived_marks(lengths, 1) == ["red", "blue", "blue", "blue"]
    # small road: nothing before (col 2, row 1) or (col 3, row 0); (3, 0) cols 2 and 0 differ
    assert derived_marks(lengths, 2) == ["blue"]
    # cockroach pig: nothing before (col 3, row 1) or (col 4, row 0)
    assert derived_marks(lengths, 3) == []


def test_derived_roads_read_red_for_a_repeating_pattern() -> None:
    # a perfect chop (BPBPBP...): every column one long, so every new column matches: red
    lengths = [len(c) for c in big_road(results("BPBPBPBP"))]
    assert derived_marks(lengths, 1) == ["red"] * 6
    assert derived_marks(lengths, 2) == ["red"] * 5
    assert derived_marks(lengths, 3) == ["red"] * 4
    # a long column beside a short one: further down, both cells empty read red
    assert derived_marks([1, 4], 1) == ["blue", "red", "red"]  # rows 1, 2, 3 of col 1


def test_derived_marks_make_columns_by_colour() -> None:
    assert columns_of(["red", "blue", "blue", "red"]) == [["red"], ["blue", "blue"], ["red"]]


def test_a_long_column_turns_right_at_the_bottom_and_under_a_tail() -> None:
    columns = [["B"] * 7, ["P"] * 6, ["B"]]
    positions = place(columns)
    assert positions[:7] == [(0, r) for r in range(6)] + [(1, 5)]
    # the next column starts at (1, 0) and goes down until the tail below it: turns at row 4
    assert positions[7:13] == [(1, 0), (1, 1), (1, 2), (1, 3), (1, 4), (2, 4)]
    assert positions[13] == (2, 0)


def test_a_new_column_skips_a_taken_top_cell() -> None:
    # on a grid one row high every column's second entry turns right along the top row
    assert place([["B", "B"], ["P"]], rows=1) == [(0, 0), (1, 0), (2, 0)]


def test_pairs_and_the_scoreboard_of_a_sequence() -> None:
    assert is_pair(["Kh", "Kd"]) and not is_pair(["Kh", "Qh"]) and not is_pair(["9s"])
    board = scoreboard("punter", results("BBPPPBTP"))
    assert [c.mark for c in board.big_cells] == ["banker", "banker", "punter", "punter",
                                                  "punter", "banker", "punter"]
    assert [(c.column, c.row, c.ties) for c in board.big_cells][5] == (2, 0, 1)
    assert board.big_eye_boy.columns == [["red"], ["blue", "blue", "blue"]]
    assert [(c.column, c.row) for c in board.big_eye_boy.cells] == [(0, 0), (1, 0), (1, 1),
                                                                     (1, 2)]
    assert board.small_road.columns == [["blue"]] and board.cockroach_pig.columns == []
    assert len(board.bead) == 8
