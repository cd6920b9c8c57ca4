"""``ask --analyze``: a bounded follow-up analysis merges only new, DuckDB-verified numbers into a finished job."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

from insightloom.agents import factory
from insightloom.analysis.catalog import AnalysisSpec
from insightloom.ask import analyze
from insightloom.ask.analyze import plan_task, run_followup
from insightloom.ask.fragments import load_knowledge
from insightloom.config import Settings
from insightloom.demo_data import generate_demo_csv, write_column_definitions
from insightloom.errors import BadInputError
from insightloom.joblock import JobLock, JobLocked
from insightloom.models.offline import OfflineModel
from insightloom.models.offline.conversation import Conversation, Reply
from insightloom.workflow import AutoApprove, JobOptions, run_job

WEST_LAST_MONTH = "what was total revenue in the West region in the last month"

# What an LLM Coder writes for WEST_LAST_MONTH: one filtered total, tracked with its own DuckDB check.
WEST_SCRIPT = """\
from coder_analysis_utils import load_df, track_calculation
df = load_df("bakery_sales")
month = df["Date"].dt.to_period("M")
value = float(df.loc[(df["Region"] == "West") & (month == month.max()), "Revenue"].sum())
track_calculation(
    "west_revenue_last_month", value, "Revenue of the West region in the last month", "sum of Revenue",
    "bakery_sales.csv", ["Revenue", "Region", "Date"], "high", unit="USD",
    check="SELECT SUM(CAST(\\"Revenue\\" AS DOUBLE)) FROM bakery_sales WHERE \\"Region\\" = 'West' AND "
    "date_trunc('month', CAST(\\"Date\\" AS TIMESTAMP)) = "
    "(SELECT max(date_trunc('month', CAST(\\"Date\\" AS TIMESTAMP))) FROM bakery_sales)",
)
"""

# A Coder that misbehaves in its scratch copy: it doubles the cached data so a made-up number passes its own check
# there, re-tracks an existing id with another value, and tracks a number with no check at all.
TAMPER_SCRIPT = """\
import pandas as pd
from coder_analysis_utils import track_calculation
path = "cache/bakery_sales.parquet"
df = pd.read_parquet(path)
pd.concat([df, df]).to_parquet(path)
track_calculation("doubled_rows", 2 * len(df), "Rows, doubled", "len(df)", "bakery_sales.csv", [], "high",
                  check="SELECT COUNT(*) FROM bakery_sales")
track_calculation("rows", 1.0, "Number of rows", "len(df)", "bakery_sales.csv", [], "high")
track_calculation("unchecked_guess", 42, "A guess", "none", "bakery_sales.csv", [], "low")
"""


@pytest.fixture(scope="session")
def demo_job(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo job, run once on the offline model (as ``insightloom demo`` does)."""
    root = tmp_path_factory.mktemp("demo")
    csv = generate_demo_csv(root / "in" / "bakery_sales.csv")
    columns = write_column_definitions(root / "in" / "column_definitions.json")
    opts = JobOptions(
        inputs=[csv],
        request="Analyze this sales data and write a DOCX report",
        settings=Settings().with_provider("offline"),
        job_dir=root / "job",
        columns_file=columns,
        cwd=root,
    )
    outcome = run_job(opts, AutoApprove())
    assert outcome.status == "completed", outcome.error
    return outcome.job_dir


@pytest.fixture
def job(demo_job: Path, tmp_path: Path) -> Path:
    """A private copy of the demo job, so each test merges into its own."""
    return Path(shutil.copytree(demo_job, tmp_path / "job", symlinks=True))


def offline() -> Settings:
    return Settings().with_provider("offline")


def calcs(job_dir: Path) -> dict[str, dict]:
    data = json.loads((job_dir / "calculation_metadata.json").read_text(encoding="utf-8"))
    return {c["id"]: c for c in data["calculations"]}


def citations(job_dir: Path) -> dict[str, dict]:
    data = json.loads((job_dir / "citations.json").read_text(encoding="utf-8"))
    return {c["calculation_id"]: c for c in data["citations"]}


def scripted_coder(monkeypatch: pytest.MonkeyPatch, script: str) -> list[Conversation]:
    """Replace the Coder by an LLM-like one that runs ``script`` once, then reports; returns what it saw."""
    seen: list[Conversation] = []

    def brain(conv: Conversation) -> Reply:
        seen.append(conv)
        if not any(e.name == "write_and_execute_tool" for e in conv.exchanges()):
            return Reply.call("write_and_execute_tool", file_path="90_followup.py", content=script, timeout=60)
        return Reply(text="## Status\nSUCCESS\n## Completed Tasks\n- done\n## Key Insights\n- none\n")

    def make_model(spec, role, settings):  # type: ignore[no-untyped-def]
        return OfflineModel(role=role, max_tokens=spec.max_tokens, brain=brain if role == "coder" else None)

    monkeypatch.setattr(factory, "make_model", make_model)
    return seen


