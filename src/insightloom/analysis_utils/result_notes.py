"""``all_results.txt``: the structured notes the Coder leaves for the Reporter.

The file is the bus between agents: agents pass ~30-token summaries and the Reporter reads this file when it writes.
A fixed section format (below) lets the offline Reporter rebuild findings and tables deterministically::

    ## <section title>
    - plan_item: <exact plan item text>
    - script: code/03_breakdown.py
    - calculations: calc_a, calc_b
    - charts: charts/breakdown_category.png
    ### findings
    - <sentence with {{calc:<id>}} references only (and {{claim:<id>}} for a tracked claim)>
    ### table
    | Category | Amount |
    | --- | --- |
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from insightloom.analysis_utils.calculations import METADATA_FILE, load_calculations
from insightloom.analysis_utils.jobdir import job_dir
from insightloom.calc_refs import calc_ids, claim_ids, claim_reference, find_near_misses, reference, unknown_id_advice

logger = logging.getLogger(__name__)

RESULTS_FILE = "all_results.txt"
_META_KEYS = ("plan_item", "script", "calculations", "charts")


@dataclass
class ResultSection:
    """One section of ``all_results.txt`` (one analysis task)."""

    title: str
    plan_item: str = ""
    script: str = ""
    calculations: list[str] = field(default_factory=list)
    charts: list[str] = field(default_factory=list)
    findings: list[str] = field(default_factory=list)
    table: str = ""


def calc_refs(text: str) -> list[str]:
    """The calculation ids referenced as ``{{calc:<id>}}`` in ``text``, in order, without repeats."""
    return calc_ids(text)


def _claim_problems(text: str, known: list[str], claims: list[str]) -> list[str]:
    """Claims cited as numbers, numbers cited as claims, and ``{{claim:ID}}`` ids that are no tracked claim."""
    problems = [
        f"'{calc_id}' is a tracked claim: write {claim_reference(calc_id)} instead of {reference(calc_id)}"
        for calc_id in calc_ids(text)
        if calc_id in claims
    ]
    for claim_id in claim_ids(text):
        if claim_id in claims:
            continue
        if claim_id in known:
            problems.append(
                f"'{claim_id}' is a number: write {reference(claim_id)} instead of {claim_reference(claim_id)}"
            )
        else:
            problems.append(unknown_id_advice(claim_id, claims, claim=True))
    return problems


def _reference_problems(
    text: str, cited: Iterable[str], known: list[str], claims: list[str] | None = None
) -> list[str]:
    """Near-miss references in ``text`` (their fix naming the tracked id meant), cited ids not tracked, and claims
    cited as numbers or the other way round."""
    claims = claims or []
    misses = find_near_misses(text, known or None, claims)
    problems = [f"{miss.written} is not a reference: {miss.advice()}" for miss in misses]
    tracked = {*known, *claim_ids(text)}  # a {{claim:ID}} that is no tracked claim is named below, once
    problems += [unknown_id_advice(calc_id, known) for calc_id in dict.fromkeys(cited) if calc_id not in tracked]
    return problems + _claim_problems(text, known, claims)


def _check_references(section: str, text: str, calculations: Iterable[str], folder: Path) -> None:
    """Refuse a section whose references would not resolve, so the script fails with the fix in its traceback.

    Raises:
        ValueError: A near miss such as ``{calc:x}`` or ``{{Calc:X}}`` (or any other ``{{...}}``), or an id that is
            not in ``calculation_metadata.json``.
    """
    records = load_calculations(folder)
    known = [str(c["id"]) for c in records]
    claims = [str(c["id"]) for c in records if c.get("kind") == "claim"]
    problems = _reference_problems(text, calculations, known, claims)
    if problems:
        lines = "\n".join(f"- {p}" for p in problems)
        raise ValueError(
            f"append_result({section!r}) was not written; fix these references and run the script again:\n{lines}\n"
            f"Cite only ids tracked with track_calculation(...) (they are in {METADATA_FILE}), as {{{{calc:<id>}}}}, "
            "and claims tracked with track_claim(...) as {{claim:<id>}}."
        )


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _current_script(folder: Path) -> str:
    """The running script relative to the job folder, when it lives inside it (the usual case)."""
    main = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if main is None or main.suffix != ".py":
        return ""
    try:
        return main.resolve().relative_to(folder).as_posix()
    except ValueError:
        return ""


def _split_text(text: str) -> tuple[list[str], list[str]]:
    """Free text from ``append_result(section, text)``: table lines go to the table, other lines become findings."""
    findings, table = [], []
    for raw in str(text or "").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("|"):
            table.append(line)
        else:
            findings.append(line[2:].strip() if line.startswith(("- ", "* ")) else line)
    return findings, table


def _table_rows(title: str, table: str) -> list[str]:
    """The table's rows; a line that is no ``|`` row would be read as a heading or a field of the file.

    Raises:
        ValueError: The table holds a line that does not start with ``|`` (named, with the fix).
    """
    rows = [row.strip() for row in table.strip().splitlines() if row.strip()]
    stray = [row for row in rows if not row.startswith("|")]
    if stray:
        raise ValueError(
            f"append_result({title!r}) was not written: table= holds {len(stray)} line(s) that are no table rows, "
            f"first {stray[0][:80]!r}.\nFix: pass only Markdown table rows ('| a | b |') as table=, and sentences "
            "as findings=[...]."
        )
    return rows


def _list_field(values: Iterable[str]) -> str:
    """A comma-separated field on one line (a line break would start a forged field or section)."""
    return ", ".join(_one_line(value) for value in values)


def format_section(section: ResultSection) -> str:
    """Render one section in the fixed ``all_results.txt`` format; every field and finding stays on one line.

    Raises:
        ValueError: The table holds a line that is no ``|`` row.
    """
    lines = [
        f"## {_one_line(section.title)}",
        f"- plan_item: {_one_line(section.plan_item)}",
        f"- script: {_one_line(section.script)}",
        f"- calculations: {_list_field(section.calculations)}",
        f"- charts: {_list_field(section.charts)}",
        "### findings",
    ]
    lines += [f"- {_one_line(f)}" for f in section.findings if _one_line(f)]
    rows = _table_rows(section.title, section.table)
    if rows:
        lines += ["### table", *rows]
    return "\n".join(lines) + "\n"


def _argument_error(name: str, value: object, fix: str) -> ValueError:
    shown = str(value)[:60]
    return ValueError(
        f"append_result(..., {name}=...) was not written: {name} is a {type(value).__name__} ({shown!r}).\nFix: {fix}."
    )


def _text_argument(name: str, value: object) -> str:
    """A text argument: a string; None is empty, and a number (a section called 5) is its text."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    raise _argument_error(name, value, f"pass {name} as a string")


