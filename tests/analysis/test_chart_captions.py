"""Issue 11 follow-up, item 2: save_chart refuses a title or caption that states a number (or a reference), since
both are printed in the report as they are; the data's own names, codes, years and dates may stay."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from matplotlib.figure import Figure

from insightloom.analysis_utils import save_chart


@pytest.fixture
def job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("INSIGHTLOOM_JOB_DIR", str(tmp_path))
    (tmp_path / "cache").mkdir()
    columns = [{"name": "Score (0-100)", "role": "measure"}, {"name": "Sales 2Q", "role": "measure"}]
    profile = {"tables": [{"view": "sales", "columns": columns}]}
    (tmp_path / "cache" / "profile.json").write_text(json.dumps(profile), encoding="utf-8")
    return tmp_path


def _figure() -> Figure:
    fig = Figure(figsize=(6, 3))
    fig.add_subplot().bar(["a", "b"], [1, 2])
    return fig


@pytest.mark.parametrize(
    ("field", "text", "named"),
    [
        ("caption", "North leads with 61.3% of revenue in 34 stores", ["'61.3'", "'34'"]),
        ("title", "Revenue grew 5배 to 1,234만원", ["'5'", "'1,234'"]),
        ("caption", "Revenue is {{calc:total_revenue}}", ["{{calc:total_revenue}}"]),
        ("caption", "Revenue is {calc:total_revenue}", ["{calc:total_revenue}"]),
    ],
)
def test_a_number_in_the_title_or_caption_is_refused_before_anything_is_saved(
    job: Path, field: str, text: str, named: list[str]
) -> None:
    texts = {"title": "Revenue", "caption": "Revenue by region", field: text}
    with pytest.raises(ValueError) as info:
        save_chart(_figure(), "revenue", alt="Bar chart", **texts)
    message = str(info.value)
    assert all(f"{field} holds {thing}" in message or f"{field} holds the number {thing}" in message for thing in named)
    assert "{{calc:ID}}" in message and "without numbers" in message
    assert not (job / "charts" / "revenue.png").exists() and not (job / "charts" / "revenue.json").exists()


def test_names_codes_years_and_dates_may_stay(job: Path) -> None:
    caption = "Score (0-100) and Sales 2Q by region in Q3 2024, the top 5 groups since 2024-09-01"
    assert save_chart(_figure(), "scores", title="Score (0-100) by region", alt="Bar chart", caption=caption)
    assert json.loads((job / "charts" / "scores.json").read_text(encoding="utf-8"))["caption"] == caption
