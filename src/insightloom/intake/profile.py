"""The data profile: what the planner, coder and validator know about the data without reading it.

The profile is the "just in time" context of a job: small enough for a prompt, precise enough to plan from (types,
roles, units, ranges, a few samples). Personal data never enters it: PII columns show ``***`` and no values, and any
email or phone number inside other samples is scrubbed too.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from insightloom.claims.stats import find_sentinels
from insightloom.errors import BadInputError, UnsafePathError
from insightloom.fileio import read_json
from insightloom.intake import semantics
from insightloom.intake.column_pool import map_columns
from insightloom.intake.roles import EMAIL_RE, PHONE_RE, distinct_count, present_values

logger = logging.getLogger(__name__)

MASK = "***"
MAX_SAMPLES = 5
MAX_TOP_VALUES = 5
_MAX_SAMPLE_CHARS = 80
_PROMPT_SAMPLE_CHARS = 40
_WIDE_TABLE_COLUMNS = 40
_PROMPT_HEADLINES = 5
_OPTIONAL_KEYS = ("min", "max", "mean", "top_values")
_NOT_PROMPTED = ("columns", "sha256", "bytes")
#: Per-column semantics keys, written when intake decided them (older profiles lack them; see ``semantics``).
_SEMANTIC_KEYS = ("aggregation", "semantic", "unit_scale", "positive_value", "calc_id_stem")


@dataclass
class ColumnProfile:
    """One column: type, role, missing/distinct counts, range, samples and unit."""

    name: str
    dtype: str
    role: str
    missing: int
    distinct: int
    min: Any = None
    max: Any = None
    mean: float | None = None
    samples: list[Any] = field(default_factory=list)
    top_values: list[dict[str, Any]] | None = None
    unit: str | None = None
    description: str | None = None
    #: ``sum``, ``mean`` or ``none`` (None: not decided, an older profile).
    aggregation: str | None = None
    semantic: str | None = None
    unit_scale: int = 1
    positive_value: Any = None
    calc_id_stem: str | None = None
    #: Codes such as 99999 or -1 used for "missing" in a numeric column, with their counts (docs/claims.md rule).
    sentinel_values: list[dict[str, Any]] | None = None
    #: Words standing among a numeric column's numbers (``TIE``), with their counts; those cells are missing.
    text_levels: list[dict[str, Any]] | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict; ``min``/``max``/``mean``/``top_values`` are omitted when they do not apply (and for PII).

        The semantics keys appear once intake decided them; ``unit_scale`` only when not 1, ``positive_value`` only
        for a two-valued text outcome.
        """
        out: dict[str, Any] = {
            "name": self.name,
            "dtype": self.dtype,
            "role": self.role,
            "missing": self.missing,
            "distinct": self.distinct,
        }
        for key in _OPTIONAL_KEYS:
            value = getattr(self, key)
            if value is not None and self.role != "pii":
                out[key] = value
        out["samples"] = [MASK] if self.role == "pii" else list(self.samples)
        out["unit"] = self.unit
        out["description"] = self.description
        if self.aggregation is not None:
            out["aggregation"] = self.aggregation
            out["semantic"] = self.semantic
        if self.unit_scale != 1:
            out["unit_scale"] = self.unit_scale
        if self.positive_value is not None and self.role != "pii":
            out["positive_value"] = self.positive_value
        if self.calc_id_stem is not None:
            out["calc_id_stem"] = self.calc_id_stem
        if self.sentinel_values and self.role != "pii":
            out["sentinel_values"] = [dict(code) for code in self.sentinel_values]
        if self.text_levels and self.role != "pii":
            out["text_levels"] = [dict(level) for level in self.text_levels]
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ColumnProfile:
        """Rebuild from ``to_dict()`` output."""
        fields: dict[str, Any] = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        return cls(**fields)