def _list_argument(name: str, value: object) -> list[str]:
    """A list-of-strings argument: a bare string is a one-item list (not its characters); None is empty; paths
    (``pathlib.Path``) are their text."""
    fix = f"pass {name} as a list of strings, e.g. {name}=['...']"
    if value is None:
        return []
    if isinstance(value, str | os.PathLike):
        value = [value]
    if isinstance(value, dict | bytes) or not isinstance(value, Iterable):
        raise _argument_error(name, value, fix)
    entries: list[str] = []
    for index, entry in enumerate(value):
        if not isinstance(entry, str | os.PathLike):
            raise _argument_error(f"{name}[{index}]", entry, fix)
        entries.append(os.fspath(entry))
    return entries


def append_result(
    section: str,
    text: str = "",
    files: Iterable[str] = (),
    *,
    plan_item: str = "",
    script: str | None = None,
    calculations: Iterable[str] | None = None,
    charts: Iterable[str] | None = None,
    findings: Iterable[str] = (),
    table: str = "",
) -> str:
    """Append one analysis section to ``all_results.txt``.

    Args:
        section: Section title.
        text: Free-form notes; table lines (``|``) join the table, other lines become findings.
        files: Produced files; ``.png`` files are listed as charts, a ``.py`` file as the script.
        plan_item: The exact plan item this section completes.
        script: Script path relative to the job folder; default the running script.
        calculations: Calculation ids; default every ``{{calc:id}}`` and ``{{claim:id}}`` referenced in findings and
            table.
        charts: Chart paths relative to the job folder.
        findings: Sentences that reference numbers only as ``{{calc:<id>}}`` and claims ("rising", "main driver")
            only as ``{{claim:<id>}}``.
        table: A Markdown table (cells may hold ``{{calc:<id>}}``).

    Returns:
        The path of ``all_results.txt``.

    Raises:
        ValueError: A reference is a near miss (``{calc:x}``, ``{{Calc:x}}``...) or names an id that was not
            tracked; the message gives the exact correction and the closest tracked ids. Or an argument has the
            wrong type (a dict of findings), or the table holds lines that are no ``|`` rows (they would forge
            a section); the message names the argument and the fix. A bare string for a list argument
            (``findings="..."``) is a one-item list.
    """
    folder = job_dir()
    section, plan_item = _text_argument("section", section), _text_argument("plan_item", plan_item)
    table = _text_argument("table", table)
    extra_findings, extra_table = _split_text(_text_argument("text", text))
    file_list = _list_argument("files", files)
    all_findings = [*_list_argument("findings", findings), *extra_findings]
    table_text = "\n".join([table.strip(), *extra_table]).strip() if extra_table else table.strip()
    chart_list = _list_argument("charts", charts)
    chart_list += [f for f in file_list if f.lower().endswith(".png") and f not in chart_list]
    if script is None:
        script = next((f for f in file_list if f.endswith(".py")), "") or _current_script(folder)
    script = _text_argument("script", script)
    referencing = "\n".join([section, *all_findings, table_text])
    cited = calc_refs(referencing)
    claimed = claim_ids(referencing)
    calculations = [*cited, *claimed] if calculations is None else _list_argument("calculations", calculations)
    _check_references(section, referencing, [*cited, *calculations], folder)
    entry = ResultSection(
        title=section,
        plan_item=plan_item,
        script=script,
        calculations=list(calculations),
        charts=chart_list,
        findings=all_findings,
        table=table_text,
    )
    formatted = format_section(entry)  # refuses a forged table before anything is written
    path = folder / RESULTS_FILE
    existing = path.read_text(encoding="utf-8") if path.is_file() else ""
    separator = "\n" if existing and not existing.endswith("\n\n") else ""
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(separator + formatted)
    logger.debug("appended section %r to %s", section, path)
    return str(path)


