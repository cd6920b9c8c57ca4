"""The statistics-questions benchmark: its frozen question set and halves, and a pinned subset of its questions
asked of offline jobs (every answer correct or abstained naming what is missing, none wrong)."""

from __future__ import annotations

import importlib
import json
import re
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
if str(BENCHMARKS) not in sys.path:
    sys.path.append(str(BENCHMARKS))  # appended, so no benchmark script shadows an installed module
bench = importlib.import_module("ask_stats_eval")
#: Three tables of the first (tuning) half, all their questions: 23, four of them unsupported.
SUBSET_TABLES = ("carData/Davis", "openintro/hsb2", "carData/Prestige")
LINE = re.compile(
    r"half=(?P<half>\w+) questions=(?P<questions>\d+) answerable=(?P<answerable>\d+) unsupported=(?P<unsupported>\d+) "
    r"correct=(?P<correct>\d+) abstained=(?P<abstained>\d+) wrong=(?P<wrong>\d+) "
    r"abstain_when_unsupported=(?P<awu>[\d.]+) held_answered=(?P<held>[\d.]+) p50_ms=(?P<p50>\d+)"
)


def _questions() -> list[dict]:
    return json.loads((BENCHMARKS / "ask_stats" / "questions.json").read_text(encoding="utf-8"))["questions"]


def test_the_question_set_is_frozen_in_halves_by_table_and_disjoint_from_the_second_sample() -> None:
    questions = _questions()
    tables = {q["table"] for q in questions}
    assert len(questions) >= 200 and len(tables) >= 30
    assert sum(q["kind"] == "unsupported" for q in questions) >= 40
    assert sum(q["lang"] == "ko" for q in questions) >= 40
    halves = {t: {q["half"] for q in questions if q["table"] == t} for t in tables}
    assert all(len(h) == 1 for h in halves.values())  # a table is in one half only
    assert {q["half"] for q in questions} == {"first", "held_out"}
    second = json.loads((BENCHMARKS / "real_tables" / "second_sample.json").read_text(encoding="utf-8"))
    assert not tables & {t["table"] for t in second["tables"]}
    expected = json.loads((BENCHMARKS / "ask_stats" / "expected.json").read_text(encoding="utf-8"))["questions"]
    assert {q["id"] for q in questions} <= set(expected)
    assert all(q["must_name"] for q in questions if q["kind"] == "unsupported")


def test_the_expected_answers_never_use_the_product() -> None:
    source = (BENCHMARKS / "ask_stats" / "expected.py").read_text(encoding="utf-8")
    imports = [line for line in source.splitlines() if re.match(r"\s*(?:import|from)\s", line)]
    assert imports and not any("insightloom" in line for line in imports)
    assert "scipy" in source and "pandas" in source


@pytest.mark.e2e
def test_a_pinned_subset_answers_right_or_abstains_naming_what_is_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ids = [q["id"] for q in _questions() if q["table"] in SUBSET_TABLES]
    assert len(ids) == 23
    assert bench.main(["--half", "first", "--only", ",".join(ids), "--jobs", str(tmp_path), "--workers", "2"]) == 0
    found = LINE.search(capsys.readouterr().out.strip().splitlines()[-1])
    assert found, "no summary line"
    line = {k: float(v) for k, v in found.groupdict().items() if k != "half"}
    assert line["questions"] == 23 and line["wrong"] == 0
    assert line["correct"] == line["answerable"]
    assert line["awu"] == 1.0 and line["held"] == 1.0


#: The blind sets, each written after the ones before it: its tables are in none of theirs.
BLIND_SETS = ("third", "fourth", "fifth", "sixth", "seventh")


@pytest.mark.parametrize("name", BLIND_SETS)
def test_a_blind_set_is_held_out_and_disjoint_from_every_earlier_table(name: str) -> None:
    folder = BENCHMARKS / "ask_stats" / name
    assert bench.SETS[name] == folder
    questions = json.loads((folder / "questions.json").read_text(encoding="utf-8"))["questions"]
    tables = json.loads((folder / "tables.json").read_text(encoding="utf-8"))["tables"]
    expected = json.loads((folder / "expected.json").read_text(encoding="utf-8"))["questions"]
    assert 80 <= len(questions) <= 130 and 10 <= len(tables) <= 12
    assert {q["half"] for q in questions} == {"held_out"} and {t["half"] for t in tables} == {"held_out"}
    assert {q["table"] for q in questions} == {t["table"] for t in tables}
    assert all(30 <= t["rows"] <= 20_000 for t in tables)
    assert sum(q["lang"] == "ko" for q in questions) >= 15
    assert sum(q["kind"] == "unsupported" for q in questions) >= 15
    assert all(q["must_name"] for q in questions if q["kind"] == "unsupported")
    assert {q["id"] for q in questions} == set(expected)
    for q in questions:
        if q["kind"] == "answerable":
            parts = expected[q["id"]]["parts"]
            assert len(parts) == len(q["parts"]) and all(p.get("value") is not None or "yes" in p for p in parts)
    earlier = [BENCHMARKS / "ask_stats" / "tables.json", BENCHMARKS / "ask_stats" / "second" / "tables.json"]
    earlier += [BENCHMARKS / "ask_stats" / s / "tables.json" for s in BLIND_SETS[: BLIND_SETS.index(name)]]
    earlier += list((BENCHMARKS / "real_tables").glob("*sample.json"))
    used = {t["table"] for other in earlier for t in json.loads(other.read_text(encoding="utf-8"))["tables"]}
    items = {t.split("/", 1)[1].lower() for t in used}
    assert not {t["table"] for t in tables} & used
    assert not {t["table"].split("/", 1)[1].lower() for t in tables} & items


def test_a_calculation_of_another_operation_with_the_same_value_does_not_hold_a_question() -> None:
    question = {
        "parts": [{"type": "number", "op": "count_rows", "where": [{"column": "reports", "op": ">", "value": 0}]}]
    }
    parts = [{"type": "number", "value": 259}]
    calc = {
        "id": "reports_outliers",
        "value": 259,
        "verification_status": "verified",
        "source_columns": ["reports"],
        "description": "IQR outliers of reports",
        "basis": {"op": "iqr_outliers", "columns": ["reports"]},
    }
    assert bench.held_by([calc], question, parts) == ""
    counted = {**calc, "id": "reports_above_0", "basis": {"op": "count", "columns": []}}
    assert bench.held_by([calc, counted], question, parts) == "reports_above_0"