@dataclass
class TableProfile:
    """One table view (a CSV, Parquet or JSON file, one XLSX sheet, or one database table) and its Parquet cache."""

    view: str
    file: str
    sheet: str | None
    parquet: str
    rows: int
    columns: list[ColumnProfile]
    encoding: str | None = None
    control_chars_removed: int = 0
    #: Title rows above the header that intake skipped.
    title_rows_skipped: int = 0
    #: Columns whose cells look numeric but were kept as text.
    text_numeric_columns: list[str] = field(default_factory=list)
    #: What intake changed while typing the cells, one sentence each naming the column (text levels set aside,
    #: digit groups joined); written only when there is one.
    notices: list[str] = field(default_factory=list)
    #: Rates recomputed from their parts; None (with the two below) when the semantics were not decided.
    rate_pairs: list[dict[str, Any]] | None = None
    headline_measures: list[dict[str, str]] | None = None
    time_axis: dict[str, Any] | None = None
    #: The manifest of the Parquet file intake wrote: its SHA-256 and size. Checks read only a file that matches;
    #: None in a profile written before intake recorded them.
    sha256: str | None = None
    bytes: int | None = None
    #: The database table the view was read from (SQLite); None for files of one table and for sheets.
    table: str | None = None

    def column(self, name: str) -> ColumnProfile:
        """The profile of column ``name``; raises KeyError naming the known columns."""
        for col in self.columns:
            if col.name == name:
                return col
        raise KeyError(f"{self.view} has no column {name!r}; columns: {[c.name for c in self.columns]}")

    def to_dict(self) -> dict[str, Any]:
        return {
            "view": self.view,
            "file": self.file,
            "sheet": self.sheet,
            **({"table": self.table} if self.table is not None else {}),
            "parquet": self.parquet,
            **self._manifest_dict(),
            "rows": self.rows,
            "encoding": self.encoding,
            "control_chars_removed": self.control_chars_removed,
            "title_rows_skipped": self.title_rows_skipped,
            "text_numeric_columns": list(self.text_numeric_columns),
            **({"notices": list(self.notices)} if self.notices else {}),
            **self._semantics_dict(),
            "columns": [c.to_dict() for c in self.columns],
        }

    def _manifest_dict(self) -> dict[str, Any]:
        # Omitted when unknown, so an older profile is written back as it was read.
        return {k: v for k, v in (("sha256", self.sha256), ("bytes", self.bytes)) if v is not None}

    def _semantics_dict(self) -> dict[str, Any]:
        if self.headline_measures is None:
            return {}
        return {"rate_pairs": list(self.rate_pairs or []), "headline_measures": list(self.headline_measures),
                "time_axis": self.time_axis}  # fmt: skip

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TableProfile:
        return cls(
            view=data["view"],
            file=data["file"],
            sheet=data.get("sheet"),
            table=data.get("table"),
            parquet=data["parquet"],
            rows=int(data["rows"]),
            columns=[ColumnProfile.from_dict(c) for c in data.get("columns", [])],
            encoding=data.get("encoding"),
            control_chars_removed=int(data.get("control_chars_removed") or 0),
            title_rows_skipped=int(data.get("title_rows_skipped") or 0),
            text_numeric_columns=list(data.get("text_numeric_columns") or []),
            notices=list(data.get("notices") or []),
            rate_pairs=data.get("rate_pairs"),
            headline_measures=data.get("headline_measures"),
            time_axis=data.get("time_axis"),
            sha256=data.get("sha256"),
            bytes=data.get("bytes"),
        )

    def annotate(self, frame: pd.DataFrame | None = None) -> TableProfile:
        """Decide the table's semantics (rate pairs, headline measures, time axis, calc id stems) in place."""
        decided = semantics.table_semantics([c.to_dict() for c in self.columns], self.rows, frame, table_name=self.file)
        self.rate_pairs, self.headline_measures = decided.rate_pairs, decided.headline_measures
        self.time_axis = decided.time_axis
        for col in self.columns:
            col.calc_id_stem = decided.calc_id_stems[col.name]
            if col.name in decided.summed_parts:
                col.aggregation = "sum"
        return self