def _split_list(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


def parse_results(text: str) -> list[ResultSection]:
    """Parse ``all_results.txt`` content; lines outside any section and unknown subsections are ignored."""
    sections: list[ResultSection] = []
    current: ResultSection | None = None
    block = "meta"
    table_rows: list[str] = []
    for raw in text.splitlines():
        line = raw.rstrip()
        if line.startswith("## "):
            if current is not None:
                current.table = "\n".join(table_rows)
            current, block, table_rows = ResultSection(title=line[3:].strip()), "meta", []
            sections.append(current)
        elif current is None:
            continue
        elif line.startswith("### "):
            block = line[4:].strip().lower()
        elif block == "meta" and line.startswith("- ") and ":" in line:
            key, _, value = line[2:].partition(":")
            key, value = key.strip(), value.strip()
            if key in ("calculations", "charts"):
                setattr(current, key, _split_list(value))
            elif key in _META_KEYS:
                setattr(current, key, value)
        elif block == "findings" and line.startswith("- "):
            current.findings.append(line[2:].strip())
        elif block == "table" and line.strip().startswith("|"):
            table_rows.append(line.strip())
    if current is not None:
        current.table = "\n".join(table_rows)
    return sections


def read_results(path: Path | str) -> list[ResultSection]:
    """Read and parse an ``all_results.txt`` file (an empty list when it does not exist yet)."""
    path = Path(path)
    if not path.is_file():
        return []
    return parse_results(path.read_text(encoding="utf-8"))
