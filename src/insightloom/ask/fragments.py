"""A finished job's knowledge base: short, cited fragments that follow-up questions are answered from.

Fragments come from ``all_results.txt`` sections, verified calculations, report paragraphs, chart captions, column
definitions and the data profile. Only verified numbers ever enter one:

- text written with ``{{calc:ID}}`` references is rendered with the verified value and its id
  (``836 [calc:rows]``); a sentence (or table row) that references a calculation that is not verified is dropped
  whole, and any other typed number in it is removed by the report's own claim rule (``report.labels``);
- text without references (the profile, column definitions) enters with every digit removed (a word that a number
  starts, "20s", goes whole); the numbers it could hold reach the base only as verified calculations (the row
  count...).

Personal and identifier columns (the profile's ``pii`` and ``identifier`` roles) enter no fragment: they are masked or
never analysed, so nothing about them can be answered, and their names ("Phone", "Overall Rank") would only make a
question about them look answerable.

Ids ``F1``, ``F2``... follow a fixed source order, so a job folder always yields the same ids; a rebuild (after a
follow-up analysis added calculations) keeps the id of every fragment that did not change.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from insightloom.analysis_utils.result_notes import RESULTS_FILE, parse_results
from insightloom.calc_refs import CALC_REF_RE
from insightloom.errors import InsightloomError
from insightloom.fileio import is_regular_file, list_regular_files, read_json, read_text, write_json
from insightloom.report.calcinfo import CalcInfo, load_calc_info
from insightloom.report.labels import Labels, is_label_cell, load_labels, uncited_claims
from insightloom.report.markdown_blocks import parse_markdown, plain_text, split_row
from insightloom.storage.ids import job_id_of
from insightloom.validation.jobfiles import CITATIONS_FILE, METADATA_FILE, PROFILE_FILE

logger = logging.getLogger(__name__)

__all__ = [
    "KNOWLEDGE_FILE",
    "KnowledgeFragment",
    "build_knowledge",
    "calc_tag",
    "index_job",
    "load_knowledge",
]

KNOWLEDGE_FILE = "ask/knowledge.json"
# 2: personal and identifier columns left out, words that a number starts removed whole.
KNOWLEDGE_VERSION = 2
REPORT_FILE = "report.md"
JOB_FILE = "job.json"
VERIFIED = "verified"
# The files a fragment is built from: knowledge.json older than any of them is stale.
_SOURCE_FILES = (JOB_FILE, RESULTS_FILE, CITATIONS_FILE, METADATA_FILE, REPORT_FILE, PROFILE_FILE)
_IMPORTANCE = {"high": 1.0, "medium": 0.6, "low": 0.3}
# A fragment without calculations weighs by where it comes from.
_BASE_IMPORTANCE = {"results": 0.5, "calculation": 0.5, "report": 0.5, "chart": 0.3, "columns": 0.3, "profile": 0.3}
_SENTENCE_END_RE = re.compile(r"(?<=[.!?。！？])\s+")
# A word that starts with a number goes whole ("20s", "20대" without digits would read "s", "대"); other digits go
# alone, so a code keeps its letters ("FRUITPROMO5" -> "FRUITPROMO").
_NUMBER_WORD_RE = re.compile(r"(?<![^\s,;:()\[\]/])\d[^\s,;:()\[\]/]*")
_DIGITS_RE = re.compile(r"\d+(?:[.,]\d+)*")
_SPACES_RE = re.compile(r"[ \t]+")
_STRAY_COMMA_RE = re.compile(r",(?=\s*[,;)])")
# Brackets left empty, or holding only the words that introduced the removed examples ("(e.g., )", "(예: 등)").
_EMPTY_BRACKETS_RE = re.compile(r"\(\s*(?:e\.g\.|i\.e\.|예)?[\s,;:]*(?:등|etc\.?)?\s*\)")
#: Column roles whose columns enter no fragment (see the module docstring).
HIDDEN_ROLES = frozenset({"pii", "identifier"})
# A reference stands in as one private-use character while typed numbers are removed, so no rule reads its digits.
_PLACEHOLDER = 0xE000


@dataclass(frozen=True)
class KnowledgeFragment:
    """One piece of a job's knowledge base.

    Attributes:
        id: ``F1``, ``F2``... stable for a job folder.
        text: What the model reads; its only numbers are verified values, each followed by its ``[calc:ID]``.
        job_id: The job's id (job.json).
        source: ``results``, ``calculation``, ``report``, ``chart``, ``columns`` or ``profile``.
        section: The section title, heading, chart path, column name or table it comes from.
        calc_ids: The verified calculations whose values it holds, in order.
        values: Calculation id -> its formatted verified value, exactly as it appears in ``text``.
        date: The job's ``updated_at`` (ISO 8601 UTC).
        importance: 0..1: its calculations' importance (high 1, medium 0.6, low 0.3), else by source.
    """

    id: str
    text: str
    job_id: str
    source: str
    section: str
    calc_ids: tuple[str, ...] = ()
    values: dict[str, str] = field(default_factory=dict)
    date: str = ""
    importance: float = 0.5

    def to_json(self) -> dict[str, Any]:
        """The fragment as a JSON object (``calc_ids`` as a list)."""
        data = asdict(self)
        data["calc_ids"] = list(self.calc_ids)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> KnowledgeFragment:
        """The fragment from :meth:`to_json` output."""
        return cls(**{**data, "calc_ids": tuple(data.get("calc_ids", ())), "values": dict(data.get("values", {}))})


def calc_tag(calc_id: str) -> str:
    """How a fragment names the calculation behind the value printed before it: ``[calc:ID]``."""
    return f"[calc:{calc_id}]"


@dataclass(frozen=True)
class _Rendered:
    """A text with its references filled in."""

    text: str
    values: dict[str, str]


@dataclass
class _Job:
    """What every source needs: the job's verified calculations, its data labels and its metadata."""

    root: Path
    job_id: str
    date: str
    verified: dict[str, CalcInfo]
    importance: dict[str, float]
    labels: Labels


