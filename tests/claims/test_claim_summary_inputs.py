"""A driver or a comparison over one row per group (the kind's ``summary``) gives the verdict and evidence of the
same test over the data rows, in both implementations; claim inputs are fetched as columns, with a row cap."""

from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd
import pytest
from test_claim_stats import _EDGE_INPUTS, _random_inputs

from insightloom.claims import run_test
from insightloom.claims.inputs import labels
from insightloom.validation import claim_checks
from insightloom.validation.claim_checks import compare, fetch_rows, recompute


def _driver_summary(rows: list[tuple]) -> list[tuple]:
    """(breakdown, grp, n, mean, m2) per group, as pandas computes it (NULL keys and missing values left out)."""
    frame = pd.DataFrame(rows, columns=["breakdown", "grp", "v"])
    frame["v"] = pd.to_numeric(frame["v"], errors="coerce")
    frame = frame[frame["grp"].notna() & np.isfinite(frame["v"])]
    grouped = frame.groupby(["breakdown", "grp"])["v"]
    stats = grouped.agg(["size", "mean"]).assign(m2=grouped.var(ddof=0) * grouped.size())
    return [(b, g, int(n), float(mean), float(m2)) for (b, g), (n, mean, m2) in stats.iterrows()]


def _comparison_summary(rows: list[tuple]) -> list[tuple]:
    frame = pd.DataFrame(rows, columns=["grp", "v"])
    frame = frame[frame["grp"].notna()]
    grouped = frame.groupby("grp")["v"]
    return [
        (g, int(n), float(mean), float(var)) for g, (n, mean, var) in grouped.agg(["size", "mean", "var"]).iterrows()
    ]


_SUMMARY = {"driver": _driver_summary, "comparison": _comparison_summary}


def _agree(kind: str, rows: list[tuple], params: dict) -> None:
    summary = _SUMMARY[kind](rows)
    by_rows = run_test(kind, rows, params)
    for verdict in (run_test(kind, summary, params), recompute(kind, summary, params)):
        outcome = compare({"value": by_rows.verdict, "evidence": by_rows.evidence}, verdict)
        assert outcome.verified, (kind, outcome.reason)


@pytest.mark.parametrize("kind", sorted(_SUMMARY))
def test_one_row_per_group_gives_the_row_level_verdict_and_evidence(kind: str) -> None:
    for seed in range(40):
        rows, params = _random_inputs(kind, seed)
        _agree(kind, rows, params)


@pytest.mark.parametrize(("kind", "rows"), [(kind, rows) for kind in _SUMMARY for rows in _EDGE_INPUTS[kind] if rows])
def test_edge_cases_agree_in_the_summary_form(kind: str, rows: list[tuple]) -> None:
    _agree(kind, rows, {"by": "A", "a": "A", "b": "B"})


def test_a_constant_measure_explains_nothing_in_the_summary_form() -> None:
    rows = [(name, f"g{i % k}", 0.1) for name, k in (("A", 3), ("B", 7)) for i in range(50)]
    summary = _driver_summary(rows)
    for verdict in (run_test("driver", summary, {"by": "A"}), recompute("driver", summary, {"by": "A"})):
        assert verdict.evidence["eta_sq"] == 0.0 and verdict.verdict == "weak"


def test_a_group_split_over_two_summary_rows_is_pooled_exactly() -> None:
    rows, params = _random_inputs("comparison", 3)
    a_values = np.array([v for g, v in rows if g == "A"])
    first, rest = a_values[:4], a_values[4:]
    split = [("A", len(part), float(part.mean()), float(part.var(ddof=1))) for part in (first, rest)]
    summary = split + [row for row in _comparison_summary(rows) if row[0] != "A"]
    by_rows = run_test("comparison", rows, params)
    assert compare({"value": by_rows.verdict, "evidence": by_rows.evidence}, run_test("comparison", summary, params))
    assert run_test("comparison", summary, params).evidence["n_a"] == len(a_values)


def test_another_width_names_both_forms() -> None:
    with pytest.raises(ValueError, match=r"or one row per group: breakdown, grp, n, mean, m2"):
        run_test("driver", [("A", "x", 1, 2)], {"by": "A"})


def test_float_keys_label_like_sql_integers() -> None:
    assert list(labels(pd.Series([3.0, np.nan, 4.0]))) == ["3", None, "4"]
    assert list(labels(pd.Series([3.0, 0.5]))) == ["3", "0.5"]
    assert list(labels(pd.Series(["a", None]))) == ["a", None]


def test_claim_inputs_are_fetched_as_columns_and_capped(monkeypatch: pytest.MonkeyPatch) -> None:
    con = duckdb.connect()
    con.execute("CREATE TABLE t AS SELECT i % 3 AS g, CAST(i AS DECIMAL(10, 2)) AS v FROM range(10) r(i)")
    frame = fetch_rows(con, "SELECT g, v FROM t ORDER BY v", ["t"])
    assert isinstance(frame, pd.DataFrame) and frame["v"].dtype == float and list(frame["v"])[:3] == [0.0, 1.0, 2.0]
    monkeypatch.setattr(claim_checks, "MAX_CLAIM_ROWS", 5)
    refused = fetch_rows(con, "SELECT g, v FROM t", ["t"])
    assert isinstance(refused, str) and "more than 5 rows" in refused and "one row per group" in refused


def test_a_null_breakdown_name_is_a_breakdown_of_its_own_in_both_forms() -> None:
    """A model's SQL may return a NULL breakdown: it is the breakdown "None" (no crash), the same in both
    implementations and both forms."""
    rng = np.random.default_rng(1)
    rows = [("A" if i % 2 else None, f"g{i % 3}", float(i % 3 * 5 + rng.normal())) for i in range(300)]
    summary = [("None" if b is None else b, *rest) for b, *rest in _driver_summary([("A" if b else "None", g, v)
               for b, g, v in rows])]  # fmt: skip
    for inputs in (rows, summary):
        ours, theirs = run_test("driver", inputs, {"by": "None"}), recompute("driver", inputs, {"by": "None"})
        assert ours.evidence["breakdowns"] == 2 and ours.evidence["epsilon_sq"] > 0.9
        assert compare({"value": ours.verdict, "evidence": ours.evidence}, theirs).verified
