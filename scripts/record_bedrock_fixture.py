"""Record the replay fixture: one job through Strands' BedrockModel against the strict endpoint, with ``--record``.

The job is the tests' small sales table (``tests/small_sales.py``, 90 rows, seed 3) with the scenarios' request,
run with ``provider: bedrock`` and the default model ids; the endpoint's brain is the offline model per role. It
writes ``tests/fixtures/recorded/bedrock_small_sales/model_io.jsonl`` (credentials redacted, as ``--record`` writes it)
and the job's ``citations.json`` beside it. ``tests/models/test_recorded_bedrock_fixture.py`` replays it.

Re-run it when a deliberate change alters what a job sends (a prompt, a tool, the Coder's scripts); the replay
test names the first request that differs.

Usage: python scripts/record_bedrock_fixture.py
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO / "tests" / "fixtures" / "recorded" / "bedrock_small_sales"
REQUEST = "Analyze this sales data and write a report"


def main() -> int:
    sys.path.insert(0, str(REPO / "tests"))
    from insightloom.config import Settings
    from insightloom.models.model_io import MODEL_IO
    from insightloom.testing.bedrock_endpoint import BedrockEndpoint, offline_router
    from insightloom.workflow import AutoApprove, JobOptions, run_job
    from small_sales import write_small_sales_csv

    with tempfile.TemporaryDirectory(prefix="insightloom-fixture-") as tmp:
        root = Path(tmp)
        endpoint = BedrockEndpoint(offline_router())
        with endpoint, endpoint.environment(os.environ):  # type: ignore[arg-type]
            os.environ["AWS_CONFIG_FILE"] = str(root / "aws-config")
            os.environ["AWS_SHARED_CREDENTIALS_FILE"] = str(root / "aws-creds")
            data = write_small_sales_csv(root / "sales.csv", rows=90, seed=3)
            settings = Settings(record_model_io=True).with_provider("bedrock")
            job = root / "job"
            outcome = run_job(JobOptions([data], REQUEST, settings, job_dir=job, cwd=root), AutoApprove())
        if outcome.status != "completed" or endpoint.violations:
            print(f"not recorded: {outcome.status} {outcome.error or ''} {endpoint.violations[:3]}", file=sys.stderr)
            return 1
        FIXTURE.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(job / "transcripts" / MODEL_IO, FIXTURE / MODEL_IO)
        shutil.copyfile(job / "citations.json", FIXTURE / "citations.json")
    size = (FIXTURE / MODEL_IO).stat().st_size
    print(f"recorded {endpoint.stats()['requests']} calls ({size:,} bytes) to {FIXTURE.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
