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
import textwrap
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from insightloom.analysis_utils.jobdir import job_dir
from insightloom.analysis_utils.numbers_text import compact_axis
from insightloom.calc_refs import CALC_REF_RE, find_near_misses
from insightloom.fileio import write_json
from insightloom.fonts import find_cjk_font, has_cjk
from insightloom.report.labels import load_labels, typed_claims

logger = logging.getLogger(__name__)

CHART_WIDTH_IN = 6.0
CHART_DPI = 150
MIN_FONT_PT = 9.0
#: Longest category tick label kept whole when a label would otherwise be cut at the figure's edge.
MAX_TICK_CHARS = 28
#: Above this many points a scatter is drawn as hexagonal bins: single points would hide each other.
SCATTER_MAX_POINTS = 5000
#: A value further than this many interquartile ranges from the median flattens a histogram.
SKEW_IQRS = 8.0
_TIGHT_PAD_IN = 0.05  # padding around a tight bounding box at save time
_NAME_RE = re.compile(r"[^A-Za-z0-9_\-]+")


def period_axis(ax: Any, dates: bool) -> None:
    """Ticks of a time axis: concise dates, or whole years as years (1970, never 1.97K or 1,970)."""
    from matplotlib.dates import AutoDateLocator, ConciseDateFormatter
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    if dates:
        locator = AutoDateLocator()
        ax.xaxis.set_major_locator(locator)
        ax.xaxis.set_major_formatter(ConciseDateFormatter(locator))
    else:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _pos: f"{value:.0f}"))


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


def _plain_numbers(ax: Any) -> None:
    """Compact, mutually distinct numbers on value axes (never ``1e9`` offsets, never five ``2.01K`` ticks)."""
    from matplotlib.ticker import ScalarFormatter

    for axis in (ax.xaxis, ax.yaxis):
        if isinstance(axis.get_major_formatter(), ScalarFormatter):
            compact_axis(axis)


def _tick_size(ax: Any) -> float:
    labels = ax.get_xticklabels() + ax.get_yticklabels()
    return max((float(label.get_fontsize()) for label in labels), default=MIN_FONT_PT)


def _drawn_ticks(axis: Any) -> list[Any]:
    """The ticks matplotlib draws now (those inside the view), not stale ones kept for reuse."""
    update = getattr(axis, "_update_ticks", None)  # what Axis.draw uses; public lists include undrawn ticks
    return list(update()) if callable(update) else list(axis.get_major_ticks())


def _tick_texts(axis: Any) -> list[Any]:
    labels = []
    for tick in _drawn_ticks(axis):
        labels += [t for t in (tick.label1, tick.label2) if t.get_visible() and t.get_text()]
    return labels


def _drawn_texts(fig: Any) -> list[Any]:
    """Every text the renderer draws: titles, axis labels, tick labels, legends, annotations, figure texts."""
    tick_labels: set[int] = set()
    drawn: list[Any] = []
    for ax in fig.get_axes():
        for axis in (ax.xaxis, ax.yaxis):
            for tick in [*axis.majorTicks, *axis.minorTicks]:
                tick_labels |= {id(tick.label1), id(tick.label2)}
            drawn += _tick_texts(axis) if ax.get_visible() else []
    others = [t for t in _texts(fig) if id(t) not in tick_labels]
    return [t for t in others + drawn if t.get_visible() and t.get_text().strip()]


def _renderer(fig: Any) -> Any:
    """The renderer that lays ``fig`` out (a bare ``Figure`` has a base canvas without ``get_renderer``)."""
    get = getattr(fig.canvas, "get_renderer", None)
    return get() if callable(get) else fig._get_renderer()  # what draw_without_rendering uses


def clipped_texts(fig: Any, *, tight: bool = False) -> list[str]:
    """The texts of ``fig`` that reach past its edges (so the saved image cuts them), each with the edge it crosses.

    Uses matplotlib's own layout (the renderer's window extent of every drawn text), the same test the
    real-tables benchmark lint applies; an empty list means no label, tick or title is clipped. With ``tight`` the
    edges are those of the tight bounding box ``savefig(bbox_inches="tight")`` crops to, not the figure's.
    """
    with warnings.catch_warnings():  # glyph warnings for Hangul in the default font are not layout problems
        warnings.simplefilter("ignore", UserWarning)
        fig.draw_without_rendering()
    renderer = _renderer(fig)
    box, tolerance = fig.bbox, 1.0
    if tight:  # the saved image: the tight box (in inches) plus its padding, in display pixels
        box = fig.get_tightbbox(renderer).padded(_TIGHT_PAD_IN).transformed(fig.dpi_scale_trans)
    problems = []
    for text in _drawn_texts(fig):
        extent = text.get_window_extent(renderer)
        edges = [
            edge
            for edge, out in (
                ("left", extent.x0 < box.x0 - tolerance),
                ("right", extent.x1 > box.x1 + tolerance),
                ("bottom", extent.y0 < box.y0 - tolerance),
                ("top", extent.y1 > box.y1 + tolerance),
            )
            if out
        ]
        if edges:
            problems.append(f"{text.get_text()!r} crosses the {' and '.join(edges)} edge")
    return problems


