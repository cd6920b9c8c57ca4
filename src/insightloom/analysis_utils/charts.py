"""Save charts at the size they are shown in the DOCX, with legible fonts and Korean glyphs.

Charts scaled down into a document became illegible in the reference system, so the figure is saved at its final
width (6.0 in at 150 dpi) with every text at least 9 pt. Korean labels need a CJK font or matplotlib draws boxes;
the font is applied to the figure's own text objects, never to global rcParams of the host process.

The title and caption are printed in the report as they are (the caption under the figure), where no number can be
checked or cited, so ``save_chart`` refuses one that holds a claim-number or a reference, by the report's own rule
(``report.labels``: the data's names, codes, years and dates may stay).
"""

from __future__ import annotations

import logging
import re
import warnings
from pathlib import Path
from typing import Any

from insightloom.analysis_utils.jobdir import job_dir
from insightloom.calc_refs import CALC_REF_RE, find_near_misses
from insightloom.fileio import write_json
from insightloom.fonts import find_cjk_font, has_cjk
from insightloom.report.labels import load_labels, typed_claims

logger = logging.getLogger(__name__)

CHART_WIDTH_IN = 6.0
CHART_DPI = 150
MIN_FONT_PT = 9.0
_NAME_RE = re.compile(r"[^A-Za-z0-9_\-]+")


def chart_name(name: str) -> str:
    """A safe file stem for a chart: no folders, no spaces, no extension."""
    stem = Path(str(name)).name
    if stem.lower().endswith(".png"):
        stem = stem[:-4]
    clean = _NAME_RE.sub("_", stem).strip("_")
    if not clean:
        raise ValueError(f"save_chart: chart name {name!r} has no usable characters; use e.g. 'revenue_by_region'")
    return clean


def _texts(fig: Any) -> list[Any]:
    from matplotlib.text import Text

    return [t for t in fig.findobj(Text) if t.get_text()]


def _apply_fonts(fig: Any, extra_text: str) -> None:
    """Raise small fonts to the minimum and switch to a CJK font when any label holds Hangul."""
    from matplotlib import font_manager

    with warnings.catch_warnings():  # glyph warnings from the default font; fixed just below
        warnings.simplefilter("ignore", UserWarning)
        fig.draw_without_rendering()  # creates the tick labels, so they are styled too
    texts = _texts(fig)
    needs_cjk = has_cjk(extra_text) or any(has_cjk(t.get_text()) for t in texts)
    font = find_cjk_font() if needs_cjk else None
    if needs_cjk and font is not None:
        try:
            font_manager.fontManager.addfont(str(font.path))
        except (OSError, RuntimeError) as exc:  # pragma: no cover - broken font file
            logger.warning("could not register CJK font %s: %s", font.path, exc)
    for text in texts:
        size = max(float(text.get_fontsize()), MIN_FONT_PT)
        if font is not None:
            text.set_fontproperties(font_manager.FontProperties(fname=str(font.path), size=size))
        else:
            text.set_fontsize(size)
    family = font_manager.FontProperties(fname=str(font.path)).get_name() if font is not None else None
    for ax in fig.get_axes():
        # Tick labels are re-created at save time, so the font goes on the axis, not on today's label objects.
        extra = {"labelfontfamily": family} if family else {}
        ax.tick_params(labelsize=max(MIN_FONT_PT, _tick_size(ax)), **extra)
        _plain_numbers(ax)


def compact_number(value: float, _pos: object = None) -> str:
    """Axis numbers a reader can take in at a glance: 950, 12,500, 3.4M, 1.2B (never 1e9 offsets)."""
    magnitude = abs(value)
    for limit, suffix in ((1e9, "B"), (1e6, "M")):
        if magnitude >= limit:
            return f"{value / limit:,.1f}".rstrip("0").rstrip(".") + suffix
    return f"{value:,.0f}" if magnitude >= 100 or float(value).is_integer() else f"{value:,.2f}"


def _plain_numbers(ax: Any) -> None:
    from matplotlib.ticker import FuncFormatter, ScalarFormatter

    for axis in (ax.xaxis, ax.yaxis):
        if isinstance(axis.get_major_formatter(), ScalarFormatter):
            axis.set_major_formatter(FuncFormatter(compact_number))


def _tick_size(ax: Any) -> float:
    labels = ax.get_xticklabels() + ax.get_yticklabels()
    return max((float(label.get_fontsize()) for label in labels), default=MIN_FONT_PT)


def _number_problems(folder: Path, texts: dict[str, str]) -> list[str]:
    """What in a chart's printed texts is a number or a reference, by the report's rule for typed numbers."""
    labels = load_labels(folder)
    problems = []
    for field, text in texts.items():
        problems += [f"{field} holds the number '{token.text}'" for token in typed_claims(text, labels)]
        refs = [m.group(0) for m in CALC_REF_RE.finditer(text)] + [m.written for m in find_near_misses(text)]
        problems += [f"{field} holds {ref}" for ref in refs]
    return problems


def _refuse_numbers(stem: str, folder: Path, title: str, caption: str) -> None:
    """Raise before anything is saved when the title or caption states a number.

    Raises:
        ValueError: Naming each number and the fix.
    """
    problems = _number_problems(folder, {"title": str(title), "caption": str(caption)})
    if problems:
        raise ValueError(
            f"save_chart({stem!r}) was not saved: {'; '.join(problems)}. The title and caption are printed in the "
            "report as they are, where a number cannot be checked: say what the chart shows without numbers "
            "(e.g. caption='Revenue by region, largest first'); numbers belong in the report as {{calc:ID}} "
            "references to tracked calculations."
        )


def save_chart(fig: Any, name: str, *, title: str, alt: str, caption: str) -> str:
    """Save ``fig`` as ``charts/<name>.png`` plus the ``charts/<name>.json`` sidecar.

    Args:
        fig: A matplotlib Figure.
        name: File stem (``revenue_by_region``); folders and the extension are stripped.
        title: Chart title for the report.
        alt: Alternative text (what the chart shows, for screen readers).
        caption: Caption placed under the chart in the DOCX.

    Returns:
        The PNG path relative to the job folder (``charts/<name>.png``).

    Raises:
        ValueError: The name has no usable characters, or the title or caption holds a number (``61.3%``,
            ``34 stores``) or a reference: they are printed as they are, so they name what the chart shows.
    """
    stem = chart_name(name)
    _refuse_numbers(stem, job_dir(), title, caption)
    folder = job_dir() / "charts"
    folder.mkdir(parents=True, exist_ok=True)
    width, height = fig.get_size_inches()
    aspect = height / width if width else 0.6
    fig.set_size_inches(CHART_WIDTH_IN, max(2.5, min(CHART_WIDTH_IN * aspect, 8.0)))
    _apply_fonts(fig, f"{title} {caption}")
    try:
        fig.tight_layout()
    except (ValueError, RuntimeError) as exc:  # layout is cosmetic; never fail a script for it
        logger.debug("tight_layout failed: %s", exc)
    png = folder / f"{stem}.png"
    fig.savefig(png, dpi=CHART_DPI)
    write_json(folder / f"{stem}.json", {"title": str(title), "alt": str(alt), "caption": str(caption)})
    logger.debug("saved chart %s", png)
    return f"charts/{stem}.png"