@dataclass
class DataProfile:
    """Every table of a job, the view aliases (``data`` and XLSX stems), the data's language and, with several
    tables, how they relate."""

    tables: list[TableProfile]
    aliases: dict[str, str] = field(default_factory=dict)
    language: str = "en"
    #: Candidate keys, foreign keys and many-to-many pairs between the tables (``intake.relationships``); None for
    #: a single table or a profile written before relationships existed.
    relationships: dict[str, Any] | None = None

    @property
    def first_view(self) -> str:
        """The view of the first input: what ``load_df()`` and the ``data`` alias point to."""
        return self.aliases.get("data", self.tables[0].view)

    def resolve(self, name: str) -> str:
        """Map an alias (``data``, an XLSX stem) to its view name; a view name maps to itself."""
        return self.aliases.get(name, name)

    def table(self, view: str) -> TableProfile:
        """The table for a view name or alias; raises KeyError listing the known names."""
        target = self.resolve(view)
        for table in self.tables:
            if table.view == target:
                return table
        known = [t.view for t in self.tables] + list(self.aliases)
        raise KeyError(f"no table view {view!r}; known: {known}")

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "tables": [t.to_dict() for t in self.tables],
            "aliases": dict(self.aliases),
            "language": self.language,
        }
        if self.relationships is not None:
            out["relationships"] = self.relationships
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DataProfile:
        return cls(
            tables=[TableProfile.from_dict(t) for t in data.get("tables", [])],
            aliases=dict(data.get("aliases", {})),
            language=data.get("language", "en"),
            relationships=data.get("relationships"),
        )

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=2)

    @classmethod
    def load(cls, path: Any) -> DataProfile:
        """Read ``cache/profile.json``; a missing or corrupt file is a BadInputError naming it."""
        try:  # a script can write cache/: read without following a link, never blocking on a FIFO
            return cls.from_dict(read_json(Path(path), beneath=Path(path).parent))
        except (OSError, UnsafePathError, ValueError, KeyError) as exc:
            raise BadInputError(f"{path}: cannot read the data profile ({exc}).", fix="Run intake again.") from exc

    def to_prompt(self, *, max_samples: int | None = None) -> str:
        """Compact text for an LLM prompt: ``<data_profile>`` + compact JSON + ``</data_profile>``.

        Nulls are dropped, floats rounded to 4 significant digits, long samples cut, categories show top values
        instead of samples, and wide tables (over 40 columns) drop numeric samples and keep 3 top values, so a
        100-column sheet still fits a small budget.
        """
        compact: dict[str, Any] = {"tables": [], "aliases": self.aliases, "language": self.language}
        for table in self.tables:
            limit = max_samples or (3 if len(table.columns) > _WIDE_TABLE_COLUMNS else MAX_SAMPLES)
            # The manifest (hash, size) only guards the cache; a model has no use for it.
            entry = {k: v for k, v in table.to_dict().items() if k not in _NOT_PROMPTED and v is not None}
            for key in ("title_rows_skipped", "text_numeric_columns"):  # said only when intake did something
                if not entry.get(key):
                    entry.pop(key, None)
            if "headline_measures" in entry:  # column and reason are enough; a long tail adds nothing
                entry["headline_measures"] = entry["headline_measures"][:_PROMPT_HEADLINES]
                entry["rate_pairs"] = [_compact_pair(p) for p in entry.get("rate_pairs", [])]
            wide = len(table.columns) > _WIDE_TABLE_COLUMNS
            entry["columns"] = [_compact_column(c.to_dict(), limit, wide=wide) for c in table.columns]
            compact["tables"].append(entry)
        if self.relationships:
            compact["relationships"] = _compact_relationships(self.relationships)
        body = json.dumps(_round_floats(compact), ensure_ascii=False, separators=(",", ":"))
        return f"<data_profile>\n{body}\n</data_profile>"


