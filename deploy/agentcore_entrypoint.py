"""Amazon Bedrock AgentCore Runtime entrypoint: the managed path for the same job flow (documentation-grade).

Build the image from ``deploy/Dockerfile`` with ``EXTRA_PIP=bedrock-agentcore`` and
``CMD ["python", "deploy/agentcore_entrypoint.py"]`` (AgentCore calls ``POST /invocations`` on port 8080). Each
invocation is one step of a job, so a plan can wait for review without holding compute, and review is a call,
not a storage bucket polled with a 5-minute auto-approve:

- ``{"action": "start", "request": "...", "inputs": ["s3://bucket/sales.csv"], "columns": "s3://.../defs.json",
  "auto_approve": false, "max_revisions": 3}`` → ``{"job_id", "status", "plan", "revision"}``
- ``{"action": "review", "job_id": "...", "approve": true}`` or ``{..., "approve": false, "feedback": "..."}``
- ``{"action": "status", "job_id": "..."}``

Job folders are mirrored to ``INSIGHTLOOM_S3_PREFIX`` (``s3://bucket/prefix``) after every call and fetched back
when a later call lands on a fresh microVM. Models come from the usual config (Bedrock with the runtime's role).
"""

from __future__ import annotations

import logging
import os
import tempfile
from pathlib import Path
from typing import Any

import boto3
from bedrock_agentcore import BedrockAgentCoreApp

from insightloom.config import load_settings, resolve_auto_provider
from insightloom.errors import InsightloomError
from insightloom.fileio import iter_real_files
from insightloom.jobs import read_json
from insightloom.workflow import AutoApprove, Decision, JobOptions, create_job, drive, load_runtime, review, start

logger = logging.getLogger(__name__)
app = BedrockAgentCoreApp()
ARTIFACTS = Path(os.environ.get("INSIGHTLOOM_ARTIFACTS", "/tmp/insightloom-artifacts"))
S3_PREFIX = os.environ.get("INSIGHTLOOM_S3_PREFIX", "")


def _split(uri: str) -> tuple[str, str]:
    if not uri.startswith("s3://"):
        raise InsightloomError(f"{uri} is not an s3:// URI.", "pass inputs as s3://bucket/key.")
    bucket, _, key = uri[5:].partition("/")
    return bucket, key


def _fetch(uri: str, folder: Path) -> Path:
    bucket, key = _split(uri)
    dest = folder / Path(key).name
    boto3.client("s3").download_file(bucket, key, str(dest))
    return dest


def _push(job_dir: Path) -> None:
    """Mirror the job folder to S3 (the lock and temp files stay local)."""
    if not S3_PREFIX:
        return
    bucket, prefix = _split(S3_PREFIX.rstrip("/") + "/" + job_dir.name)
    s3 = boto3.client("s3")
    for path in iter_real_files(job_dir):  # never through a link a script planted (it could point at /etc)
        if path.name != "job.lock" and not path.name.startswith("."):
            s3.upload_file(str(path), bucket, f"{prefix}/{path.relative_to(job_dir).as_posix()}")


def _pull(job_id: str) -> Path:
    """The job folder, fetched from S3 when this microVM has not seen it."""
    job_dir = ARTIFACTS / job_id
    if (job_dir / "job.json").is_file() or not S3_PREFIX:
        return job_dir
    bucket, prefix = _split(S3_PREFIX.rstrip("/") + "/" + job_id)
    s3 = boto3.client("s3")
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix + "/"):
        for obj in page.get("Contents", []):
            dest = job_dir / obj["Key"][len(prefix) + 1 :]
            dest.parent.mkdir(parents=True, exist_ok=True)
            s3.download_file(bucket, obj["Key"], str(dest))
    return job_dir


def _state(job_dir: Path) -> dict[str, Any]:
    status = read_json(job_dir / "job.json")
    plan = job_dir / "plan.md"
    return {
        "job_id": status["id"],
        "status": status["status"],
        "stage": status.get("stage"),
        "revision": status.get("revision", 0),
        "plan": plan.read_text(encoding="utf-8") if plan.is_file() else None,
        "error": status.get("error"),
        "report": f"{S3_PREFIX.rstrip('/')}/{status['id']}/final_report.docx" if S3_PREFIX else None,
    }


def _start(payload: dict[str, Any]) -> dict[str, Any]:
    settings, _ = resolve_auto_provider(load_settings(None))
    settings.artifacts = ARTIFACTS
    if payload.get("max_revisions") is not None:
        settings.max_revisions = int(payload["max_revisions"])
    with tempfile.TemporaryDirectory(prefix="insightloom-inputs-") as tmp:
        inputs = [_fetch(uri, Path(tmp)) for uri in payload["inputs"]]
        columns = _fetch(payload["columns"], Path(tmp)) if payload.get("columns") else None
        rt = create_job(JobOptions(inputs=inputs, request=payload["request"], settings=settings, columns_file=columns))
        rt.job.update(auto_approve=bool(payload.get("auto_approve")))
        outcome = start(rt, inputs, columns)
    if outcome is None and payload.get("auto_approve"):
        drive(rt, None, AutoApprove())
    return _state(rt.root)


def _review(payload: dict[str, Any]) -> dict[str, Any]:
    rt = load_runtime(_pull(payload["job_id"]))
    if payload.get("cancel"):
        decision = Decision("cancel")
    elif payload.get("approve", True):
        decision = Decision("approve")
    else:
        decision = Decision("feedback", str(payload.get("feedback", "")))
    review(rt, decision)
    return _state(rt.root)


@app.entrypoint
def invoke(payload: dict[str, Any], context: Any = None) -> dict[str, Any]:
    """One step of a job; errors come back as ``{"error", "fix"}``, never as a traceback."""
    action = payload.get("action", "start")
    try:
        if action == "start":
            result = _start(payload)
        elif action == "review":
            result = _review(payload)
        elif action == "status":
            result = _state(_pull(payload["job_id"]))
        else:
            return {"error": f"Unknown action {action!r}.", "fix": "use start, review or status."}
    except InsightloomError as exc:
        return {"error": exc.message, "fix": exc.fix}
    except KeyError as exc:
        return {"error": f"Missing field {exc} in the payload.", "fix": "see deploy/agentcore_entrypoint.py."}
    _push(ARTIFACTS / result["job_id"])
    return result


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    app.run()
