"""The report's summary table: its headline verified numbers, one row each, cited as ``{{calc:ID}}``.

Every report that prints verified numbers must hold at least one table; a summary table always fits. Any Reporter,
a hosted model (through the ``summary_table`` tool) or the offline one, gets the same table from
:func:`summary_table`, and the render tools add it to a report with references but no table (:func:`table_refusal`
says why one is needed and the fix). Rows are the verified calculations, most important first (then in
citations.json order; a trivial count such as the number of rows last, since it is no finding), labelled by their
description; a row whose description the renderer would refuse (a typed number in it) is left out.
"""

from __future__ import annotations

from pathlib import Path

from insightloom.calc_refs import CALC_REF_RE, reference
from insightloom.report.appendix import is_trivial
from insightloom.report.calcinfo import CalcInfo, load_calc_info
from insightloom.report.markdown_blocks import parse_markdown

__all__ = ["SUMMARY_HEADINGS", "has_table", "summary_table", "table_refusal", "with_summary_table"]

SUMMARY_HEADINGS = {"en": "Key figures", "ko": "핵심 수치"}
_HEADER = {"en": ("Measure", "Value"), "ko": ("항목", "값")}
_RANK = {"high": 0, "medium": 1, "low": 2}
DEFAULT_ROWS = 8


def _importance(job_dir: Path) -> dict[str, str]:
    from insightloom.validation.jobfiles import load_citations

    data = load_citations(job_dir, required=False) or {"citations": []}
    return {str(c.get("calculation_id")): str(c.get("importance") or "low") for c in data["citations"]}


def _is_number(info: CalcInfo) -> bool:
    return isinstance(info.value, int | float) and not isinstance(info.value, bool)


def _cell(text: str) -> str:
    """A description as a label cell: one line, no pipe, no reference of its own."""
    return CALC_REF_RE.sub("", " ".join(text.split())).replace("|", "/").strip()


def _rows(job_dir: Path, limit: int) -> list[tuple[str, str]]:
    calcs = load_calc_info(job_dir, required=False)
    rank = _importance(job_dir)
    order = {calc_id: i for i, calc_id in enumerate(calcs)}
    usable = [c for c in calcs.values() if c.status == "verified" and _is_number(c) and _cell(c.description)]
    usable.sort(key=lambda c: (is_trivial(c), _RANK.get(rank.get(c.calc_id, "low"), 2), order[c.calc_id]))
    rows: list[tuple[str, str]] = []
    seen: set[str] = set()
    for info in usable:
        label = _cell(info.description)
        if label.lower() in seen:
            continue  # two calculations described alike would read as one figure printed twice
        seen.add(label.lower())
        rows.append((label, reference(info.calc_id)))
    return rows[: limit * 2]  # twice as many candidates: rows the renderer refuses are dropped below


def _table(rows: list[tuple[str, str]], language: str) -> str:
    head = _HEADER["ko" if language == "ko" else "en"]
    lines = [f"| {head[0]} | {head[1]} |", "| --- | --- |"] + [f"| {label} | {ref} |" for label, ref in rows]
    return "\n".join(lines)


def summary_table(job_dir: Path, *, language: str = "en", limit: int = DEFAULT_ROWS) -> str:
    """A Markdown table ``label | {{calc:ID}}`` of the job's headline verified numbers; "" when there are none.

    Args:
        job_dir: The job folder (reads citations.json and calculation_metadata.json).
        language: ``en`` or ``ko``: the header row's words.
        limit: The most rows.
    """
    from insightloom.report.render import check_markdown

    job_dir = Path(job_dir)
    rows = _rows(job_dir, limit)
    if not rows:
        return ""
    # Each row checked alone: the renderer's own rules decide which descriptions may be printed as labels.
    kept = [row for row in rows if not check_markdown(_table([row], language), job_dir)][:limit]
    return _table(kept, language) if kept else ""


def has_table(markdown: str) -> bool:
    """Whether the Markdown holds a pipe table."""
    return any(block.kind == "table" for block in parse_markdown(markdown))


def table_refusal(markdown: str) -> str | None:
    """Why a report with references but no table may not be rendered, and the fix; None when it may."""
    if not CALC_REF_RE.search(markdown) or has_table(markdown):
        return None
    return (
        "Render refused: the report prints verified numbers but has no table. Every report needs at least one table. "
        "Fix: call summary_table() and paste the table it returns into the report (say, under the executive "
        "summary), or add a Markdown pipe table of your own (labels in the first column, {{calc:<id>}} in the "
        "others), then render again."
    )


def with_summary_table(markdown: str, table: str, *, language: str = "en") -> str:
    """The report with ``table`` under its own heading at the end of the first ``##`` section (before the next one)."""
    if not table:
        return markdown
    lines = markdown.rstrip("\n").splitlines()
    heading = SUMMARY_HEADINGS["ko" if language == "ko" else "en"]
    block = ["", f"### {heading}", "", *table.splitlines(), ""]
    sections = [i for i, line in enumerate(lines) if line.startswith("## ")]
    at = sections[1] if len(sections) > 1 else len(lines)
    head = lines[:at]
    while head and not head[-1].strip():
        head.pop()
    return "\n".join(head + block + lines[at:]) + "\n"