def _tidy(text: str) -> str:
    """Spacing left by removed numbers collapsed, empty brackets dropped."""
    text = _EMPTY_BRACKETS_RE.sub("", _STRAY_COMMA_RE.sub("", _SPACES_RE.sub(" ", text)))
    return re.sub(r"\s+([,.;:!?])", r"\1", text).strip()


def _remove(text: str, spans: Iterable[tuple[int, int]]) -> str:
    for lo, hi in sorted(spans, reverse=True):
        text = text[:lo] + text[hi:]
    return text


def render(markdown: str, job: _Job, *, label_cell: bool = False) -> _Rendered | None:
    """``markdown`` (one sentence or table cell) as plain text with verified values; None when it cites another.

    Typed numbers that are claims by the report's rule are removed, so only rendered values remain as numbers.
    """
    ids = [m.group(1) for m in CALC_REF_RE.finditer(markdown)]
    if any(calc_id not in job.verified for calc_id in ids):
        return None
    order = list(dict.fromkeys(ids))
    marked = CALC_REF_RE.sub(lambda m: chr(_PLACEHOLDER + order.index(m.group(1))), markdown)
    text, labels = plain_text(marked)
    claims = uncited_claims(text, job.labels, protected=labels, label_cell=label_cell)
    text = _remove(text, [(token.start, token.end) for token in claims])
    values = {calc_id: job.verified[calc_id].formatted() for calc_id in order}
    for i, calc_id in enumerate(order):
        text = text.replace(chr(_PLACEHOLDER + i), f"{values[calc_id]} {calc_tag(calc_id)}")
    return _Rendered(_tidy(text), values)


def _scrub(text: str) -> str:
    """Free text with no references (profile, column definitions): every digit removed, with the word when a number
    starts it."""
    return _tidy(_DIGITS_RE.sub("", _NUMBER_WORD_RE.sub("", text)))


def _sentences(markdown: str, job: _Job) -> list[_Rendered]:
    """Each sentence rendered; those citing an unverified calculation are left out."""
    parts = (render(sentence, job) for sentence in _SENTENCE_END_RE.split(markdown.strip()) if sentence.strip())
    return [part for part in parts if part and part.text]


def _table(rows: list[list[str]], job: _Job) -> list[_Rendered]:
    """Each table row as ``a | b | c``; a row with a cell citing an unverified calculation is left out."""
    out = []
    n_rows, n_cols = len(rows), max(map(len, rows), default=0)
    for r, row in enumerate(rows):
        cells = [render(cell, job, label_cell=is_label_cell(r, c, n_rows, n_cols)) for c, cell in enumerate(row)]
        if all(cell is not None for cell in cells):
            kept = [cell for cell in cells if cell is not None]
            values = {k: v for cell in kept for k, v in cell.values.items()}
            out.append(_Rendered(" | ".join(cell.text for cell in kept), values))
    return out


