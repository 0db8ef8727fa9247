"""Markdown tables: the header, its rule, a line a row; blank and empty cells."""

from __future__ import annotations

from parabit.markdown import BLANK, table


def test_a_table_is_its_header_its_rule_and_a_line_a_row():
    assert table(["set", "r"], [("STS 2012", 0.512), ["SICK", 7]]) == (
        "| set | r |\n"
        "|---|---|\n"
        "| STS 2012 | 0.512 |\n"
        "| SICK | 7 |")


def test_without_rows_it_is_the_header_and_its_rule():
    assert table(("a", "b", "c"), iter(())) == "| a | b | c |\n|---|---|---|"


def test_blank_is_a_blank_cell_and_an_empty_text_keeps_its_two_spaces():
    lines = table(["group", "pairs", "hours", "note"], [("**all**", BLANK, "**2.9**", "")]).splitlines()
    assert lines[2] == "| **all** | | **2.9** |  |"


def test_cells_are_written_as_an_f_string_writes_them():
    assert table(["code", "seeds"], [["`a | b`", None]]).splitlines()[2] == "| `a | b` | None |"
