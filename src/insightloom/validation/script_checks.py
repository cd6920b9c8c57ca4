"""Run the checks one script tracked, when the script ends, and explain every failure so the Coder fixes it now.

The Validator re-runs every check later over the stored metadata (:func:`insightloom.validation.validate_job`), but
it may not change a Coder value or a check, so a wrong view name or a fraction tracked as percent found only there
leaves the number ``needs_review`` for good. Running the same checks at script end, with the same views, connection
setup and comparison rule, turns each such slip into a failed script whose output names the cause and the fix.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from insightloom.claims.stats import run_test
from insightloom.validation.checks import CheckOutcome, run_checks
from insightloom.validation.claim_checks import (
    CLAIM_NEEDS_STAT,
    MISMATCH,
    ClaimOutcome,
    is_claim_without_test,
    is_stat_check,
    verify_claims,
)
from insightloom.validation.compare import as_number, values_match
from insightloom.validation.jobfiles import load_views

logger = logging.getLogger(__name__)

_MISSING_TABLE = re.compile(r"Table with name (\S+) does not exist", re.IGNORECASE)
_FILE_ACCESS = ("IO Error", "Permission Error", "enable_external_access", "read_csv", "read_parquet")


@dataclass(frozen=True)
class CheckFailure:
    """One tracked check that does not reproduce its value.

    Attributes:
        calc_id: The calculation's id.
        tracked: The value the script tracked.
        returned: What the check returned (None when it errored or had the wrong shape).
        error: DuckDB's error or the shape problem; empty when the check ran but returned another value.
        cause: The likely cause, in a few words.
        fix: What to change, concretely.
    """

    calc_id: str
    tracked: object
    returned: object
    error: str
    cause: str
    fix: str

    def to_text(self) -> str:
        """One line: id, tracked value, what the check gave, likely cause and fix."""
        got = f"check error: {self.error}" if self.error else f"check returned {_shown(self.returned)}"
        return f"- {self.calc_id}: tracked {_shown(self.tracked)}, {got}. Likely cause: {self.cause}. Fix: {self.fix}"


def _shown(value: object) -> str:
    # np.float64 is a float subclass whose repr is "np.float64(40.0)": show the plain number the model wrote.
    if isinstance(value, float):
        return repr(float(value))
    return repr(value)


def _listed(names: Sequence[str]) -> str:
    return ", ".join(sorted(names)) if names else "(none: this job folder has no cached tables)"


def _explain_error(error: str, views: Sequence[str]) -> tuple[str, str]:
    """Cause and fix for a check that DuckDB refused or that returned the wrong shape."""
    missing = _MISSING_TABLE.search(error)
    if missing:
        return "unknown view or table name", f"use one of the job's views: {_listed(views)}"
    if "Referenced column" in error:
        return "unknown column name", 'copy the column name from the profile and double-quote it ("Amount")'
    if any(marker in error for marker in _FILE_ACCESS):
        return "the check reads a file", f"query the job's views only ({_listed(views)}), never files or paths"
    if "Parser Error" in error:
        return "SQL syntax", "write one valid DuckDB SELECT returning one value"
    if "no rows" in error:
        return "wrong shape (no row)", "aggregate (SUM, COUNT(*), ...) so the query returns exactly one row"
    if "more than one row" in error:
        return (
            "wrong shape (more than one row)",
            "aggregate or filter to one row (ORDER BY ... LIMIT 1 for a top group)",
        )
    if "columns" in error:
        return "wrong shape (more than one column)", "select only the value, one column"
    if "single SQL query" in error or "empty" in error:
        return "not a single query", "write one SELECT statement with no ';' inside"
    return "the SQL does not run", "fix the SQL so DuckDB runs it over the job's views"


def _is_percent_slip(value: object, result: object, unit: object) -> tuple[str, str] | None:
    """Percent versus fraction: one side is 100 times the other."""
    left, right = as_number(value), as_number(result)
    if left is None or right is None or left == right == 0:
        return None
    if values_match(left, 100 * right).match:
        return "percent vs fraction", "% values are stored in percent (45.2); make the check return percent too"
    if values_match(100 * left, right).match:
        where = "the value" if unit == "%" else "the value (or the check)"
        return "percent vs fraction", f"% values are stored in percent (45.2); track {where} in percent too"
    return None


def _is_rounding_slip(value: object, result: object) -> tuple[str, str] | None:
    left, right = as_number(value), as_number(result)
    if left is None or right is None or isinstance(value, str):
        return None
    if any(round(right, digits) == left for digits in range(0, 3)):
        return "the tracked value was rounded", "track the unrounded value; the report rounds when it prints"
    return None


def _explain_mismatch(record: Mapping[str, Any], result: object) -> tuple[str, str]:
    """Cause and fix for a check that ran but returned NULL or another value."""
    value = record.get("value")
    if result is None:
        return (
            "NULL semantics (the check returned NULL)",
            "SUM/AVG over an empty set give NULL (check the filter; pandas' sum of nothing is 0: COALESCE(SUM(x), 0)); "
            "COUNT(col) skips NULLs while COUNT(*) counts rows",
        )
    slip = _is_percent_slip(value, result, record.get("unit")) or _is_rounding_slip(value, result)
    if slip:
        return slip
    if isinstance(value, str) or isinstance(result, str):
        return "the strings differ", "strings must match exactly (case, spaces, date format); break ties the same way"
    return (
        "the check computes something else",
        "make the check and the pandas code agree on rows and filters (pandas skips NaN and groupby drops NULL keys), "
        "grouping and denominator",
    )


def explain(record: Mapping[str, Any], outcome: CheckOutcome, views: Sequence[str]) -> CheckFailure | None:
    """The failure of one check, or None when it reproduces the tracked value under the Validator's rule."""
    if not outcome.error and values_match(record.get("value"), outcome.value).match:
        return None
    if outcome.error:
        cause, fix = _explain_error(outcome.error, views)
    else:
        cause, fix = _explain_mismatch(record, outcome.value)
    returned = None if outcome.error else outcome.value
    return CheckFailure(str(record.get("id")), record.get("value"), returned, outcome.error, cause, fix)