@dataclass(frozen=True)
class _Draft:
    """A fragment before its id is assigned."""

    source: str
    section: str
    text: str
    values: dict[str, str] = field(default_factory=dict)

    @property
    def key(self) -> tuple[str, str, str]:
        return self.source, self.section, self.text


def _draft(source: str, section: str, parts: list[_Rendered], head: str = "") -> _Draft | None:
    """One draft from rendered parts (None when nothing but the heading is left)."""
    body = [part.text for part in parts if part.text]
    if not body:
        return None
    values = {k: v for part in parts for k, v in part.values.items()}
    text = "\n".join([head, *body]) if head else "\n".join(body)
    return _Draft(source, section, text, values)


def _job_text(root: Path, name: str) -> str:
    """A job text file read without following a link a script planted ("" when missing or unsafe)."""
    path = root / name
    if not path.is_file() and not path.is_symlink():
        return ""
    try:
        return read_text(path, beneath=root)
    except (OSError, UnicodeDecodeError, InsightloomError) as exc:
        logger.warning("not reading %s for the job's knowledge: %s", name, exc)
        return ""


def _results(job: _Job) -> Iterator[_Draft]:
    """One fragment per ``all_results.txt`` section: its findings, then its table."""
    for section in parse_results(_job_text(job.root, RESULTS_FILE)):
        title = _scrub(plain_text(section.title)[0]) or "results"
        findings = [s for finding in section.findings for s in _sentences(finding, job)]
        rows = [split_row(line) for line in section.table.splitlines() if not _is_rule(line)]
        draft = _draft("results", title, [*findings, *_table(rows, job)], head=f"{title}:")
        if draft:
            yield draft


def _is_rule(line: str) -> bool:
    """A table's ``| --- | --- |`` separator row."""
    return bool(re.fullmatch(r"\|?[\s:|-]+\|?", line.strip())) and "-" in line


def _calculations(job: _Job) -> Iterator[_Draft]:
    """One sentence per verified calculation: description, value and formula."""
    for calc_id, info in job.verified.items():
        value = info.formatted()
        description = render(info.description, job)
        formula = render(info.formula, job)
        head = description.text if description and description.text else calc_id
        text = f"{head}: {value} {calc_tag(calc_id)}."
        if formula and formula.text:
            text += f" Formula: {formula.text}"
        yield _Draft("calculation", head, text, {calc_id: value})


def _report(job: _Job) -> Iterator[_Draft]:
    """One fragment per report paragraph, bullet list or table, under its nearest heading."""
    text = _job_text(job.root, REPORT_FILE)
    if not text:
        return
    section = "report"
    parts: list[tuple[str, str, list[_Rendered]]] = []  # (block kind, heading, rendered sentences or rows)
    for block in parse_markdown(text):
        if block.kind == "heading":
            section = _scrub(plain_text(block.text)[0]) or section
        elif block.kind == "bullet" and parts and parts[-1][:2] == ("bullet", section):
            parts[-1][2].extend(_sentences(block.text, job))  # a bullet list is one fragment
        elif block.kind == "table":
            parts.append((block.kind, section, _table(block.rows, job)))
        elif block.kind != "image":  # a chart's caption is its own fragment
            parts.append((block.kind, section, _sentences(block.text, job)))
    for _, heading, rendered in parts:
        draft = _draft("report", heading, rendered)
        if draft:
            yield draft


def _charts(job: _Job) -> Iterator[_Draft]:
    """One fragment per chart sidecar: title, caption and alt text (numbers removed by the claim rule)."""
    for sidecar in _chart_sidecars(job.root):
        try:
            meta = read_json(sidecar, beneath=job.root)
        except (OSError, ValueError, InsightloomError):
            logger.warning("skipping unreadable chart sidecar %s", sidecar)
            continue
        texts = [str(meta.get(key) or "") for key in ("title", "caption", "alt")] if isinstance(meta, dict) else []
        parts = [part for text in dict.fromkeys(t for t in texts if t) if (part := render(text, job))]
        chart = sidecar.with_suffix(".png").relative_to(job.root).as_posix()
        draft = _draft("chart", chart, parts, head=f"Chart {chart}:")
        if draft:
            yield draft


