"""Track a claim (a verdict such as "rising" or "main driver") the way numbers are tracked, and cite it.

``track_claim("trend", "claim_trend_revenue", "sales", sql, {"measure": "Revenue", "period": "month"})`` runs the
claim's test (:func:`insightloom.claims.stats.run_test`, the product's NumPy code) on its inputs, writes the record
into ``calculation_metadata.json`` through the same locked write path as ``track_calculation`` (``kind: "claim"``,
the verdict as ``value``, its ``evidence`` and ``check: "stat:trend"``), and returns ``{{claim:claim_trend_revenue}}``
for the findings. The inputs are the rows the caller computed with pandas (``rows=``), else what the claim's SQL
returns from the job's views. Either way the SQL is re-run with SciPy when the script ends and by the Validator, so
a claim whose SQL and rows disagree fails the script with the cause.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from insightloom.analysis_utils.calculations import _write_records, build_record, to_python_type
from insightloom.analysis_utils.exit_checks import remember
from insightloom.analysis_utils.jobdir import job_dir
from insightloom.analysis_utils.joins import expand_joined_views, join_record, views_in
from insightloom.analysis_utils.trackers import column_facts, job_profile, table_of
from insightloom.calc_refs import claim_reference
from insightloom.claims.stats import run_test
from insightloom.claims.table import kind_of
from insightloom.claims.wording import claim_text

logger = logging.getLogger(__name__)


def query_rows(sql: str) -> pd.DataFrame:
    """The inputs ``sql`` returns (as columns) over the job's views, on the Validator's locked-down DuckDB connection.

    Raises:
        ValueError: The SQL does not run; the message has DuckDB's error and the views to use.
    """
    from insightloom.validation.checks import open_connection
    from insightloom.validation.claim_checks import fetch_rows
    from insightloom.validation.jobfiles import load_views

    views = load_views(job_dir(), warn_unrecorded=False)
    con = open_connection(views, None, [sql])
    try:
        rows = fetch_rows(con, sql, sorted(views))
    finally:
        con.close()
    if isinstance(rows, str):
        raise ValueError(f"{rows}; query the job's views ({', '.join(sorted(views))}) and return the test's columns")
    return rows


def _unit(view: str, params: Mapping[str, Any]) -> str | None:
    """The measure's unit from the profile (for the wording of slopes, means and differences)."""
    measure = params.get("measure")
    if not measure:
        return None
    try:
        return column_facts(view, str(measure)).unit
    except ValueError:
        return None  # a derived measure ("Revenue per order") has no profile column


def track_claim(
    kind: str,
    claim_id: str,
    view: str,
    sql: str,
    params: Mapping[str, Any] | None = None,
    *,
    rows: Sequence[Sequence[Any]] | pd.DataFrame | None = None,
    description: str,
    formula: str | None = None,
    columns: Sequence[str] | str | None = None,
    importance: str = "high",
) -> str:
    """Test a claim, record it in ``calculation_metadata.json`` and return its ``{{claim:ID}}`` reference.

    Args:
        kind: ``trend``, ``driver``, ``concentration``, ``correlation``, ``outlier``, ``sentinel`` or ``comparison``.
        claim_id: Stable ASCII id (``claim_trend_revenue_month``).
        view: The profile view the claim is about (its file becomes ``source_file``).
        sql: DuckDB SQL over the job's views returning the test's input rows (see docs/claims.md): trend ``v`` per
            period in period order; driver ``(breakdown, grp, v)`` at row level for every candidate breakdown, or
            ``(breakdown, grp, n, mean, m2)`` per group; concentration ``(grp, v)`` group totals; correlation
            ``(x, y)``; outlier and sentinel ``v``; comparison ``(grp, v)`` of exactly two groups, or
            ``(grp, n, mean, var)`` per group.
        params: ``measure`` and ``by`` (the breakdown, when there is one) name what the claim is about; also
            ``period`` and ``agg`` (trend wording), ``x``/``y`` (correlation), ``a``/``b`` (comparison: a vs b),
            ``unit`` (default: the measure's unit in the profile).
        rows: The inputs computed with pandas; when None, the SQL's rows are the inputs.
        description: What the claim is about, for the references list.
        formula: How it was tested (default: the test's description in the claims table).
        columns: The source columns.
        importance: ``high``, ``medium`` or ``low``.

    Returns:
        ``{{claim:<claim_id>}}``, which renders to the verdict's sentence and a reference marker.

    Raises:
        ValueError: Unknown kind, bad id, SQL that does not run, or rows of the wrong shape (each names the fix).
    """
    spec = kind_of(kind)
    clean: dict[str, Any] = dict(to_python_type(dict(params or {})))
    table = table_of(view)
    names = [str(c) for c in ([columns] if isinstance(columns, str) else columns or [])]
    if spec.name == "correlation" and len(names) == 2:
        clean.setdefault("x", names[0])  # the wording names the pair
        clean.setdefault("y", names[1])
    if "unit" not in clean:
        clean["unit"] = _unit(table.view, clean)
    joined = views_in(sql, job_profile())  # a claim across a joined view carries its definition, like a check
    join = join_record(joined, job_profile()) if joined else None
    sql = expand_joined_views(sql, job_profile()) if joined else sql
    inputs = query_rows(sql) if rows is None else rows
    verdict = run_test(spec.name, inputs, clean)
    record = build_record(
        claim_id,
        verdict.verdict,
        description,
        formula or spec.test,
        table.source,
        columns,
        importance,
        check=f"stat:{spec.name}",
        join=join,
    )
    record.update(
        kind="claim",
        claim_kind=spec.name,
        evidence=dict(verdict.evidence),
        test={"name": spec.name, "sql": sql.strip(), "params": clean},
    )
    record["sentence"] = claim_text(record, "en")
    folder = job_dir()
    _write_records([record], folder)
    remember(folder, record)  # re-computed with SciPy from its SQL when the script ends
    logger.debug("tracked claim %s = %s", claim_id, verdict.verdict)
    return claim_reference(claim_id)
