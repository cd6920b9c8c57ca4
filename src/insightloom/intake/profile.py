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
from typing import Any

import numpy as np
import pandas as pd

from insightloom.errors import BadInputError
from insightloom.intake.roles import EMAIL_RE, PHONE_RE

logger = logging.getLogger(__name__)

MASK = "***"
MAX_SAMPLES = 5
MAX_TOP_VALUES = 5
_MAX_SAMPLE_CHARS = 80
_PROMPT_SAMPLE_CHARS = 40
_WIDE_TABLE_COLUMNS = 40
_OPTIONAL_KEYS = ("min", "max", "mean", "top_values")


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

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict; ``min``/``max``/``mean``/``top_values`` are omitted when they do not apply (and for PII)."""
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
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ColumnProfile:
        """Rebuild from ``to_dict()`` output."""
        fields: dict[str, Any] = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        return cls(**fields)


@dataclass
class TableProfile:
    """One table view (a CSV, or one XLSX sheet) and its Parquet cache."""

    view: str
    file: str
    sheet: str | None
    parquet: str
    rows: int
    columns: list[ColumnProfile]
    encoding: str | None = None
    control_chars_removed: int = 0

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
            "parquet": self.parquet,
            "rows": self.rows,
            "encoding": self.encoding,
            "control_chars_removed": self.control_chars_removed,
            "columns": [c.to_dict() for c in self.columns],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TableProfile:
        return cls(
            view=data["view"],
            file=data["file"],
            sheet=data.get("sheet"),
            parquet=data["parquet"],
            rows=int(data["rows"]),
            columns=[ColumnProfile.from_dict(c) for c in data.get("columns", [])],
            encoding=data.get("encoding"),
            control_chars_removed=int(data.get("control_chars_removed") or 0),
        )


@dataclass
class DataProfile:
    """Every table of a job, the view aliases (``data`` and XLSX stems) and the data's language."""

    tables: list[TableProfile]
    aliases: dict[str, str] = field(default_factory=dict)
    language: str = "en"

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
        return {
            "tables": [t.to_dict() for t in self.tables],
            "aliases": dict(self.aliases),
            "language": self.language,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DataProfile:
        return cls(
            tables=[TableProfile.from_dict(t) for t in data.get("tables", [])],
            aliases=dict(data.get("aliases", {})),
            language=data.get("language", "en"),
        )

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=2)

    @classmethod
    def load(cls, path: Any) -> DataProfile:
        """Read ``cache/profile.json``; a missing or corrupt file is a BadInputError naming it."""
        try:
            with open(path, encoding="utf-8") as fh:
                return cls.from_dict(json.load(fh))
        except (OSError, ValueError, KeyError) as exc:
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
            entry = {k: v for k, v in table.to_dict().items() if k != "columns" and v is not None}
            wide = len(table.columns) > _WIDE_TABLE_COLUMNS
            entry["columns"] = [_compact_column(c.to_dict(), limit, wide=wide) for c in table.columns]
            compact["tables"].append(entry)
        body = json.dumps(_round_floats(compact), ensure_ascii=False, separators=(",", ":"))
        return f"<data_profile>\n{body}\n</data_profile>"


def _compact_column(col: dict[str, Any], limit: int, *, wide: bool) -> dict[str, Any]:
    """Drop nulls; numbers/dates with a range keep 2 samples (none in wide tables), categories their top values."""
    out = {k: v for k, v in col.items() if v is not None}
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


def profile_column(
    name: str, series: pd.Series, role: str, *, unit: str | None, description: str | None
) -> ColumnProfile:
    """Summarize one typed column. PII columns get counts only: no values of any kind are kept."""
    present = series.dropna()
    col = ColumnProfile(
        name=name,
        dtype=dtype_label(series),
        role=role,
        missing=int(series.isna().sum()),
        distinct=int(present.nunique()),
        unit=unit,
        description=scrub(description) if description else description,
    )
    if role == "pii":
        col.samples = [MASK]
        return col
    col.samples = [_json_value(v) for v in present.drop_duplicates().head(MAX_SAMPLES)]
    if present.empty:
        return col
    if col.dtype in ("int64", "float64"):
        col.min, col.max = _json_value(present.min()), _json_value(present.max())
        col.mean = _round_sig(float(present.astype("float64").mean()), 6)
    elif col.dtype == "datetime":
        col.min, col.max = _json_value(present.min()), _json_value(present.max())
    if role == "category":
        counts = present.value_counts().head(MAX_TOP_VALUES)
        col.top_values = [{"value": _json_value(v), "count": int(n)} for v, n in counts.items()]
    return col


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