def _chart_sidecars(root: Path) -> list[Path]:
    """``charts/*.json``, listed without following a link a script planted (none when there is no folder)."""
    folder = root / "charts"
    try:
        names = list_regular_files(folder, beneath=root)
    except FileNotFoundError:
        return []
    except (OSError, InsightloomError) as exc:
        logger.warning("not reading the chart sidecars for the job's knowledge: %s", exc)
        return []
    return [folder / name for name in names if name.endswith(".json")]


def _profile_tables(job: _Job) -> list[dict[str, Any]]:
    path = job.root / PROFILE_FILE
    if not path.is_file():
        return []
    try:
        profile = read_json(path, beneath=job.root)
    except (OSError, ValueError, InsightloomError):
        logger.warning("skipping unreadable %s", path)
        return []
    tables = profile.get("tables", []) if isinstance(profile, dict) else []
    return [table for table in tables if isinstance(table, dict)]


def _shown_columns(table: dict[str, Any]) -> list[dict[str, Any]]:
    """The table's columns that may enter a fragment: not personal, not identifiers."""
    columns = table.get("columns", [])
    return [c for c in columns if isinstance(c, dict) and str(c.get("role") or "") not in HIDDEN_ROLES]


def _columns(job: _Job) -> Iterator[_Draft]:
    """One fragment per column with a definition: its name, role, unit and meaning, with no digits."""
    for table in _profile_tables(job):
        for column in _shown_columns(table):
            if not column.get("description"):
                continue
            name = str(column.get("name", ""))
            kind = ", ".join(str(column[key]) for key in ("role", "unit") if column.get(key))
            text = _scrub(f"Column `{name}`" + (f" ({kind})" if kind else "") + f": {column['description']}")
            yield _Draft("columns", _scrub(name) or "columns", text)


#: How a profile fragment lists a column's leading values (ordered by count, so they hold a figure's answer).
LEADING_VALUES = "leading values"


def _profile(job: _Job) -> Iterator[_Draft]:
    """One fragment per table of the profile: its columns by role and leading category values, with no digits."""
    for table in _profile_tables(job):
        name = str(table.get("name") or table.get("file") or table.get("view") or "data")
        lines = [f"Table {name}:"]
        for column in _shown_columns(table):
            line = f"Column {column.get('name')} is a {column.get('role') or 'column'} ({column.get('dtype')})"
            values = (_scrub(str(tv.get("value"))) for tv in column.get("top_values") or [] if isinstance(tv, dict))
            tops = list(dict.fromkeys(value for value in values if value))  # "20대", "30대" are both "대" now
            if tops:
                line += f"; {LEADING_VALUES}: " + ", ".join(tops)
            lines.append(line + ".")
        yield _Draft("profile", _scrub(name) or "profile", _scrub("\n".join(lines)).replace(" \n", "\n"))


def _importance(draft: _Draft, job: _Job) -> float:
    calc = [job.importance.get(calc_id, 0.5) for calc_id in draft.values]
    return max(calc, default=_BASE_IMPORTANCE.get(draft.source, 0.5))


def _open_job(job_dir: Path) -> _Job:
    root = Path(job_dir)
    meta: dict[str, Any] = {}
    if (root / JOB_FILE).is_file():
        try:
            meta = read_json(root / JOB_FILE, beneath=root)
        except (OSError, ValueError, InsightloomError):
            logger.warning("cannot read %s", root / JOB_FILE)
    calcs = load_calc_info(root, required=False)
    verified = {calc_id: info for calc_id, info in calcs.items() if info.status == VERIFIED}
    return _Job(
        root=root,
        job_id=_job_id(root, meta),
        date=str(meta.get("updated_at") or meta.get("created_at") or ""),
        verified=verified,
        importance=_calc_importance(root),
        labels=load_labels(root),
    )


def _job_id(root: Path, meta: dict[str, Any]) -> str:
    """The job's id as its folder gives it; the folder's name when job.json's id is missing or disagrees."""
    try:
        return job_id_of(root, meta.get("id") if isinstance(meta, dict) else None)
    except InsightloomError:
        return root.name  # job.json's id is not to be trusted: a script may have rewritten it