def demo_profile() -> dict:
    """A profile shaped like the demo's: a date, three categories and two measures."""
    cat = [{"value": v, "count": 10} for v in ("North", "South", "East", "West")]
    columns = [
        {"name": "Date", "role": "date", "dtype": "datetime", "min": "2024-01-01", "max": "2024-12-31"},
        {"name": "Region", "role": "category", "dtype": "string", "distinct": 4, "top_values": cat},
        {"name": "Channel", "role": "category", "dtype": "string", "distinct": 3, "top_values": []},
        {"name": "Units", "role": "measure", "dtype": "int64", "aggregation": "sum"},
        {"name": "Revenue", "role": "measure", "dtype": "float64", "aggregation": "sum", "unit": "USD"},
    ]
    table = {
        "view": "sales",
        "rows": 100,
        "columns": columns,
        "headline_measures": [{"column": "Revenue", "reason": ""}, {"column": "Units", "reason": ""}],
        "time_axis": {"kind": "date", "column": "Date", "period": "month"},
    }
    return {"tables": [table], "aliases": {"data": "sales"}, "language": "en"}


# --- the question as a plan item ------------------------------------------------------------------------------


def test_a_statistics_question_becomes_a_catalog_request() -> None:
    from insightloom.statistics.request import parse_item as parse_stat_item

    task = plan_task("How does revenue correlate with units?", demo_profile())
    assert task.request is not None and not task.missing
    assert [s.op for s in task.request.steps] == ["pearson"] and set(task.request.steps[0].columns) == {
        "Revenue", "Units"}  # fmt: skip
    assert parse_stat_item(task.item) == task.request  # the offline Coder reads the same request back
    north = plan_task("What is the total revenue of the North region?", demo_profile()).request
    assert north is not None and north.to_json()["filters"] == [["Region", "=", "North"]]
    assert [s.op for s in north.steps] == ["sum"]


@pytest.mark.parametrize(
    ("question", "item"),
    [
        ("What is the average revenue by channel?", "Compare average `Revenue` by `Channel`: group averages"),
        ("What was the weekly trend of revenue?", "Trend of `Revenue` per week over `Date`: totals per period"),
        ("What is the distribution of units?", "Distribution of `Units`: median, p90"),
    ],
)
def test_a_question_the_catalog_expresses_becomes_its_exact_item(question: str, item: str) -> None:
    from insightloom.analysis.catalog import parse_item

    task = plan_task(question, demo_profile())
    assert task.item.startswith(item) and not task.missing
    assert parse_item(task.item, demo_profile()) == task.spec  # the offline Coder reads the same analysis back


@pytest.mark.parametrize(
    ("question", "language", "spec"),
    [
        (
            WEST_LAST_MONTH,
            "en",
            AnalysisSpec("kpi", None, "Revenue", "Date", agg="sum", where=(("Region", "West"),), last_period="month"),
        ),
        (
            "Average units for West in the latest week?",
            "en",
            AnalysisSpec("kpi", None, "Units", "Date", agg="mean", where=(("Region", "West"),), last_period="week"),
        ),
        (
            "What was revenue in the final year?",
            "en",
            AnalysisSpec("kpi", None, "Revenue", "Date", agg="sum", last_period="year"),
        ),
        (
            "East 지역의 지난달 Revenue 합계는?",
            "ko",
            AnalysisSpec("kpi", None, "Revenue", "Date", agg="sum", where=(("Region", "East"),), last_period="month"),
        ),
    ],
)
def test_a_filtered_question_becomes_the_filtered_kpi_item(question: str, language: str, spec: AnalysisSpec) -> None:
    from insightloom.analysis.catalog import parse_item

    task = plan_task(question, demo_profile(), language)
    assert task.spec == spec and not task.missing
    assert task.item == spec.item_text(language) and parse_item(task.item, demo_profile()) == spec


@pytest.mark.parametrize(
    ("question", "missing"),
    [
        ("What was revenue in the West region in March?", "period filter (in March)"),
        ("What was total revenue last month by channel?", "a filtered breakdown"),
        ("What was the weekly trend of revenue in West?", "a filtered trend"),
        (
            "Total revenue of West and East in the last month?",
            "two values of one filter (`Region` = East, `Region` = West)",
        ),
        ("How many orders in West?", "names no measure"),
    ],
)
def test_a_filter_the_catalog_cannot_express_is_passed_on_as_asked(question: str, missing: str) -> None:
    task = plan_task(question, demo_profile())
    assert task.spec is None and task.item == question
    assert missing in task.missing and "cannot express" in task.missing


