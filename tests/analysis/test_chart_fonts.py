"""Korean tick labels get the CJK font (not empty boxes), and axes never show 1e9 offsets."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pytest

from insightloom.analysis_utils.charts import save_chart
from insightloom.analysis_utils.numbers_text import compact_number
from insightloom.fonts import find_cjk_font


def test_korean_tick_labels_use_the_cjk_font(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    font = find_cjk_font()
    if font is None:
        pytest.skip("no CJK font installed: pip install koreanize-matplotlib")
    monkeypatch.setenv("INSIGHTLOOM_JOB_DIR", str(tmp_path))
    fig, ax = plt.subplots()
    ax.barh(["쿠빵", "네이바"], [3.4e9, 2.1e9])
    save_chart(fig, "channels", title="매체별 매출", alt="bar chart", caption="쿠빵 leads")
    fig.canvas.draw()
    names = {label.get_fontname() for label in ax.get_yticklabels()}
    assert names == {matplotlib.font_manager.FontProperties(fname=str(font.path)).get_name()}
    assert ax.xaxis.get_offset_text().get_text() == ""
    assert (tmp_path / "charts" / "channels.png").stat().st_size > 10_000
    plt.close(fig)


@pytest.mark.parametrize("value, text", [(3.4e9, "3.4B"), (2e6, "2M"), (12500, "12.5K"), (0.25, "0.25"), (7, "7")])
def test_compact_axis_numbers(value: float, text: str) -> None:
    assert compact_number(value) == text
