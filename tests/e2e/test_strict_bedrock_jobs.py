"""The strict Bedrock lane: the e2e jobs on the shared datasets and the demo, run by the real CLI with
``--provider bedrock`` against the strict endpoint (the offline brain behind it). No request may break a Bedrock
rule, every printed number is verified and cited, and the job's own usage is what Bedrock billed."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from jobcheck import check_job
from test_offline_jobs import REQUEST, assert_every_printed_number_verified, cli

from insightloom.testing.bedrock_endpoint import BedrockEndpoint, offline_router
from repo_paths import DATA

pytestmark = pytest.mark.e2e


@pytest.fixture
def endpoint() -> Iterator[BedrockEndpoint]:
    with BedrockEndpoint(offline_router()) as server:
        yield server


def bedrock_cli(endpoint: BedrockEndpoint, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    shared = {"AWS_CONFIG_FILE": str(cwd / "aws-config"), "AWS_SHARED_CREDENTIALS_FILE": str(cwd / "aws-creds")}
    return cli(*args, cwd=cwd, extra_env={**endpoint.env(), **shared})


def assert_billed_as_bedrock_reported(job_dir: Path, endpoint: BedrockEndpoint) -> None:
    """usage.json adds up the usage the endpoint reported: cache reads and writes included, call by call."""
    total = json.loads((job_dir / "usage.json").read_text(encoding="utf-8"))["total"]
    stats = endpoint.stats()
    assert stats["requests"] == stats["completed"]
    assert total["input_tokens"] == stats["input"]
    assert total["cache_read_tokens"] == stats["cache_read"] > 0
    assert total["cache_write_tokens"] == stats["cache_write"]
    assert total["output_tokens"] == stats["output"]


@pytest.mark.parametrize(
    "data",
    [
        "moon-market-en/moon-market-fresh-food-sales.csv",
        "moon-market-kr/moon-market-fresh-food-sales.csv",
        "yummy-food/yummy-food-market.csv",
        "training-assessment/training_assessment.xlsx",
        "demo",
    ],
)
def test_a_job_through_bedrock_model_breaks_no_rule_and_is_verified(
    data: str, endpoint: BedrockEndpoint, tmp_path: Path
) -> None:
    job_dir = tmp_path / "job"
    command = ["demo"] if data == "demo" else ["run", str(DATA / data), "-r", REQUEST, "--yes"]
    if data == "demo":  # the demo runs offline by design; its table runs here through Bedrock
        from insightloom.demo_data import generate_demo_csv, write_column_definitions

        csv = generate_demo_csv(tmp_path / "bakery_sales.csv")
        columns = write_column_definitions(tmp_path / "column_definitions.json")
        command = ["run", str(csv), "--columns", str(columns), "-r", REQUEST, "--yes"]
    done = bedrock_cli(endpoint, *command, "--provider", "bedrock", "--job-dir", str(job_dir), cwd=tmp_path)
    assert not endpoint.violations, [str(v) for v in endpoint.violations[:3]]
    assert done.returncode == 0, done.stderr[-3000:]
    check_job(job_dir, min_charts=2, min_markers=10)
    assert_every_printed_number_verified(job_dir)
    assert_billed_as_bedrock_reported(job_dir, endpoint)
    roles = {e.role for e in endpoint.exchanges}
    assert {"coordinator", "planner", "supervisor", "coder", "validator", "reporter"} <= roles


def test_a_throttled_job_waits_goes_on_and_says_so(endpoint: BedrockEndpoint, tmp_path: Path) -> None:
    endpoint.throttle(2)
    job_dir = tmp_path / "job"
    data = DATA / "moon-market-en" / "moon-market-fresh-food-sales.csv"
    done = bedrock_cli(
        endpoint, "run", str(data), "-r", REQUEST, "--yes", "--provider", "bedrock", "--job-dir", str(job_dir),
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert endpoint.stats()["throttled"] == 2
    events = [json.loads(line) for line in (job_dir / "events.jsonl").read_text(encoding="utf-8").splitlines()]
    notices = [e["data"] for e in events if e["kind"] == "progress" and e["data"].get("reason") == "throttled"]
    assert len(notices) == 2 and "retrying in up to" in notices[0]["message"]
    assert "throttled by Bedrock" in done.stderr


def test_follow_up_questions_run_through_bedrock_too(endpoint: BedrockEndpoint, tmp_path: Path) -> None:
    job_dir = tmp_path / "job"
    data = DATA / "moon-market-en" / "moon-market-fresh-food-sales.csv"
    args = ["run", str(data), "-r", REQUEST, "--yes", "--provider", "bedrock", "--job-dir", str(job_dir)]
    assert bedrock_cli(endpoint, *args, cwd=tmp_path).returncode == 0
    before = len(endpoint.exchanges)
    plain = bedrock_cli(
        endpoint, "ask", str(job_dir), "What is the total Amount?", "--provider", "bedrock", cwd=tmp_path
    )
    assert plain.returncode == 0, plain.stderr[-2000:]
    assert "answerer" in {e.role for e in endpoint.exchanges[before:]}
    question = "What is the median of `Qty`? Round to 1 decimal."
    analyzed = bedrock_cli(endpoint, "ask", str(job_dir), question, "--analyze", "--provider", "bedrock", cwd=tmp_path)
    assert analyzed.returncode == 0, analyzed.stderr[-2000:]
    assert "coder" in {e.role for e in endpoint.exchanges[before:]}
    assert not endpoint.violations, [str(v) for v in endpoint.violations[:3]]