def repeated_tick_labels(fig: Any) -> list[str]:
    """Tick labels printed more than once on one axis (``2.01K`` five times), as ``'<label>' on the <x|y> axis``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        fig.draw_without_rendering()
    problems = []
    for ax in fig.get_axes():
        for name, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            labels = [t.get_text() for t in _tick_texts(axis)]
            problems += [f"{label!r} on the {name} axis" for label in dict.fromkeys(labels) if labels.count(label) > 1]
    return problems


def _dedupe_ticks(fig: Any) -> None:
    """Give a numeric axis whose tick labels repeat the compact labels that add digits until they differ."""
    from matplotlib.category import StrCategoryFormatter
    from matplotlib.dates import DateFormatter

    for ax in fig.get_axes():
        for axis in (ax.xaxis, ax.yaxis):
            labels = [t.get_text() for t in _tick_texts(axis)]
            formatter = axis.get_major_formatter()
            if len(set(labels)) < len(labels) and not isinstance(formatter, (StrCategoryFormatter, DateFormatter)):
                compact_axis(axis)
                _widen_flat(ax, axis)


def _widen_flat(ax: Any, axis: Any) -> None:
    """Widen a numeric axis whose data is (nearly) constant: its ticks differ only past the 15th digit, so no
    format can tell them apart (a flat line of shares that all sum to 1); the view spans 10% around the value."""
    labels = [t.get_text() for t in _tick_texts(axis)]
    if len(set(labels)) == len(labels):
        return
    low, high = axis.get_view_interval()
    middle = (float(low) + float(high)) / 2
    half = abs(middle) * 0.1 or 1.0
    (ax.set_ylim if axis is ax.yaxis else ax.set_xlim)(middle - half, middle + half)


def _wrap(text: Any, length: float, room: float) -> None:
    """Wrap ``text`` onto more lines when its drawn ``length`` (pixels along its direction) exceeds ``room``."""
    content = text.get_text()
    if content and length > room:
        text.set_text(textwrap.fill(content, max(12, int(len(content) * room / length))))


def _wrap_long_texts(fig: Any) -> None:
    """Wrap titles and axis labels longer than the room they have (a long Korean or English column name)."""
    renderer = _renderer(fig)
    width, height = fig.bbox.width, fig.bbox.height
    if getattr(fig, "_suptitle", None) is not None:  # no public getter
        _wrap(fig._suptitle, fig._suptitle.get_window_extent(renderer).width, 0.92 * width)
    for ax in fig.get_axes():
        box = ax.get_window_extent(renderer)
        middle_x, middle_y = (box.x0 + box.x1) / 2, (box.y0 + box.y1) / 2
        room_x = 1.9 * min(middle_x, width - middle_x)  # centred on the axes: room to the nearer edge, twice
        for text in (ax.title, ax._left_title, ax._right_title, ax.xaxis.label):  # the three title slots
            _wrap(text, text.get_window_extent(renderer).width, room_x)
        label = ax.yaxis.label
        _wrap(label, label.get_window_extent(renderer).height, 1.9 * min(middle_y, height - middle_y))


def _shorten_ticks(fig: Any, limit: int = MAX_TICK_CHARS) -> None:
    """Cut category tick labels longer than ``limit`` characters with an ellipsis (the full name is in the table)."""
    from matplotlib.ticker import Formatter

    class _Short(Formatter):
        def __init__(self, inner: Any) -> None:
            self.inner = inner

        def set_axis(self, axis: Any) -> None:
            super().set_axis(axis)
            self.inner.set_axis(axis)

        def __call__(self, x: float, pos: int | None = None) -> str:
            return _shorten(self.inner(x, pos), limit)

        def format_ticks(self, values: Any) -> list[str]:
            return [_shorten(label, limit) for label in self.inner.format_ticks(values)]

    for ax in fig.get_axes():
        for axis in (ax.xaxis, ax.yaxis):
            if any(len(t.get_text()) > limit for t in _tick_texts(axis)):
                axis.set_major_formatter(_Short(axis.get_major_formatter()))


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _layout(fig: Any) -> bool:
    """Lay the figure out so no text is cut; True when only a tight bounding box at save time can keep it all."""
    steps = (lambda: None, lambda: _wrap_long_texts(fig), lambda: _shorten_ticks(fig))
    for step in steps:
        step()
        try:
            with warnings.catch_warnings():  # "tight layout not applied" is handled by the next step
                warnings.simplefilter("ignore", UserWarning)
                fig.tight_layout()
        except (ValueError, RuntimeError) as exc:  # layout is cosmetic; never fail a script for it
            logger.debug("tight_layout failed: %s", exc)
        if not clipped_texts(fig):
            return False
    logger.debug("chart text still reaches past the edges; saving with a tight bounding box")
    return True


def draw_scatter(ax: Any, x: Any, y: Any, *, color: str = "#4C72B0") -> bool:
    """Scatter ``y`` against ``x``, or shade hexagonal bins by row count above :data:`SCATTER_MAX_POINTS` points.

    Thousands of overlapping points hide where the rows are, so a big scatter becomes a hexbin (all rows, nothing
    sampled away). Returns True when binned, so the caption can say so.
    """
    xs, ys = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(xs) <= SCATTER_MAX_POINTS:
        ax.scatter(xs, ys, s=12, alpha=0.5, color=color)
        return False
    ax.hexbin(xs, ys, gridsize=40, mincnt=1, cmap="Blues", linewidths=0)
    return True


def distribution_scale(values: Any) -> str:
    """How a histogram of ``values`` stays readable: ``linear``, ``log`` or ``clipped``.

    A few values far beyond the middle half (more than :data:`SKEW_IQRS` interquartile ranges from the median)
    squeeze every other value into one bar. Positive values spanning two or more orders of magnitude get a log
    axis; otherwise the axis stops at the 1st/99th percentile on the long side.
    """
    s = pd.Series(np.asarray(values, dtype=float)).replace([np.inf, -np.inf], np.nan).dropna()
    if len(s) < 10:
        return "linear"
    q1, median, q3 = (float(s.quantile(q)) for q in (0.25, 0.5, 0.75))
    iqr = q3 - q1
    if iqr <= 0 or max(float(s.max()) - median, median - float(s.min())) <= SKEW_IQRS * iqr:
        return "linear"
    low = float(s.min())
    return "log" if low > 0 and float(s.max()) / low >= 100 else "clipped"


def _clip_range(s: pd.Series) -> tuple[float, float]:
    median, iqr = float(s.median()), float(s.quantile(0.75) - s.quantile(0.25))
    low = float(s.quantile(0.01)) if median - float(s.min()) > SKEW_IQRS * iqr else float(s.min())
    high = float(s.quantile(0.99)) if float(s.max()) - median > SKEW_IQRS * iqr else float(s.max())
    return low, high


def draw_histogram(ax: Any, values: Any, *, color: str = "#4C72B0", integer: bool = False) -> str:
    """A histogram that a few outliers cannot flatten (see :func:`distribution_scale`); returns the scale used.

    Its y axis counts rows, so its ticks are whole numbers; ``integer`` says the values are whole numbers too (a
    count column), so a linear x axis gets whole-number ticks as well.
    """
    from matplotlib.ticker import NullFormatter

    s = pd.Series(np.asarray(values, dtype=float)).replace([np.inf, -np.inf], np.nan).dropna()
    scale = distribution_scale(s)
    count = min(40, max(10, int(len(s) ** 0.5)))
    compact_axis(ax.yaxis, integer=True)
    if integer and scale != "log":
        compact_axis(ax.xaxis, integer=True)
    if scale == "log":
        ax.hist(s, bins=np.geomspace(float(s.min()), float(s.max()), count + 1), color=color, alpha=0.85)
        ax.set_xscale("log")
        ax.xaxis.set_minor_formatter(NullFormatter())
        compact_axis(ax.xaxis)
    elif scale == "clipped":
        ax.hist(s, bins=count, range=_clip_range(s), color=color, alpha=0.85)
    else:
        ax.hist(s, bins=count, color=color, alpha=0.85)
    return scale


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
    _dedupe_ticks(fig)
    tight = _layout(fig)
    png = folder / f"{stem}.png"
    # Measured on the laid-out figure, as it is saved: what a reader (or a lint) can check without looking.
    sidecar = {
        "title": str(title),
        "alt": str(alt),
        "caption": str(caption),
        "clipped_texts": clipped_texts(fig, tight=tight),
        "repeated_tick_labels": repeated_tick_labels(fig),
    }
    fig.savefig(png, dpi=CHART_DPI, **({"bbox_inches": "tight", "pad_inches": _TIGHT_PAD_IN} if tight else {}))
    write_json(folder / f"{stem}.json", sidecar)
    logger.debug("saved chart %s", png)
    return f"charts/{stem}.png"