def _calc_importance(root: Path) -> dict[str, float]:
    """Calculation id -> 0..1 from calculation_metadata.json's ``importance`` (high, medium, low)."""
    path = root / METADATA_FILE
    if not path.is_file():
        return {}
    try:
        data = read_json(path, beneath=root)
    except (OSError, ValueError, InsightloomError):
        return {}
    calcs = data.get("calculations", []) if isinstance(data, dict) else []
    return {
        str(c.get("id")): _IMPORTANCE.get(str(c.get("importance", "")).lower(), 0.5)
        for c in calcs
        if isinstance(c, dict)
    }


def _drafts(job: _Job) -> list[_Draft]:
    """Every draft in the fixed source order, exact repeats within a source left out."""
    drafts: dict[tuple[str, str, str], _Draft] = {}
    for source in (_results, _calculations, _report, _charts, _columns, _profile):
        for draft in source(job):
            drafts.setdefault(draft.key, draft)
    return list(drafts.values())


def build_knowledge(job_dir: Path, *, previous: Iterable[KnowledgeFragment] = ()) -> list[KnowledgeFragment]:
    """The job's fragments, built from its files (nothing is written).

    Args:
        job_dir: The job folder.
        previous: An earlier build: a fragment that did not change keeps its id, new ones get ids after the last.
    """
    job = _open_job(Path(job_dir))
    known = {(f.source, f.section, f.text): f.id for f in previous}
    used = {int(fid[1:]) for fid in known.values() if fid[1:].isdigit()}
    next_id = max(used, default=0) + 1
    fragments = []
    for draft in _drafts(job):
        fid = known.get(draft.key)
        if fid is None:
            fid, next_id = f"F{next_id}", next_id + 1
        fragments.append(
            KnowledgeFragment(
                id=fid,
                text=draft.text,
                job_id=job.job_id,
                source=draft.source,
                section=draft.section,
                calc_ids=tuple(draft.values),
                values=dict(draft.values),
                date=job.date,
                importance=_importance(draft, job),
            )
        )
    return fragments


def _read_stored(path: Path, job_dir: Path) -> list[KnowledgeFragment] | None:
    try:
        data = read_json(path, beneath=job_dir)
        if data.get("version") != KNOWLEDGE_VERSION:
            return None
        return [KnowledgeFragment.from_json(item) for item in data["fragments"]]
    except (OSError, ValueError, KeyError, TypeError, AttributeError, InsightloomError) as exc:
        logger.warning("rebuilding %s: %s", path, exc)
        return None


def _newest_source(job_dir: Path) -> float:
    paths = [job_dir / name for name in _SOURCE_FILES] + _chart_sidecars(job_dir)
    return max((_mtime(p, job_dir) for p in paths), default=0.0)


def _mtime(path: Path, job_dir: Path) -> float:
    """A source file's modification time; 0 when it is missing, or a link or FIFO a script left in its place."""
    try:
        return path.lstat().st_mtime if is_regular_file(path, beneath=job_dir) else 0.0
    except OSError:  # removed in between
        return 0.0


def _write(job_dir: Path, fragments: list[KnowledgeFragment]) -> None:
    data = {"version": KNOWLEDGE_VERSION, "fragments": [f.to_json() for f in fragments]}
    try:
        write_json(job_dir / KNOWLEDGE_FILE, data, beneath=job_dir)
    except (OSError, InsightloomError) as exc:  # a read-only job folder still answers, it just rebuilds each time
        logger.warning("cannot write %s: %s", job_dir / KNOWLEDGE_FILE, exc)


def index_job(job_dir: Path) -> int:
    """Build and write ``<job>/ask/knowledge.json`` (at job completion); returns the number of fragments."""
    job_dir = Path(job_dir)
    path = job_dir / KNOWLEDGE_FILE
    previous = _read_stored(path, job_dir) if path.is_file() else None
    fragments = build_knowledge(job_dir, previous=previous or ())
    _write(job_dir, fragments)
    return len(fragments)


def load_knowledge(job_dir: Path) -> list[KnowledgeFragment]:
    """The job's fragments from ``ask/knowledge.json``, (re)built and written first when it is missing or older
    than any file it is built from (older jobs are indexed on their first question)."""
    job_dir = Path(job_dir)
    path = job_dir / KNOWLEDGE_FILE
    stored = _read_stored(path, job_dir) if path.is_file() else None
    if stored is not None and path.stat().st_mtime >= _newest_source(job_dir):
        return stored
    fragments = build_knowledge(job_dir, previous=stored or ())
    _write(job_dir, fragments)
    return fragments