def test_a_filtered_total_of_a_mean_only_measure_is_not_planned() -> None:
    profile = demo_profile()
    revenue = profile["tables"][0]["columns"][4]
    revenue["aggregation"] = "mean"  # e.g. a price: its total means nothing
    task = plan_task(WEST_LAST_MONTH, profile)
    assert task.spec is None and "a total of `Revenue`" in task.missing and "ask for its average" in task.missing
    assert plan_task(WEST_LAST_MONTH.replace("total", "average"), profile).spec is not None


def test_a_question_naming_no_column_has_no_item() -> None:
    task = plan_task("why is the sky blue?", demo_profile())
    assert task.spec is None and "no catalog item" in task.missing


# --- whole follow-ups on the demo job --------------------------------------------------------------------------


@pytest.mark.e2e
def test_offline_follow_up_merges_only_new_verified_numbers(job: Path) -> None:
    before, cited_before = calcs(job), citations(job)
    result = run_followup(job, "What is the average revenue by channel?", settings=offline())
    after, cited = calcs(job), citations(job)
    assert result.new_ids and set(result.new_ids).isdisjoint(before)
    assert {k: after[k] for k in before} == before  # every existing calculation unchanged
    assert {k: cited[k] for k in cited_before} == cited_before
    assert list(after) == [*before, *result.new_ids]  # appended in tracking order
    for calc_id in result.new_ids:
        assert cited[calc_id]["verification_status"] == "verified"
        # A number by its DuckDB check; a claim (the breakdown's driver, say) by the Validator's SciPy re-computation.
        method = "stat" if after[calc_id].get("kind") == "claim" else "check"
        assert cited[calc_id]["verification_method"] == method and cited[calc_id]["check_value"] is not None
    assert any(after[c].get("kind") != "claim" for c in result.new_ids)
    assert "avg_revenue_by_channel_groups" in result.refused  # tracked without a DuckDB check: not merged
    assert result.model_calls >= 1 and result.cost_usd > 0 and result.seconds > 0
    record = json.loads((job / result.record).read_text(encoding="utf-8"))
    assert record["new_ids"] == result.new_ids and record["item"] == result.item and record["scripts"]
    assert not (job / "ask" / "scratch").exists()  # the scripts ran outside the job folder
    indexed = {c for f in load_knowledge(job) for c in f.calc_ids}
    assert set(result.new_ids) <= indexed  # re-indexed: the answer can cite them


def west_last_month(job_dir: Path) -> float:
    """Revenue of the West region in the data's last month, computed with pandas alone."""
    df = pd.read_parquet(job_dir / "cache" / "bakery_sales.parquet")
    month = df["Date"].dt.to_period("M")
    return float(df.loc[(df["Region"] == "West") & (month == month.max()), "Revenue"].sum())


@pytest.mark.e2e
def test_the_offline_coder_answers_west_last_month_with_a_verified_number(job: Path) -> None:
    before, cited_before = calcs(job), citations(job)
    result = run_followup(job, WEST_LAST_MONTH, settings=offline())
    assert result.new_ids == ["revenue_total_region_west_last_month"], (result.refused, result.missing)
    assert result.item == "Compute the total of `Revenue` for `Region` = 'West' in the last month of `Date`"
    new = calcs(job)["revenue_total_region_west_last_month"]
    entry = citations(job)["revenue_total_region_west_last_month"]
    expected = west_last_month(job)
    assert new["value"] == pytest.approx(expected) and entry["check_value"] == pytest.approx(expected)
    assert entry["verification_status"] == "verified" and entry["verification_method"] == "check"
    assert "WHERE" not in new["check"] and "\"Region\" = 'West'" in new["check"]  # one CASE WHEN, as the trackers
    after = calcs(job)
    assert {k: after[k] for k in before} == before and list(after) == [*before, *result.new_ids]
    assert {k: v for k, v in citations(job).items() if k in cited_before} == cited_before
    indexed = {c for f in load_knowledge(job) for c in f.calc_ids}
    assert "revenue_total_region_west_last_month" in indexed  # the answer can cite it


