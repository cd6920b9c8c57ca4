"""What every standard analysis needs: the resolved table, stable id stems, rates from parts, tables and charts.

The constants the offline Coder used to paste into each script (view, ids, units, rate definitions, wording) are
computed here from the job's profile at run time, so an LLM Coder calling ``run_standard`` gets exactly the same.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from insightloom.analysis import choices, joins
from insightloom.analysis.catalog import AnalysisSpec
from insightloom.analysis.ids import slug, slug_map
from insightloom.analysis.wording import texts
from insightloom.analysis_utils.trackers import job_profile
from insightloom.errors import BadInputError

logger = logging.getLogger(__name__)

TOP_N = 5
RATE_PREFERENCE = ("roas", "ctr", "conversion_rate", "cpc")


@dataclass(frozen=True)
class Context:
    """One standard analysis being run.

    Attributes:
        spec: The analysis.
        language: ``en`` or ``ko``.
        table: The table's profile entry.
        view: Its view name (what checks query).
        prefix: Id prefix: ``""`` for the first input, ``<view slug>_`` when the plan names a table.
        tx: Wording of the kind in the language (findings templates and descriptions).
        plan_item: The plan item text the section answers.
    """

    spec: AnalysisSpec
    language: str
    table: dict[str, Any]
    view: str
    prefix: str
    tx: dict[str, str]
    plan_item: str


def resolve_table(spec: AnalysisSpec, profile: dict[str, Any]) -> dict[str, Any]:
    """The profile table the analysis reads, after checking that every column exists and may be analysed.

    Raises:
        BadInputError: Unknown table or column, or a personal-data / identifier column.
        JoinRefused: A joined view the profile's relationships refuse.
    """
    tables = choices.tables(profile)
    if joins.is_joined(spec.view):
        joins.resolve(profile, str(spec.view))  # a refused join names its keys and the fix (JoinRefused)
    table = choices.find_table(profile, spec.view) if spec.view else (tables[0] if tables else None)
    if table is None:
        raise BadInputError(f"The plan names table '{spec.view}', which is not in the data profile.",
                            fix="use a view name from cache/profile.json")  # fmt: skip
    for name in spec.columns():
        col = choices.column(table, name)
        if col is None:
            raise BadInputError(f"The plan names column '{name}', which table '{table.get('view')}' does not have.",
                                fix="use the exact column names of the data profile")  # fmt: skip
        if not choices.usable(col):
            raise BadInputError(f"Column '{name}' holds personal data or identifiers and may not be analysed.",
                                fix="remove it from the plan")  # fmt: skip
    return table


def context(spec: AnalysisSpec, language: str = "en", profile: dict[str, Any] | None = None) -> Context:
    """Resolve the analysis against the job's profile (read from the job folder unless given)."""
    lang = "ko" if language == "ko" else "en"
    table = resolve_table(spec, profile if profile is not None else job_profile())
    prefix = f"{slug(table['view'])}_" if spec.view else ""
    return Context(spec, lang, table, str(table["view"]), prefix, texts(spec.kind, lang), spec.item_text(lang))


def stems(table: dict[str, Any], names: Sequence[str] | None = None) -> dict[str, str]:
    """ASCII id stems of columns: the profile's ``calc_id_stem``, else unique slugs (``매출액`` -> ``maechulaek``).

    ``names`` restricts the slugs' uniqueness to those columns (the overview's analysed columns).
    """
    cols = table.get("columns", [])
    chosen = [str(c.get("name")) for c in cols] if names is None else list(names)
    result = slug_map(chosen)
    for col in cols:
        if col.get("calc_id_stem") and col.get("name") in result:
            result[str(col["name"])] = str(col["calc_id_stem"])
    return result


def stem(table: dict[str, Any], name: str | None) -> str:
    """The id stem of one column (``rows`` for row counts)."""
    return stems(table).get(name or "", slug(name or "rows"))


@dataclass(frozen=True)
class Rate:
    """A rate recomputed from its parts, with its label in the job's language."""

    key: str
    numerator: str
    denominator: str
    scale: float
    unit: str | None
    label: str


def rates(table: dict[str, Any], language: str) -> dict[str, Rate]:
    """The table's rates from parts: the profile's ``rate_pairs`` when present, else the name rules."""
    pairs = table.get("rate_pairs")
    if isinstance(pairs, list) and pairs:
        found = {}
        for pair in pairs:
            key = str(pair.get("key"))
            label = choices.rate_label(key, language) if key in choices.RATE_KINDS else str(pair.get("label") or key)
            found[key] = Rate(key, str(pair["numerator"]), str(pair["denominator"]), float(pair.get("scale") or 1),
                              pair.get("unit"), label)  # fmt: skip
        return found
    return {
        key: Rate(key, d.numerator, d.denominator, d.scale, d.unit, choices.rate_label(key, language))
        for key, d in choices.rate_defs(table).items()
    }