def _compact_relationships(rel: dict[str, Any]) -> dict[str, Any]:
    """Keys as ``view.column``; foreign keys and many-to-many pairs whole (the joins read them), less the probe's row
    counts, with ``sampled`` only when it is true."""
    out: dict[str, Any] = {"candidate_keys": [f"{k['view']}.{k['column']}" for k in rel.get("candidate_keys", [])]}
    out["foreign_keys"] = [
        {k: v for k, v in fk.items() if k not in ("checked_rows", "matched_rows") and (k != "sampled" or v)}
        for fk in rel.get("foreign_keys", [])
    ]
    if rel.get("many_to_many"):
        out["many_to_many"] = list(rel["many_to_many"])
    return out


def _compact_pair(pair: dict[str, Any]) -> dict[str, Any]:
    return {k: pair[k] for k in ("key", "numerator", "denominator", "scale", "unit") if pair.get(k) is not None}


def _compact_column(col: dict[str, Any], limit: int, *, wide: bool) -> dict[str, Any]:
    """Drop nulls; numbers/dates with a range keep 2 samples (none in wide tables), categories their top values.

    ``aggregation: none`` is implied for labels without a semantic, and the calc id stem is shown only for names
    that are not plain ASCII (the model can derive the rest).
    """
    out = {k: v for k, v in col.items() if v is not None}
    if out.get("aggregation") == "none" and "semantic" not in out:
        out.pop("aggregation")
    if str(col.get("name", "")).isascii():
        out.pop("calc_id_stem", None)
    if "top_values" in out:
        out.pop("samples", None)
        out["top_values"] = out["top_values"][: 3 if wide else MAX_TOP_VALUES]
    elif "min" in out:
        out["samples"] = col["samples"][: min(limit, 2)]
        if wide:
            out.pop("samples")
    else:
        out["samples"] = [_cut(s, _PROMPT_SAMPLE_CHARS) for s in col["samples"][:limit]]
    if "top_values" in out:
        out["top_values"] = [{**tv, "value": _cut(tv["value"], _PROMPT_SAMPLE_CHARS)} for tv in out["top_values"]]
    return out