@pytest.mark.e2e
def test_west_last_month_by_an_llm_like_coder_is_verified_by_duckdb(job: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen = scripted_coder(monkeypatch, WEST_SCRIPT)
    before = calcs(job)
    result = run_followup(job, WEST_LAST_MONTH, settings=offline())
    assert result.new_ids == ["west_revenue_last_month"], result.refused
    entry = citations(job)["west_revenue_last_month"]
    assert entry["verification_status"] == "verified" and entry["check_value"] == pytest.approx(west_last_month(job))
    assert {k: calcs(job)[k] for k in before} == before
    assert f"- [ ] {result.item}" in (seen[0].tag("plan_section") or "")  # the catalog wording is the one item


@pytest.mark.e2e
def test_scripts_only_touch_the_scratch_copy_and_tampering_is_refused(
    job: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scripted_coder(monkeypatch, TAMPER_SCRIPT)
    before = {p: p.read_bytes() for p in job.rglob("*") if p.is_file()}
    result = run_followup(job, "How many rows are there?", settings=offline())
    assert result.new_ids == []
    assert "disagrees" in result.refused["doubled_rows"]  # re-computed on the real cache, not the doctored copy
    assert "existing values never change" in result.refused["rows"]
    assert "no DuckDB check" in result.refused["unchecked_guess"]
    changed = [p for p, data in before.items() if p.read_bytes() != data]
    assert changed == []  # only the new record file was added
    assert [p.relative_to(job).as_posix() for p in job.rglob("*") if p.is_file() and p not in before] == [
        "ask/analyses/1.json"
    ]


@pytest.mark.e2e
def test_the_scratch_copy_is_a_fresh_temp_folder_with_the_jobs_files_removed_afterwards(
    job: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    temp_root = tmp_path / "tmp-root"
    temp_root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp_root))
    seen: dict[str, object] = {}

    def coder(rt, task):  # type: ignore[no-untyped-def]
        seen["root"] = rt.job.root
        seen["files"] = {p.relative_to(rt.job.root).as_posix(): p.read_bytes() for p in rt.job.root.rglob("*.*")}
        return ""

    monkeypatch.setattr(analyze, "run_coder", coder)
    run_followup(job, "What is the average revenue by channel?", settings=offline())
    scratch = seen["root"]
    job_id = json.loads((job / "job.json").read_text(encoding="utf-8"))["id"]
    assert isinstance(scratch, Path) and scratch.parent.parent == temp_root and job_id not in str(scratch)
    wanted = [p for folder in analyze.COPIED_DIRS for p in (job / folder).rglob("*.*")]
    wanted += [job / name for name in analyze.COPIED_FILES]
    assert seen["files"] == {p.relative_to(job).as_posix(): p.read_bytes() for p in wanted}
    assert list(temp_root.iterdir()) == []  # removed, though the Coder left the follow-up normally


def test_the_follow_ups_script_server_is_stopped_when_its_coder_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import insightloom.agents as agents
    from insightloom.execution import get_runner

    runner = get_runner(offline().runner)
    released: list[Path] = []
    monkeypatch.setattr(runner, "release", released.append)

    def crashing_coder(role, rt, task):  # type: ignore[no-untyped-def]
        raise RuntimeError("the coder crashed")

    monkeypatch.setattr(agents, "run_tool_agent", crashing_coder)
    scratch = SimpleNamespace(settings=offline(), root=tmp_path)
    with pytest.raises(RuntimeError, match="crashed"):
        analyze.run_coder(scratch, "task")  # type: ignore[arg-type]
    monkeypatch.setattr(agents, "run_tool_agent", lambda role, rt, task: "done")
    assert analyze.run_coder(scratch, "task") == ""  # type: ignore[arg-type]
    assert released == [tmp_path, tmp_path]  # stopped after a crash and after a normal end


@pytest.mark.e2e
def test_the_cost_cap_stops_the_coder_before_its_first_call(job: Path) -> None:
    before = (job / "calculation_metadata.json").read_bytes()
    result = run_followup(job, "What is the average revenue by channel?", settings=offline(), cap_usd=0.0)
    assert "max_cost_usd" in result.stopped and result.model_calls == 0 and result.new_ids == []
    assert (job / "calculation_metadata.json").read_bytes() == before


@pytest.mark.e2e
@pytest.mark.parametrize("status", ["running", "failed"])
def test_an_unfinished_job_is_refused(job: Path, status: str) -> None:
    state = json.loads((job / "job.json").read_text(encoding="utf-8"))
    (job / "job.json").write_text(json.dumps(state | {"status": status}), encoding="utf-8")
    with pytest.raises(BadInputError, match="cannot be analysed further"):
        run_followup(job, "What is the average revenue by channel?", settings=offline())


@pytest.mark.e2e
def test_a_job_locked_elsewhere_gets_nothing_merged(job: Path) -> None:
    before = (job / "calculation_metadata.json").read_bytes()
    with JobLock(job), pytest.raises(JobLocked):
        run_followup(job, "What is the average revenue by channel?", settings=offline())
    assert (job / "calculation_metadata.json").read_bytes() == before