def semantic(table: dict[str, Any], name: str | None) -> str | None:
    """The profile's ``semantic`` of a column (None when unknown)."""
    col = choices.column(table, name) if name else None
    return str(col["semantic"]) if col and col.get("semantic") else None


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A small markdown table (``|`` inside a cell becomes ``/``)."""
    lines = ["| " + " | ".join(str(h) for h in header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    lines += ["| " + " | ".join(str(cell).replace("|", "/") for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def plain(text: str) -> str:
    """Chart text: no markdown backticks."""
    return text.replace("`", "")


def axis_label(what: str, unit: str | None) -> str:
    """An axis label carrying the unit from the profile: ``Total Revenue (USD)``, ``Survived rate (%)``.

    Counts of rows read ``Rows`` as they are; another count reads ``Units (count)``; no unit leaves the label bare.
    """
    text = plain(what).strip()
    if not unit:
        return text
    if unit == "count" and any(word in text.lower() for word in ("rows", "count", "건수", "행")):
        return text
    return f"{text} ({unit})"


def planned_specs(profile: dict[str, Any] | None = None) -> list[AnalysisSpec]:
    """The standard analyses of the job's plan (``plan.md``, Coder items in any state), in plan order.

    A job without a plan (a script run by hand) gets the offline Planner's choice for its profile, so every script
    of one job reads the same list either way.
    """
    from insightloom.analysis.catalog import parse_item
    from insightloom.analysis.planning import plan_analyses
    from insightloom.analysis_utils.jobdir import job_dir
    from insightloom.plan import parse_plan

    profile = profile if profile is not None else job_profile()
    path = job_dir() / "plan.md"
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return plan_analyses(profile)
    section = parse_plan(text).section("coder")
    specs = [parse_item(item.text, profile) for item in (section.items if section else [])]
    found = [spec for spec in specs if spec is not None]
    return found or plan_analyses(profile)


def breakdown_candidates(ctx: Context, measure: str | None) -> list[str]:
    """Every column the plan breaks ``measure`` down by in this table (the driver claim's candidates).

    Every breakdown script of a job computes the same list (the plan's, in plan order, with this breakdown's own
    column added when the plan lacks it), so exactly one breakdown can be the main driver of a measure. A breakdown
    by a parent's column across a joined view (``orders+customers``) counts for its child table: the candidates are
    compared over :func:`candidates_view`, where all of them exist.
    """
    profile = job_profile()
    names = [str(spec.by) for spec in _same_measure(ctx, measure, profile)]
    if ctx.spec.by and ctx.spec.by not in names:
        names.append(str(ctx.spec.by))
    table = choices.find_table(profile, candidates_view(ctx, measure)) or ctx.table
    return [name for name in dict.fromkeys(names) if choices.column(table, name) is not None]


def _same_measure(ctx: Context, measure: str | None, profile: dict[str, Any]) -> list[AnalysisSpec]:
    """The plan's breakdowns of ``measure`` whose view reads this breakdown's table (itself or joined)."""
    child = _child(ctx.view)
    return [spec for spec in planned_specs(profile) if spec.kind == "breakdown" and spec.by and
            spec.measure == measure and _child(view_of(spec, profile)) == child]  # fmt: skip


def _child(view: str | None) -> str | None:
    return view.split(joins.JOIN_SEP)[0] if view else None


def candidates_view(ctx: Context, measure: str | None) -> str:
    """The view every breakdown candidate of ``measure`` exists in: the table itself, or, when the plan breaks it
    down by parents' columns too, the table joined with each of those parents (a left join along a key keeps every
    row once, so the table's own groups are the same there)."""
    profile = job_profile()
    parents: list[str] = []
    for spec in _same_measure(ctx, measure, profile):
        view = view_of(spec, profile) or ""
        parents += view.split(joins.JOIN_SEP)[1:]
    parents += ctx.view.split(joins.JOIN_SEP)[1:]
    if not parents:
        return ctx.view
    return joins.JOIN_SEP.join([str(_child(ctx.view)), *dict.fromkeys(parents)])


def view_of(spec: AnalysisSpec, profile: dict[str, Any] | None = None) -> str | None:
    """The view a spec reads (the first input's when it names none)."""
    profile = profile if profile is not None else job_profile()
    table = choices.find_table(profile, spec.view) if spec.view else next(iter(choices.tables(profile)), None)
    return str(table["view"]) if table else None
