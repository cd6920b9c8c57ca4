"""A recorded job replays: the same requests, the same answers, the same citations; a changed prompt line is caught
at the first request it alters, named with its agent and number."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from insightloom.cli import app
from insightloom.config import Settings
from insightloom.models.model_io import MODEL_IO, REDACTED, normalise, read_model_io, redact
from insightloom.prompting import builtin_prompts_dir
from insightloom.workflow import AutoApprove, JobOptions, run_job
from small_sales import write_small_sales_csv

pytestmark = pytest.mark.e2e
REQUEST = "Analyze this sales data and write a report"


def _run(root: Path, data: Path, name: str, settings: Settings) -> tuple[str, str | None, Path]:
    opts = JobOptions(inputs=[data], request=REQUEST, settings=settings, job_dir=root / name, cwd=root)
    outcome = run_job(opts, AutoApprove())
    return outcome.status, outcome.error, root / name


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("record")
    data = write_small_sales_csv(root / "sales.csv", rows=90, seed=3)
    status, error, job = _run(root, data, "recorded", Settings(record_model_io=True).with_provider("offline"))
    assert status == "completed", error
    return data, job


def _replay(recorded: tuple[Path, Path], name: str, **settings: object) -> tuple[str, str | None, Path]:
    data, job = recorded
    config = Settings(replay_from=str(job / "transcripts" / MODEL_IO), record_model_io=True, **settings)  # type: ignore[arg-type]
    return _run(job.parent, data, name, config.with_provider("replay"))


def _normalised(job: Path) -> list[str]:
    calls = read_model_io(job / "transcripts" / MODEL_IO)
    return [normalise(json.dumps({k: v for k, v in c.items() if k != "job_root"}, sort_keys=True), c["job_root"])
            for c in calls]  # fmt: skip


def test_a_recorded_job_replays_to_the_same_requests_answers_and_citations(recorded: tuple[Path, Path]) -> None:
    status, error, replayed = _replay(recorded, "replayed")
    assert status == "completed", error
    original = _normalised(recorded[1])
    assert len(original) > 20 and _normalised(replayed) == original
    roles = {json.loads(line)["role"] for line in (recorded[1] / "transcripts" / MODEL_IO).read_text().splitlines()}
    assert {"planner", "supervisor", "coder", "validator", "reporter"} <= roles

    def citations(job: Path) -> str:  # identical but for the stamp of when it was written
        return re.sub(r'"generated_at": "[^"]*"', "", (job / "citations.json").read_text(encoding="utf-8"))

    assert citations(replayed) == citations(recorded[1])


def test_a_changed_prompt_line_fails_the_replay_naming_the_request(recorded: tuple[Path, Path], tmp_path: Path) -> None:
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    planner = (builtin_prompts_dir() / "planner.md").read_text(encoding="utf-8")
    changed = planner.replace("so it must be clear, specific and short", "so it must be clear and short", 1)
    assert changed != planner
    (prompts / "planner.md").write_text(changed, encoding="utf-8")
    status, error, _ = _replay(recorded, "changed", prompts_dir=prompts)
    assert status == "failed"
    assert error and "request 1 of the planner agent differs from the recording" in error
    assert "-" in error and "clear and short" in error  # the diff shows the line as it is now


def test_credentials_are_redacted_and_token_counts_kept() -> None:
    sent = {"headers": {"Authorization": "AWS4-HMAC-SHA256 Credential=x", "X-Amz-Security-Token": "t"},
            "api_key": "sk-1", "text": "the key AKIAABCDEFGHIJKLMNOP leaked",
            "usage": {"inputTokens": 12, "outputTokens": 3, "cacheReadInputTokens": 9}}  # fmt: skip
    clean = redact(sent)
    assert clean["headers"] == {"Authorization": REDACTED, "X-Amz-Security-Token": REDACTED}
    assert clean["api_key"] == REDACTED and "AKIA" not in clean["text"]
    assert clean["usage"] == {"inputTokens": 12, "outputTokens": 3, "cacheReadInputTokens": 9}


def test_replay_refuses_another_provider_and_a_missing_recording(tmp_path: Path) -> None:
    (tmp_path / "sales.csv").write_text("a,b\n1,2\n", encoding="utf-8")
    args = ["run", str(tmp_path / "sales.csv"), "-r", "x", "--yes", "--replay-from", str(tmp_path / "none.jsonl")]
    mixed = CliRunner().invoke(app, [*args, "--provider", "bedrock"])
    assert mixed.exit_code == 2 and "--replay-from" in mixed.stderr
    missing = CliRunner().invoke(app, [*args, "--job-dir", str(tmp_path / "job")])
    assert missing.exit_code == 2 and "Cannot read the recording" in missing.stderr and "--record" in missing.stderr
