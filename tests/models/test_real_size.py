"""Real-size offline replies: the same decisions at a hosted model's length, and still a verified report."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from insightloom.config import Settings, load_settings
from insightloom.demo_data import generate_demo_csv, write_column_definitions
from insightloom.errors import ConfigError
from insightloom.models.offline import OfflineModel
from insightloom.models.offline.conversation import Conversation
from insightloom.models.offline.real_size import report as report_module
from insightloom.models.offline.real_size.report import expand, sized_render
from insightloom.models.offline.real_size.scripts import sized_script
from insightloom.report.render import check_markdown
from insightloom.workflow import AutoApprove, JobOptions, run_job

REQUEST = "Analyze this sales data and write a DOCX report"
#: The issue's floor for the demo (a hosted model's size; the compact offline model writes 1,143 and 2,176).
MIN_OUTPUT = {"coder": 8_000, "reporter": 10_000}


def _demo(root: Path, size: str) -> Path:
    csv = generate_demo_csv(root / "in" / "bakery_sales.csv")
    columns = write_column_definitions(root / "in" / "column_definitions.json")
    settings = Settings(offline_reply_size=size).with_provider("offline")
    opts = JobOptions(
        inputs=[csv], request=REQUEST, settings=settings, job_dir=root / size, columns_file=columns, cwd=root
    )
    outcome = run_job(opts, AutoApprove())
    assert outcome.status == "completed", outcome.error
    return outcome.job_dir


@pytest.fixture(scope="module")
def demo_jobs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("real-size")
    return {size: _demo(root, size) for size in ("compact", "real")}


def _output(job: Path) -> dict[str, int]:
    usage = json.loads((job / "usage.json").read_text(encoding="utf-8"))
    return {agent: int(row["output_tokens"]) for agent, row in usage["agents"].items()}


def _verified_ids(job: Path) -> set[str]:
    citations = json.loads((job / "citations.json").read_text(encoding="utf-8"))["citations"]
    return {c["calculation_id"] for c in citations if c["verification_status"] == "verified"}


@pytest.mark.e2e
def test_the_demo_at_real_size_outputs_what_a_hosted_model_would(demo_jobs: dict[str, Path]) -> None:
    compact, real = _output(demo_jobs["compact"]), _output(demo_jobs["real"])
    for role, floor in MIN_OUTPUT.items():
        assert real[role] >= floor, (role, real[role])
        assert compact[role] < floor  # the compact model stays what it was: the lanes measure different things


@pytest.mark.e2e
def test_real_size_changes_the_words_not_the_figures(demo_jobs: dict[str, Path]) -> None:
    assert _verified_ids(demo_jobs["real"]) == _verified_ids(demo_jobs["compact"])
    report = (demo_jobs["real"] / "report.md").read_text(encoding="utf-8")
    assert "How these figures were computed" in report
    assert check_markdown(report, demo_jobs["real"]) == []


@pytest.mark.e2e
def test_the_real_scripts_are_full_scripts_that_record_the_same_item(demo_jobs: dict[str, Path]) -> None:
    scripts = sorted((demo_jobs["real"] / "code").glob("0*.py"))
    assert scripts
    for script in scripts:
        source = script.read_text(encoding="utf-8")
        compact = (demo_jobs["compact"] / "code" / script.name).read_text(encoding="utf-8")
        calls = [n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Call) and getattr(n.func, "id", "")]
        item = next(n.args[0].value for n in calls if n.func.id == "run_standard")  # type: ignore[attr-defined]
        assert item in compact  # the same plan item, recorded the same way
        assert "load_df(VIEW)" in source and "check_columns(df)" in source
        assert len(source.splitlines()) > 5 * len(compact.splitlines())


def _conversation(profile: dict, exchanges: list[tuple[str, dict, str, str]] = ()) -> Conversation:  # type: ignore[assignment]
    messages: list = [{"role": "user", "content": [{"text": "go"}]}]
    for index, (name, tool_input, result, status) in enumerate(exchanges):
        use = {"toolUseId": f"t{index}", "name": name, "input": tool_input}
        done = {"toolUseId": f"t{index}", "status": status, "content": [{"text": result}]}
        messages.append({"role": "assistant", "content": [{"toolUse": use}]})
        messages.append({"role": "user", "content": [{"toolResult": done}]})
    system = f"<data_profile>{json.dumps(profile)}</data_profile>"
    return Conversation(system, messages, {"write_and_execute_tool", "render_section", "render_report"})


PROFILE = {
    "tables": [
        {
            "view": "orders",
            "columns": [
                {"name": "Email", "dtype": "string", "role": "pii"},
                {"name": "Revenue", "dtype": "float64", "role": "measure"},
                {"name": "Region", "dtype": "string", "role": "category"},
            ],
        }
    ]
}


def test_a_real_script_never_reads_a_personal_column() -> None:
    compact = "from coder_analysis_utils import run_standard\n\nrun_standard('Profile the data', language='en')\n"
    source = sized_script(compact, _conversation(PROFILE))
    assert "Email" not in source and "'Revenue'" in source and "'Region'" in source
    assert "run_standard('Profile the data', language='en')" in source
    compile(source, "script.py", "exec")
    assert sized_script("print('hello')\n", _conversation(PROFILE)) == "print('hello')\n"  # not a standard script


CITATIONS = {
    "total": {"calculation_id": "total", "description": "Total Revenue", "formula": "df['Revenue'].sum()",
              "source_file": "orders.csv", "verification_method": "check", "unit": "USD"},
    "cols": {"calculation_id": "cols", "description": "Missing share", "formula": "df.isna().mean()[1]",
             "source_file": "orders.csv", "verification_method": "check", "unit": "%"},
    "rows": {"calculation_id": "rows", "description": "Number of rows", "formula": "len(df)",
             "source_file": "orders.csv", "verification_method": "check", "unit": "count"},
}  # fmt: skip
DRAFT = (
    "# Report\n\n## Executive summary\n\n- Total is {{calc:total}}.\n\n## Findings\n\n### Revenue\n\n"
    "Total `Revenue` is {{calc:total}} over {{calc:cols}} columns and {{calc:rows}} rows.\n\n## Conclusions\n\n"
    "Done.\n"
)


def test_method_notes_hold_no_typed_digit_and_each_figure_once() -> None:
    report = expand(DRAFT, CITATIONS)
    notes = report.split("How these figures were computed", 1)[1]
    assert notes.count("{{calc:total}}") == 1 and "{{calc:cols}}" in notes
    assert "{{calc:rows}}" not in notes  # printed without a citation: nothing to explain
    assert "mean()[1]" not in report  # a formula with a digit would print like a citation marker
    assert "## Method and checks" in report and "## Limitations" in report


def _stored(calls: list, status: str = "success") -> list[tuple[str, dict, str, str]]:
    return [(c.name, dict(c.input), "Stored section" if status == "success" else "refused", status) for c in calls]


def test_a_report_goes_out_as_sections_in_one_reply_then_renders() -> None:
    first = sized_render(DRAFT, _conversation(PROFILE))
    headings = [c.input["heading"] for c in first]
    assert headings[:3] == ["# Report", "## Executive summary", "## Method and checks"]
    assert {c.name for c in first} == {"render_section"} and "## Limitations" in headings
    assert [c.name for c in sized_render(DRAFT, _conversation(PROFILE, _stored(first)))] == ["render_report"]
    fallback = sized_render(DRAFT, _conversation(PROFILE, _stored(first[:1], "error")))
    assert [(c.name, c.input) for c in fallback] == [("render_report", {"markdown": DRAFT})]  # the repair path


def test_a_longer_report_goes_out_over_several_turns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(report_module, "SECTIONS_PER_REPLY", 2)
    sent: list[tuple[str, dict, str, str]] = []
    turns = 0
    while (calls := sized_render(DRAFT, _conversation(PROFILE, sent)))[0].name == "render_section":
        assert len(calls) <= 2
        sent += _stored(calls)
        turns += 1
    assert turns == 3 and len({entry[1]["heading"] for entry in sent}) == len(sent) == 6


def test_reply_size_is_checked_where_it_is_set(tmp_path: Path) -> None:
    config = tmp_path / "insightloom.yaml"
    config.write_text("offline_reply_size: huge\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="compact .*or real"):
        load_settings(config, env={})
    with pytest.raises(ValueError, match="reply_size"):
        OfflineModel(role="coder", reply_size="huge")
