"""The standard overview, KPI and breakdown analyses as product functions (``run_standard``): every tracked number
has a passing check, and the findings read the way an analyst would sign them (ties, plurals, rates, units)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from tracker_job import calcs, checked, make_job

from insightloom.analysis.catalog import AnalysisSpec
from insightloom.analysis_utils import ResultSection, calc_refs, flush_checks, read_results, run_standard
from insightloom.claims.contradictions import contradictions
from insightloom.errors import BadInputError
from insightloom.report.numbers import find_numbers

TITANIC = pd.DataFrame(
    {
        "Sex": ["male", "female", "female", "male", "male", "female"],
        "Pclass": ["1", "1", "2", "2", "3", "3"],
        "Survived": [0, 1, 1, 0, 1, 1],
        "Fare": [71.28, 53.1, 13.0, 26.0, 7.25, 8.05],
        "Year": [1912] * 6,
        "total_tickets": [1, 1, 2, 1, 1, 2],
    }
)
TITANIC_COLUMNS = {
    "Sex": {"role": "category", "aggregation": "none"},
    "Pclass": {"role": "category", "aggregation": "none"},
    "Survived": {"role": "measure", "aggregation": "mean", "semantic": "binary_outcome"},
    "Fare": {"role": "measure", "aggregation": "mean", "semantic": "currency", "unit": "USD"},
    "Year": {"role": "category", "aggregation": "none", "semantic": "year"},
    "total_tickets": {"role": "measure", "aggregation": "sum"},
}


@pytest.fixture
def titanic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return make_job(tmp_path, monkeypatch, TITANIC, TITANIC_COLUMNS)


def _run(spec: AnalysisSpec, language: str = "en") -> None:
    run_standard(spec.item_text(language))


def _sections(job: Path) -> list[ResultSection]:
    return read_results(job / "all_results.txt")


def test_every_standard_number_has_a_passing_check(titanic: Path) -> None:
    _run(AnalysisSpec("overview"))
    _run(AnalysisSpec("kpi", measures=("Survived", "Fare", "total_tickets")))
    _run(AnalysisSpec("breakdown", measure="total_tickets", by="Pclass", agg="sum"))
    _run(AnalysisSpec("breakdown", measure="Fare", by="Sex", agg="mean"))
    _run(AnalysisSpec("breakdown", by="Sex", agg="count"))
    assert flush_checks() == checked(titanic) >= 25
    sections = _sections(titanic)
    assert len(sections) == 5 and all(s.table for s in sections)  # every section with numbers has a table
    tracked = {key for key, calc in calcs(titanic).items() if calc.get("kind") != "claim"}
    cited = {ref for s in sections for ref in calc_refs("\n".join([*s.findings, s.table]))}
    assert cited == tracked  # every number is cited somewhere, none is invented
    claims = {key: calc for key, calc in calcs(titanic).items() if calc.get("kind") == "claim"}
    text = "\n".join(f for s in sections for f in s.findings)
    printed = [calc for key, calc in claims.items() if "{{claim:" + key + "}}" in text]
    assert {c["claim_kind"] for c in printed} == {"driver", "concentration", "comparison"}
    assert not contradictions(printed)  # a main driver spread evenly is recorded but never printed with it
    assert (titanic / "charts" / "breakdown_total_tickets_by_pclass.png").is_file()


def test_a_text_outcome_rate_names_its_yes_value_without_a_typed_digit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    frame = pd.DataFrame({"Kyphosis": ["absent", "present", "absent", "absent"], "Age": [71.0, 158.0, 128.0, 2.0]})
    outcome = {"role": "category", "aggregation": "mean", "semantic": "binary_outcome", "positive_value": "present"}
    columns = {"Kyphosis": outcome, "Age": {"role": "measure", "aggregation": "mean"}}
    job = make_job(tmp_path, monkeypatch, frame, columns)
    _run(AnalysisSpec("kpi", measures=("Kyphosis", "Age")))
    flush_checks()
    assert calcs(job)["kyphosis_rate"]["value"] == pytest.approx(25.0)
    assert calcs(job)["kyphosis_rate"]["description"] == "Rate of Kyphosis (share of present)"
    finding = next(f for f in _sections(job)[0].findings if "{{calc:kyphosis_rate}}" in f)
    assert "the share of `present` values" in finding and find_numbers(finding) == []


def test_kpis_give_a_rate_for_an_outcome_a_mean_for_prices_and_never_total_total(titanic: Path) -> None:
    _run(AnalysisSpec("kpi", measures=("Survived", "Fare", "total_tickets", "Year")))
    flush_checks()
    got = calcs(titanic)
    assert got["survived_rate"]["value"] == pytest.approx(100 * 4 / 6) and got["survived_rate"]["unit"] == "%"
    assert "fare_total" not in got and got["fare_mean"]["unit"] == "USD"  # a price is averaged, never summed
    assert got["fare_mean"]["decimals"] == 2  # 29.78 USD keeps its cents
    assert not any(key.startswith("year_") for key in got)  # a year is no KPI at all
    section = _sections(titanic)[0]
    text = " ".join(section.findings)
    assert "`total_tickets` sums to {{calc:total_tickets_total}}" in text and "Total `total_tickets`" not in text
    outcome = next(f for f in section.findings if "{{calc:survived_rate}}" in f)
    assert outcome == "`Survived` is a yes/no outcome; its rate (the share of yes values) is {{calc:survived_rate}}."
    assert find_numbers(outcome) == []  # a typed digit ("0/1", "1s") made render refuse it, so no report had it
    assert section.table.splitlines()[0] == "| Measure | Value |"
    assert "| Fare, range | {{calc:fare_min}} to {{calc:fare_max}} |" in section.table


def test_a_binary_outcome_is_broken_down_as_its_rate_per_group(titanic: Path) -> None:
    _run(AnalysisSpec("breakdown", measure="Survived", by="Sex", agg="sum"))
    assert flush_checks() == checked(titanic)
    got = calcs(titanic)
    assert got["survived_rate_by_sex_1"]["value"] == 100.0 and got["survived_rate_by_sex_1"]["unit"] == "%"
    assert got["survived_rate_by_sex_2"]["value"] == pytest.approx(100 / 3)
    assert not any("_share_" in key for key in got)
    section = _sections(titanic)[0]
    assert section.title == "`Survived` rate by `Sex`"
    assert "the highest `Survived` rate is in {{calc:survived_rate_by_sex_top}}" in section.findings[0]


def test_ties_are_named_as_ties_and_counts_read_singular(titanic: Path) -> None:
    _run(AnalysisSpec("breakdown", by="Pclass", agg="count"))
    _run(AnalysisSpec("breakdown", measure="total_tickets", by="Sex", agg="sum"))
    flush_checks()
    all_tied, top_tied = _sections(titanic)
    assert all_tied.findings == ["All {{calc:rows_by_pclass_groups}} `Pclass` groups have the same value, "
                                 "{{calc:rows_by_pclass_1}}.",
                                 "By group totals, {{claim:claim_concentration_rows_by_pclass}}."]  # fmt: skip
    assert calcs(titanic)["claim_concentration_rows_by_pclass"]["value"] == "spread_evenly"
    assert "rows_by_pclass_top" not in calcs(titanic)  # no "the largest is 1 ... the smallest is 1"
    assert calcs(titanic)["total_tickets_by_sex_top"]["value"] == "female"
    text = " ".join(top_tied.findings)
    assert "smallest group is {{calc:total_tickets_by_sex_bottom}}" in text


def test_tied_top_groups_and_one_row_groups_in_both_languages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    frame = pd.DataFrame({"Team": ["A", "B", "C", "C"], "Goals": [3, 3, 1, 1]})
    job = make_job(tmp_path, monkeypatch, frame, {"Team": {"role": "category", "aggregation": "none"},
                                                  "Goals": {"role": "measure", "aggregation": "sum"}})  # fmt: skip
    _run(AnalysisSpec("breakdown", by="Team", agg="count"))
    _run(AnalysisSpec("breakdown", measure="Goals", by="Team", agg="sum"), "ko")
    assert flush_checks() == checked(job)
    rows, goals = _sections(job)
    assert "the largest is {{calc:rows_by_team_top}} with {{calc:rows_by_team_1}} rows" in rows.findings[0]
    assert "The smallest groups, tied, are {{calc:rows_by_team_bottom}}" in rows.findings[1]
    assert calcs(job)["rows_by_team_bottom"]["value"] == "A, B"
    assert "동률" in goals.findings[0] and calcs(job)["goals_by_team_top"]["value"] == "A, B"
    assert calcs(job)["goals_by_team_1"]["decimals"] == 0


def test_the_overview_of_one_row_says_row_not_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    frame = pd.DataFrame({"Amount": [2.0], "Note": [None]})
    job = make_job(tmp_path, monkeypatch, frame, {"Amount": {"role": "measure", "aggregation": "sum"},
                                                  "Note": {"role": "text", "aggregation": "none"}})  # fmt: skip
    _run(AnalysisSpec("overview"))
    assert flush_checks() == checked(job)
    findings = _sections(job)[0].findings
    assert findings[0].startswith("The data has {{calc:rows}} row and {{calc:columns}} columns;")
    assert "and {{calc:complete_rows}} rows have no missing value" in findings[1]
    assert (
        findings[2] == "{{calc:columns_with_missing}} analysed column has missing values: {{calc:most_missing_column}}."
    )


def test_run_standard_refuses_an_item_it_cannot_read(titanic: Path) -> None:
    with pytest.raises(BadInputError, match="Not a standard analysis item"):
        run_standard("Break down `Nope` by `Sex`: group totals, top group and its share, bar chart")
