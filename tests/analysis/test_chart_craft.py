"""Chart craft: no clipped label or title (checked with matplotlib's renderer), no repeated tick labels, big
scatters binned, skewed histograms on a log or clipped axis, Korean text kept in a CJK font."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import numpy as np
import pytest
from matplotlib.collections import PathCollection, PolyCollection
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter
from PIL import Image

from insightloom.analysis_utils.charts import (
    SCATTER_MAX_POINTS,
    clipped_texts,
    distribution_scale,
    draw_histogram,
    draw_scatter,
    repeated_tick_labels,
    save_chart,
)
from insightloom.fonts import find_cjk_font


@pytest.fixture
def job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("INSIGHTLOOM_JOB_DIR", str(tmp_path))
    return tmp_path


def _long_title_figure() -> Figure:
    fig = Figure(figsize=(6, 3.4))
    ax = fig.subplots()
    ax.plot([1, 2, 3], [3, 1, 2])
    ax.set_title("Average order value per customer segment and sales channel over the whole year", fontsize=18)
    return fig


def test_the_clip_check_finds_a_title_cut_at_the_edges() -> None:
    problems = clipped_texts(_long_title_figure())
    assert len(problems) == 1 and "Average order value" in problems[0] and "right" in problems[0]


def test_the_clip_check_finds_text_placed_outside_and_long_tick_labels() -> None:
    fig = Figure(figsize=(6, 3.4))
    ax = fig.subplots()
    ax.barh(["a category name that is far too long to fit beside the bars " * 2, "b"], [1, 2])
    fig.text(1.02, 0.5, "outside")
    problems = clipped_texts(fig)
    assert any(p == "'outside' crosses the right edge" for p in problems)
    assert any("far too long" in p and "left" in p for p in problems)


def test_save_chart_output_has_no_clipped_text_and_keeps_the_docx_width(job: Path) -> None:
    fig = _long_title_figure()
    path = save_chart(fig, "long_title", title="Orders", alt="Line chart", caption="Orders over time")
    assert clipped_texts(fig) == []
    assert "\n" in fig.axes[0].title.get_text()  # wrapped, not cut
    with Image.open(job / path) as image:
        assert image.size[0] == 900
    assert json.loads((job / "charts" / "long_title.json").read_text(encoding="utf-8"))["clipped_texts"] == []


def test_save_chart_shortens_category_labels_wider_than_the_figure(job: Path) -> None:
    fig = Figure(figsize=(6, 3.4))
    ax = fig.subplots()
    ax.barh(["x" * 120, "short"], [1, 2])
    save_chart(fig, "long_labels", title="Groups", alt="Bar chart", caption="Groups by value")
    assert clipped_texts(fig) == []
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert "short" in labels and any(label.endswith("…") and len(label) < 40 for label in labels)


def test_close_ticks_never_print_the_same_label_twice(job: Path) -> None:
    fig = Figure(figsize=(6, 3.4))
    ax = fig.subplots()
    ax.plot([0, 1, 2, 3], [2010, 2011, 2012, 2013])
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v / 1000:.3g}K"))  # five '2.01K'
    assert repeated_tick_labels(fig) == ["'2.01K' on the y axis"]
    save_chart(fig, "ticks", title="Close values", alt="Line chart", caption="Close values")
    assert repeated_tick_labels(fig) == []
    labels = [t.get_text() for t in ax.get_yticklabels() if t.get_text()]
    assert len(labels) == len(set(labels)) > 2


def test_default_numeric_axes_get_distinct_compact_labels(job: Path) -> None:
    fig = Figure(figsize=(6, 3.4))
    ax = fig.subplots()
    ax.plot([0, 1], [2_010_000, 2_014_000])
    save_chart(fig, "millions", title="Millions", alt="Line chart", caption="Millions")
    labels = [t.get_text() for t in ax.get_yticklabels() if t.get_text()]
    assert all(label.endswith("M") for label in labels) and len(set(labels)) == len(labels)
    assert ax.yaxis.get_offset_text().get_text() == ""


def _offsets(ax: Any) -> int:
    """The most points any scatter collection of ``ax`` draws."""
    return max((np.asarray(c.get_offsets()).shape[0] for c in ax.collections if isinstance(c, PathCollection)),
               default=0)  # fmt: skip


def test_a_big_scatter_is_binned_and_a_small_one_is_not() -> None:
    rng = np.random.default_rng(7)
    fig = Figure()
    ax = fig.subplots()
    assert draw_scatter(ax, rng.normal(size=17_000), rng.normal(size=17_000)) is True
    assert _offsets(ax) == 0 and any(isinstance(c, PolyCollection) for c in ax.collections)
    ax = Figure().subplots()
    assert draw_scatter(ax, rng.normal(size=300), rng.normal(size=300)) is False
    assert _offsets(ax) == 300 <= SCATTER_MAX_POINTS


def test_skewed_values_get_a_log_or_clipped_axis() -> None:
    rng = np.random.default_rng(3)
    money = np.concatenate([rng.lognormal(3, 0.4, 2000), [5_000.0, 9_000.0, 20_000.0]])  # a few huge orders
    assert distribution_scale(money) == "log"
    changes = np.concatenate([rng.normal(0, 1, 2000), [-400.0, 900.0]])  # signed: no log axis
    assert distribution_scale(changes) == "clipped"
    assert distribution_scale(rng.normal(50, 5, 2000)) == "linear"
    assert distribution_scale([1.0, 2.0]) == "linear"


def test_draw_histogram_applies_the_scale() -> None:
    rng = np.random.default_rng(3)
    ax = Figure().subplots()
    assert draw_histogram(ax, np.concatenate([rng.lognormal(3, 0.4, 2000), [20_000.0]])) == "log"
    assert ax.get_xscale() == "log"
    ax = Figure().subplots()
    values = np.concatenate([rng.normal(0, 1, 2000), [900.0]])
    assert draw_histogram(ax, values) == "clipped"
    assert ax.get_xlim()[1] < 100  # the one extreme value does not stretch the axis


def test_a_wrapped_korean_title_keeps_the_cjk_font(job: Path) -> None:
    font = find_cjk_font()
    if font is None:
        pytest.skip("no CJK font installed")
    fig = Figure(figsize=(6, 3.4))
    ax = fig.subplots()
    ax.bar(["쿠빵", "네이바"], [3, 1])
    ax.set_title(
        "매체별 광고비용과 매출액, 클릭수, 전환수, 노출수를 한 번에 비교한 아주 긴 제목입니다 " * 2, fontsize=16
    )
    save_chart(fig, "korean_long", title="매체", alt="막대", caption="매체별")
    assert clipped_texts(fig) == []
    assert Path(str(ax.title.get_fontproperties().get_file())) == font.path
    assert Path(str(ax.get_xticklabels()[0].get_fontproperties().get_file())) == font.path