def _round_floats(obj: Any) -> Any:
    if isinstance(obj, float):
        if not math.isfinite(obj):
            return None
        rounded = float(f"{obj:.4g}")
        return int(rounded) if rounded.is_integer() and abs(rounded) < 1e15 else rounded
    if isinstance(obj, dict):
        return {k: _round_floats(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_round_floats(v) for v in obj]
    return obj


def _cut(value: Any, limit: int) -> Any:
    if isinstance(value, str) and len(value) > limit:
        return value[: limit - 1] + "…"
    return value


# ------------------------------------------------------------------------------------------- building a profile


def dtype_label(series: pd.Series) -> str:
    """A short, engine-neutral type name: int64, float64, datetime, bool or string."""
    if pd.api.types.is_bool_dtype(series):
        return "bool"
    if pd.api.types.is_integer_dtype(series):
        return "int64"
    if pd.api.types.is_float_dtype(series):
        return "float64"
    if pd.api.types.is_datetime64_any_dtype(series):
        return "datetime"
    return "string"


def profile_columns(
    typed: dict[str, pd.Series],
    roles: dict[str, str],
    units: dict[str, str | None],
    definitions: dict[str, str],
    *,
    table_name: str = "",
) -> list[ColumnProfile]:
    """Profile every typed column of one table with its semantics (aggregation, semantic, unit, final role).

    Args:
        typed: Column name -> typed series.
        roles: The role ``roles.classify`` gave each column (the semantics may refine it: a year is a category).
        units: The unit ``roles.unit_for`` found (the semantics may add one from the name).
        definitions: ``column_desc`` per column name (column_definitions.json).
        table_name: The file name, which may say what the values are (``percent-...csv``).
    """
    cells = sum(len(series) for series in typed.values())
    names = list(typed)

    def facts_of(name: str) -> semantics.ColumnFacts:
        return semantics.facts_from_series(
            name, typed[name], roles[name], unit=units.get(name), description=definitions.get(name)
        )

    facts = map_columns(facts_of, names, cells=cells)
    decided = dict(zip(names, semantics.table_column_semantics(facts, table_name=table_name), strict=True))
    distinct = {fact.name: fact.distinct for fact in facts}

    def profile_of(name: str) -> ColumnProfile:
        sem = decided[name]
        return profile_column(
            name,
            typed[name],
            sem.role,
            unit=sem.unit,
            description=definitions.get(name),
            decided=sem,
            distinct=distinct[name],
        )

    return map_columns(profile_of, names, cells=cells)


def profile_column(
    name: str,
    series: pd.Series,
    role: str,
    *,
    unit: str | None,
    description: str | None,
    decided: semantics.ColumnSemantics | None = None,
    distinct: int | None = None,
) -> ColumnProfile:
    """Summarize one typed column. PII columns get counts only: no values of any kind are kept.

    ``distinct`` is the column's distinct count when the caller has it (the semantics' facts count them too).
    """
    present = present_values(series)
    col = ColumnProfile(
        name=name,
        dtype=dtype_label(series),
        role=role,
        missing=int(series.isna().sum()),
        distinct=distinct_count(present) if distinct is None else distinct,
        unit=unit,
        description=scrub(description) if description else description,
    )
    if decided is not None:
        col.aggregation, col.semantic, col.unit_scale = decided.aggregation, decided.semantic, decided.unit_scale
        col.positive_value = _json_value(decided.positive_value) if decided.positive_value is not None else None
    if role == "pii":
        col.samples = [MASK]
        return col
    col.samples = [_json_value(v) for v in _first_distinct(present, MAX_SAMPLES)]
    if present.empty:
        return col
    if col.dtype in ("int64", "float64"):
        col.min, col.max = _json_value(present.min()), _json_value(present.max())
        col.mean = _round_sig(float(present.astype("float64").mean()), 6)
        codes = find_sentinels(present.to_numpy(dtype="float64"))
        col.sentinel_values = [{"value": int(code), "count": count} for code, count in codes] or None
    elif col.dtype == "datetime":
        col.min, col.max = _json_value(present.min()), _json_value(present.max())
    if role == "category":
        counts = present.value_counts().head(MAX_TOP_VALUES)
        col.top_values = [{"value": _json_value(v), "count": int(n)} for v, n in counts.items()]
    return col


def _first_distinct(present: pd.Series, count: int) -> pd.Series:
    """The first ``count`` distinct values in row order; the first rows usually hold them, so a large column is not
    deduplicated whole for a few samples."""
    head = present.head(1000).drop_duplicates()
    return head.head(count) if len(head) >= count else present.drop_duplicates().head(count)


def _round_sig(value: float, digits: int) -> float | None:
    if not math.isfinite(value):
        return None
    return float(f"{value:.{digits}g}")


def _json_value(v: Any) -> Any:
    """A JSON-safe, PII-scrubbed version of one cell (timestamps as ISO strings, numpy scalars as Python)."""
    if isinstance(v, (pd.Timestamp, dt.datetime)):
        ts = pd.Timestamp(v)
        return ts.date().isoformat() if ts == ts.normalize() else ts.isoformat()
    if isinstance(v, dt.date):
        return v.isoformat()
    if isinstance(v, (np.bool_, bool)):
        return bool(v)
    if isinstance(v, (np.integer, int)):
        return int(v)
    if isinstance(v, (np.floating, float)):
        return _round_sig(float(v), 10)
    if isinstance(v, str):
        return scrub(_cut(v, _MAX_SAMPLE_CHARS))
    return scrub(str(v))


def scrub(text: str) -> str:
    """Mask emails and phone numbers inside free text, so a profile can never leak them."""
    return PHONE_RE.sub(MASK, EMAIL_RE.sub(MASK, text))