def run_script_checks(job_dir: Path, records: Sequence[Mapping[str, Any]]) -> tuple[int, list[CheckFailure]]:
    """Run the given tracked calculations' checks as one DuckDB batch over the job's views.

    Args:
        job_dir: The job folder (its ``cache/profile.json`` names the views).
        records: Tracked calculations, each with ``id``, ``value``, ``check`` and optionally ``unit``.

    Returns:
        How many checks reproduced their value, and a :class:`CheckFailure` for each one that did not.

    Raises:
        ValidationError: The job's profile cannot be read, or a cached table it records is a link, missing, or no
            longer the file intake wrote (see :func:`~insightloom.validation.jobfiles.load_views`).
    """
    views = load_views(Path(job_dir), warn_unrecorded=False)
    claims = [r for r in records if is_stat_check(r)]  # "stat:<test>": the test re-run on its SQL, not SQL alone
    untested = [r for r in records if is_claim_without_test(r)]
    numbers = [r for r in records if not is_stat_check(r) and r not in untested]
    # The Validator's own batching and connection setup, so a check that passes here runs the same way there.
    outcomes, _queries = run_checks([str(r["check"]) for r in numbers], views)
    failures = [f for r, o in zip(numbers, outcomes, strict=True) if (f := explain(r, o, list(views))) is not None]
    failures += [CheckFailure(str(r.get("id")), r.get("value"), None, CLAIM_NEEDS_STAT,
                              "a claim record without its statistical test", "track it with track_claim(kind, ...)")
                 for r in untested]  # fmt: skip
    if claims:
        failures += claim_failures(claims, verify_claims(claims, views, test=run_test))
    return len(records) - len(failures), failures


def claim_failures(records: Sequence[Mapping[str, Any]], outcomes: Sequence[ClaimOutcome]) -> list[CheckFailure]:
    """The claims whose re-computation from their SQL disagrees, each with its cause and fix."""
    failures = []
    for record, outcome in zip(records, outcomes, strict=True):
        if outcome.verified:
            continue
        if outcome.reason.startswith(MISMATCH):
            cause = f"the claim's SQL rows do not give its verdict and evidence ({outcome.reason})"
            fix = (
                "make rows= exactly what the claim's SQL returns (same filter, NULL handling and period order), "
                "or leave rows= out so the SQL's rows are the test's inputs"
            )
            failures.append(CheckFailure(str(record.get("id")), record.get("value"), outcome.verdict, "", cause, fix))
        else:
            cause, fix = "the claim cannot be re-computed", outcome.reason
            failures.append(CheckFailure(str(record.get("id")), record.get("value"), None, outcome.reason, cause, fix))
    return failures


def failure_report(failures: Sequence[CheckFailure], total: int) -> str:
    """What a script prints when some of its checks fail: one line per check, then what to do."""
    lines = [f"insightloom: {len(failures)} of {total} tracked check(s) do not reproduce their value:"]
    lines += [failure.to_text() for failure in failures]
    lines.append("Fix each check (or the value) and run the script again; a failing check is never verified.")
    return "\n".join(lines)
