"""Analyst-sanity lint: what an analyst would reject in a finished job folder, read from its files alone.

The lint never imports the product. It reads ``job.json``, ``cache/profile.json``, ``calculation_metadata.json``,
``citations.json``, the rendered ``final_report.docx`` (body text and tables, references excluded), the chart
sidecars and the job's copy of its input (``data/*.csv``, for sentinel codes), and judges the report by three
sources: the product's own profile, a hand-labelled expectation for the table (``expectations.json`` or
``second_expectations.json``, with the claims that are true of it), and rules of its own, so a column the profile
misclassifies (a ``Rank`` read as a measure) or a code it misses (99999) still shows up.

Finding kinds: ``forbidden_sum``, ``missing_trend``, ``cohort_trend``, ``no_table``, ``count_with_decimals``,
``tie_misreported``, ``clipped_chart_text``, ``repeated_ticks``, ``too_few_verified``, ``wrong_headline``; and, for
the verdicts a report states (``claim_rules.py``) and the columns it reads (``column_rules.py``): ``contradiction``,
``trend_from_two_points``, ``unqualified_claim``, ``claim_against_label``, ``sentinel_as_extreme``,
``unanalysed_column``.
"""

from __future__ import annotations

import fnmatch
import importlib.util
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


def _sibling(name: str) -> Any:
    """A rules module beside this file, loaded by path (``benchmarks`` is no package) under a name of its own."""
    qualified = f"real_tables_{name}"
    if qualified in sys.modules:
        return sys.modules[qualified]
    spec = importlib.util.spec_from_file_location(qualified, Path(__file__).with_name(f"{name}.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[qualified] = module
    spec.loader.exec_module(module)
    return module


claim_rules = _sibling("claim_rules")
column_rules = _sibling("column_rules")

#: An exit-0 report must print at least this many verified numbers (the issue's "no degenerate success").
MIN_VERIFIED = 3
REFERENCE_HEADINGS = ("References", "참고 문헌")

# Name tokens of columns that are never summed (years, codes, ranks, prices, rates, coordinates, ...): the lint's
# own rule, independent of the product's profile. "long" only counts beside a latitude column.
_NEVER_SUM = """year yr rank code zip zipcode fips id idx index price prices rate rates ratio pct percent percentage
perc avg mean median age temp temperature lat latitude lon lng longitude score scores rating ratings capita percap cum
cumulative"""
NEVER_SUM_TOKENS = frozenset(_NEVER_SUM.split())
# Clock and calendar codes: only as the last word of the name ("Day", "dep_hour"), so a "day_5" reading is no code.
CODE_LAST_TOKENS = frozenset({"hour", "weekday", "wday", "dow", "month", "day", "minute"})
TIME_NAME_TOKENS = frozenset({"year", "yr", "date", "time", "month", "period"})
COHORT_TOKENS = frozenset({"birth", "born", "dob", "hire", "hired", "founding", "founded", "foundingyear"})
YEAR_NAME = re.compile(r"^[Xy]?(1[89]\d\d|20\d\d)$")
TREND_WORDS = re.compile(r"\btrend|over time|\bper (year|month|week|day|period)\b|추세|추이", re.I)
TIE_WORDS = re.compile(r"\bti(e|ed|es)\b|\bequal\b|동률|공동", re.I)
LARGEST_WORDS = re.compile(r"\b(largest|highest|biggest|top|most|leads?)\b", re.I)
NUMBER = re.compile(r"[-−]?\d[\d,]*(?:\.\d+)?")
# The number printed right before a citation marker, with an optional unit ("38.5% [9]", "1,204 votes [3]").
PRINTED = re.compile(r"(?P<num>[-−]?[$€£₩]?\d[\d,]*(?:\.\d+)?)\s?(?P<unit>%|[A-Za-z$€£₩원]{1,6})?\s*$")

_AGG_SQL = re.compile(
    r"\b(?P<fn>SUM|AVG|MEDIAN|MIN|MAX|QUANTILE_CONT)\(\s*(?:CASE\s+WHEN\s+.*?\s+THEN\s+)?(?:CAST\(\s*)?"
    r'"(?P<col>(?:[^"]|"")+)"(?:\s+AS\s+\w+\s*\))?\s*(?:END\s*)?[),]',
    re.I | re.S,
)
_AGG_PY = re.compile(r"\[\s*['\"](?P<col>[^'\"]+)['\"]\s*\]\s*\.(?P<fn>sum|mean|median|min|max|quantile)\(")


@dataclass(frozen=True)
class Finding:
    """One thing an analyst would reject: its kind, what it is about, and why."""

    kind: str
    subject: str
    detail: str

    def __str__(self) -> str:
        return f"{self.kind}({self.subject}): {self.detail}"


@dataclass
class Report:
    """What the lint reads from a job folder."""

    status: str
    columns: dict[str, dict[str, Any]]
    tables: list[dict[str, Any]]
    calcs: dict[str, dict[str, Any]]
    cited: list[tuple[str, dict[str, Any]]]  # (marker number, calculation) in order of first appearance
    text: str
    grids: list[list[list[str]]]
    headings: list[str]
    charts: dict[str, dict[str, Any]]
    printed: dict[str, str] = field(default_factory=dict)  # marker number -> number printed before it
    paragraphs: list[str] = field(default_factory=list)  # body paragraphs (headings included), no table cells
    markers: dict[str, dict[str, Any]] = field(default_factory=dict)  # marker number -> its calculation, any status


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _docx(path: Path) -> tuple[str, list[list[list[str]]], list[str], list[str]]:
    """Body text (paragraphs up to the references, then table cells), table cells, heading texts and the body
    paragraphs alone of the rendered report."""
    if not path.is_file():
        return "", [], [], []
    from docx import Document  # the product's own dependency; imported late so the lint loads without it

    doc = Document(str(path))
    parts: list[str] = []
    headings: list[str] = []
    for paragraph in doc.paragraphs:
        text = paragraph.text.strip()
        if text in REFERENCE_HEADINGS:
            break
        parts.append(paragraph.text)
        if paragraph.style is not None and str(paragraph.style.name).lower().startswith(("heading", "title")):
            headings.append(text)
    paragraphs = list(parts)
    grids = [[[cell.text for cell in row.cells] for row in table.rows] for table in doc.tables]
    for grid in grids:
        parts.extend(cell for row in grid for cell in row)
    return "\n".join(parts), grids, headings, paragraphs


def _cited(
    text: str, citations: list[dict[str, Any]], calcs: dict[str, dict[str, Any]]
) -> tuple[list[tuple[str, dict[str, Any]]], dict[str, str]]:
    """The verified calculations the text cites, in order of first marker, and the number printed before each."""
    by_marker = {str(c["citation_id"]).strip("[]"): c for c in citations if c.get("citation_id")}
    cited: list[tuple[str, dict[str, Any]]] = []
    printed: dict[str, str] = {}
    for match in re.finditer(r"\[(\d+)\]", text):
        number = match.group(1)
        citation = by_marker.get(number)
        if citation is None or citation.get("verification_status") != "verified":
            continue
        shown = PRINTED.search(text[max(0, match.start() - 40) : match.start()])
        if shown and number not in printed:
            printed[number] = shown.group("num") + ("%" if shown.group("unit") == "%" else "")
        if all(n != number for n, _ in cited):
            calc = calcs.get(citation.get("calculation_id", ""), {"id": citation.get("calculation_id", "")})
            cited.append((number, {**citation, **calc}))
    return cited, printed


def read_report(job: Path) -> Report:
    """Load the pieces of a finished (or stopped) job folder the lint needs; missing files read as empty."""
    status = (_json(job / "job.json") or {}).get("status", "missing")
    tables = (_json(job / "cache" / "profile.json") or {}).get("tables") or []
    columns = {str(c.get("name")): c for t in tables for c in t.get("columns") or []}
    calcs = {c["id"]: c for c in (_json(job / "calculation_metadata.json") or {}).get("calculations") or []}
    citations = (_json(job / "citations.json") or {}).get("citations") or []
    text, grids, headings, paragraphs = _docx(job / "final_report.docx")
    cited, printed = _cited(text, citations, calcs)
    charts = {p.stem: _json(p) or {} for p in sorted((job / "charts").glob("*.json"))}
    markers = {
        str(c["citation_id"]).strip("[]"): calcs.get(str(c.get("calculation_id")), {"id": c.get("calculation_id")})
        for c in citations
        if c.get("citation_id")
    }
    return Report(status, columns, tables, calcs, cited, text, grids, headings, charts, printed, paragraphs, markers)


def aggregated_columns(calc: dict[str, Any], functions: tuple[str, ...]) -> list[str]:
    """Columns a calculation aggregates with one of ``functions`` (sum, avg, ...), from its check, formula, recipe."""
    found: list[str] = []
    for match in _AGG_SQL.finditer(str(calc.get("check") or "")):
        if match.group("fn").lower() in functions:
            found.append(match.group("col").replace('""', '"'))
    py_names = {"avg": "mean"}
    for match in _AGG_PY.finditer(str(calc.get("formula") or "")):
        if match.group("fn") in {py_names.get(f, f) for f in functions}:
            found.append(match.group("col"))
    recipe = calc.get("recipe")
    if isinstance(recipe, dict) and str(recipe.get("op", "")).lower() in functions and recipe.get("column"):
        found.append(str(recipe["column"]))
    return list(dict.fromkeys(found))


def name_tokens(name: str) -> set[str]:
    """Lower-case word tokens of a column name: snake, dotted, spaced and camelCase parts."""
    spaced = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", name)
    return {t for t in re.split(r"[^A-Za-z0-9]+", spaced.lower()) if t}


def expected_column(expect: dict[str, Any], column: str) -> dict[str, Any]:
    """The hand label for ``column``: exact name first, then the first glob pattern (``X18*``) that matches."""
    labels = expect.get("columns") or {}
    if column in labels:
        return dict(labels[column])
    for pattern, label in labels.items():
        if any(ch in pattern for ch in "*?[") and fnmatch.fnmatchcase(column, pattern):
            return dict(label)
    return {}


def _sum_forbidden_by(column: str, report: Report, expect: dict[str, Any]) -> list[str]:
    """Which sources forbid summing ``column``: the profile, the expectations, the lint's name rule."""
    sources = []
    profile = report.columns.get(column, {})
    if profile.get("aggregation") not in (None, "sum"):
        sources.append(f"profile aggregation={profile['aggregation']}")
    label = expected_column(expect, column)
    if label.get("sum") is False:
        sources.append("expectations")
    tokens = name_tokens(column)
    hits = tokens & NEVER_SUM_TOKENS
    words = re.findall(r"[a-z]+", re.sub(r"(?<=[a-z])(?=[A-Z])", " ", column).lower())
    if words and words[-1] in CODE_LAST_TOKENS and not re.search(r"\d", column):
        hits.add(words[-1])
    if "long" in tokens and any({"lat", "latitude"} & name_tokens(c) for c in report.columns):
        hits.add("long")
    if hits and label.get("sum") is not True and not YEAR_NAME.match(column):
        sources.append(f"name rule ({', '.join(sorted(hits))})")
    return sources


def forbidden_sums(report: Report, expect: dict[str, Any]) -> list[Finding]:
    """Printed sums (totals, group totals, shares of a total) of a column that must not be summed."""
    summed: dict[str, list[str]] = {}
    for _, calc in report.cited:
        for column in aggregated_columns(calc, ("sum",)):
            summed.setdefault(column, []).append(str(calc.get("id")))
    forbidden = {column: sources for column in summed if (sources := _sum_forbidden_by(column, report, expect))}
    years = [column for column in forbidden if YEAR_NAME.match(column)]
    wide = len(years) >= 3  # a wide table's year columns summed across rows: one finding, not one per year
    groups = [(column, [column]) for column in forbidden if not (wide and column in years)]
    if wide:
        groups.append((f"{len(years)} year columns {years[0]}..{years[-1]}", years))
    findings = []
    for subject, columns in groups:
        ids = list(dict.fromkeys(i for column in columns for i in summed[column]))
        more = " ..." if len(ids) > 3 else ""
        detail = f"summed in {', '.join(ids[:3])}{more}; forbidden by {'; '.join(forbidden[columns[0]])}"
        findings.append(Finding("forbidden_sum", subject, detail))
    return findings


def _is_cohort(name: str) -> bool:
    return bool(name_tokens(name) & COHORT_TOKENS)


def _looks_like_year(column: dict[str, Any]) -> bool:
    """Whole numbers between 1800 and 2100 with at least four distinct values (the profile's min, max, distinct)."""
    low, high = column.get("min"), column.get("max")
    if not (isinstance(low, int | float) and isinstance(high, int | float)):
        return False
    return 1800 <= low <= high <= 2100 and int(column.get("distinct") or 0) >= 4


def time_axes(report: Report, expect: dict[str, Any]) -> list[str]:
    """The table's time axes: the hand label when there is one, else the profile's and the lint's own reading."""
    if "time_axis" in expect:
        return list(expect["time_axis"])
    axes = [
        str(t["time_axis"].get("column") or t["time_axis"].get("kind")) for t in report.tables if t.get("time_axis")
    ]
    for name, column in report.columns.items():
        if _is_cohort(name):
            continue
        tokens = name_tokens(name)
        if column.get("role") == "date" or (tokens & TIME_NAME_TOKENS and _looks_like_year(column)):
            axes.append(name)
    if sum(1 for name in report.columns if YEAR_NAME.match(name)) >= 3:
        axes.append("wide_years")
    return list(dict.fromkeys(axes))


def _trend_texts(report: Report) -> list[str]:
    """Headings, chart names/titles and calculation ids that speak of a trend."""
    texts = [h for h in report.headings if TREND_WORDS.search(h)]
    for stem, sidecar in report.charts.items():
        title = f"{stem} {sidecar.get('title', '')}"
        if stem.startswith("trend") or TREND_WORDS.search(title):
            texts.append(title)
    texts.extend(cid for cid in report.calcs if "trend" in cid.lower())
    return texts


def trend_findings(report: Report, expect: dict[str, Any]) -> list[Finding]:
    """A time axis with no trend in the report, or a trend over a cohort date (hire, birth, founding)."""
    findings = []
    trends = _trend_texts(report)
    axes = time_axes(report, expect)
    if axes and not trends and report.text:
        findings.append(Finding("missing_trend", ", ".join(axes), "the table has a time axis but no trend is reported"))
    cohorts = [c for c in report.columns if expected_column(expect, c).get("cohort") or _is_cohort(c)]
    for column in cohorts:
        if any(re.search(rf"(over|by|per) `?{re.escape(column)}`?\b", t) for t in trends):
            findings.append(Finding("cohort_trend", column, "a cohort date is read as a trend"))
    return findings


def _is_count(calc: dict[str, Any], report: Report, expect: dict[str, Any]) -> bool:
    """A count: unit ``count``, a "Number of ..." figure, or a sum of a whole-number count column."""
    if calc.get("unit") == "count" or str(calc.get("description", "")).lower().startswith(("number of", "count of")):
        return True
    summed = aggregated_columns(calc, ("sum",))
    whole = isinstance(calc.get("value"), int | float) and float(calc["value"]).is_integer()
    if len(summed) != 1 or not whole or aggregated_columns(calc, ("avg",)) or calc.get("unit") == "%":
        return False
    column = summed[0]
    if expected_column(expect, column).get("count"):
        return True
    return str(report.columns.get(column, {}).get("dtype", "")).startswith(("int", "Int", "uint"))


def count_decimals(report: Report, expect: dict[str, Any]) -> list[Finding]:
    """Counts printed with decimals ("137,062,633.00 votes"): one finding per counted column (or count figure)."""
    shown_as: dict[str, list[str]] = {}
    for number, calc in report.cited:
        shown = report.printed.get(number, "")
        if "." in shown and not shown.endswith("%") and _is_count(calc, report, expect):
            subject = next(iter(aggregated_columns(calc, ("sum",))), str(calc.get("id")))
            shown_as.setdefault(subject, []).append(f"{calc.get('id')} as {shown}")
    return [
        Finding("count_with_decimals", subject, f"printed {'; '.join(examples[:2])} ({len(examples)} figures)")
        for subject, examples in shown_as.items()
    ]


def _number(text: str) -> float | None:
    found = NUMBER.search(text.replace("−", "-"))
    if not found:
        return None
    try:
        return float(found.group(0).replace(",", ""))
    except ValueError:
        return None


def tie_findings(report: Report) -> list[Finding]:
    """A tie reported as a single largest group, or the same value called both the largest and the smallest."""
    findings = []
    sentences = claim_rules.sentences(report.text)
    for grid in report.grids:
        rows = [row for row in grid[1:] if len(row) >= 2]
        if len(rows) < 2:
            continue
        first, second = _number(rows[0][1]), _number(rows[1][1])
        if first is None or first != second:
            continue
        label = rows[0][0].strip()
        for sentence in sentences:
            # a citation marker "[10]" or a caption's "Figure 1:" is no label "10" or "1"
            words = re.sub(r"\[\d+\]|^(?:Figure|Table|그림|표)\s*\d+\s*[:.]", "", sentence)
            if label and label in words and LARGEST_WORDS.search(words) and not TIE_WORDS.search(words):
                findings.append(Finding("tie_misreported", label, f"tied with {rows[1][0].strip()!r} at {rows[0][1]}"))
                break
    for paragraph in report.text.split("\n"):
        top = re.search(r"largest (?:group )?is (.+?)(?: \[\d+\])? with (\S+)", paragraph)
        bottom = re.search(r"smallest (?:group )?is (.+?)(?: \[\d+\])? with (\S+)", paragraph)
        if top and bottom and not TIE_WORDS.search(paragraph):
            same_value = _number(top.group(2)) == _number(bottom.group(2))
            if top.group(1) == bottom.group(1) or same_value:
                findings.append(Finding("tie_misreported", top.group(1), "the largest and the smallest are the same"))
    return findings


def chart_findings(report: Report) -> list[Finding]:
    """Chart text matplotlib's layout found clipped, and tick labels repeated on one axis, as the chart sidecar records
    them (``clipped_texts``, ``repeated_tick_labels``: lists the product writes from the laid-out figure)."""
    findings = []
    for stem, sidecar in report.charts.items():
        for kind, key in (("clipped_chart_text", "clipped_texts"), ("repeated_ticks", "repeated_tick_labels")):
            found = sidecar.get(key) or []
            if found:
                findings.append(Finding(kind, stem, ", ".join(str(c)[:40] for c in list(found)[:3])))
    return findings


def lead_measure(report: Report) -> str | None:
    """The first measure the report aggregates, in the order its verified numbers and claims are printed (a claim
    leads with the measure its test is about: a driver claim of ``survived`` by ``sex``, a correlation's ``x``)."""
    for _, calc in report.cited:
        if calc.get("kind") == "claim":
            params = (calc.get("test") or {}).get("params") or {}
            # a correlation leads with its first variable (x); every other claim with its measure
            measure = str(params.get("x") if calc.get("claim_kind") == "correlation" else params.get("measure"))
            if measure in report.columns:
                return measure
            continue
        columns = aggregated_columns(calc, ("sum", "avg", "median", "min", "max", "quantile_cont", "mean"))
        if columns:
            return columns[0]
        sources = calc.get("source_columns") or []
        if len(sources) == 1 and not _is_count(calc, report, {}):  # a rate of a 0/1 or yes/no outcome, say
            return str(sources[0])
        if len(sources) == 2 and re.match(r"(sum|mean|rate) for ", str(calc.get("formula") or "")):
            return str(sources[1])  # one group's value: [group column, measure]
    return None


def headline_findings(report: Report, expect: dict[str, Any]) -> list[Finding]:
    """The report leads with another measure than the hand label says should lead."""
    wanted = expect.get("lead") or []
    if not wanted or not report.cited:
        return []
    lead = lead_measure(report)
    if lead in wanted:
        return []
    return [Finding("wrong_headline", lead or "no measure", f"should lead with one of {', '.join(wanted)}")]


def claim_texts(report: Report) -> list[str]:
    """The sentences a reader takes claims from: paragraphs and headings, table cells after the first column (a row
    label such as "Rising" is a group name, no verdict), chart titles and captions."""
    texts = [s for paragraph in report.paragraphs for s in claim_rules.sentences(paragraph)]
    texts += [cell for grid in report.grids for row in grid for cell in row[1:] if cell.strip()]
    for sidecar in report.charts.values():
        texts += [str(sidecar[key]) for key in ("title", "caption") if sidecar.get(key)]
    return texts


def count_columns(report: Report, expect: dict[str, Any]) -> set[str]:
    """Columns holding whole-number counts: labelled ``count`` by hand, or of an integer dtype in the profile."""
    labelled = {name for name in report.columns if expected_column(expect, name).get("count")}
    whole = {n for n, c in report.columns.items() if str(c.get("dtype", "")).startswith(("int", "Int", "uint"))}
    return labelled | {n for n in whole if not (name_tokens(n) & NEVER_SUM_TOKENS)}


def column_findings(job: Path, report: Report, expect: dict[str, Any]) -> list[Finding]:
    """Unnamed columns; counts with decimals in cells, prose and whole-number figures; sentinel codes printed as
    extremes or counted into a mean."""
    triples = column_rules.unanalysed_columns(report, YEAR_NAME, claim_rules.column_named)
    triples += column_rules.count_cells(report, count_columns(report, expect))
    functions = ("max", "min", "avg", "sum", "median")
    if any(aggregated_columns(calc, functions) for _, calc in report.cited):  # read the input copy only when needed
        numeric = column_rules.input_columns(job)
        whole = column_rules.whole_number_columns(numeric)
        triples += column_rules.whole_figures_with_decimals(report, whole, aggregated_columns)
        codes = column_rules.data_codes(numeric, report)
        triples += column_rules.sentinel_extremes(report, codes, aggregated_columns)
    return [Finding(*triple) for triple in triples]


def lint_job(job: Path, expect: dict[str, Any] | None = None) -> list[Finding]:
    """Every finding for the job folder ``job``, judged against its hand label ``expect`` when there is one."""
    expect = expect or {}
    report = read_report(job)
    findings: list[Finding] = []
    if report.status == "completed":
        if len(report.cited) < MIN_VERIFIED:
            findings.append(Finding("too_few_verified", str(len(report.cited)), f"fewer than {MIN_VERIFIED} printed"))
        if report.cited and not report.grids:
            findings.append(Finding("no_table", "report", "numbers but no table"))
    if report.text:
        findings += forbidden_sums(report, expect)
        findings += trend_findings(report, expect)
        findings += count_decimals(report, expect)
        findings += tie_findings(report)
        findings += headline_findings(report, expect)
        findings += [Finding(*t) for t in claim_rules.claim_findings(report, claim_texts(report), expect)]
        findings += column_findings(job, report, expect)
    findings += chart_findings(report)
    unique: dict[tuple[str, str], Finding] = {}
    for finding in findings:  # one finding per kind and subject: a tie seen in the text and the table counts once
        unique.setdefault((finding.kind, finding.subject), finding)
    return list(unique.values())
