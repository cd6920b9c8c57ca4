"""Follow-up questions over HTTP: ownership, asking across one's own jobs, SSE, sessions, CSRF, single-user mode."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient
from servicekit import ANA, ANA_TOKEN, BEN, RecordingQueue, make_app

from finished_jobs import ANSWERABLE, UNANSWERABLE, make_queued_job, offline, run_finished_job
from insightloom.ask import answer as answering
from insightloom.ask.answer import AskResult
from insightloom.ask.prompt import abstention_sentence
from insightloom.errors import ModelError
from insightloom.fileio import write_text_atomic
from insightloom.service import ServiceConfig, create_app
from insightloom.service.errors_http import internal_body
from insightloom.service.manager import OWNERS_DIR
from repo_paths import child_env

pytestmark = pytest.mark.e2e


@dataclass
class Jobs:
    root: Path
    ana: str  # finished, ana's
    ben: str  # finished, ben's
    queued: str  # ana's, never run
    cli: str  # finished, run from the CLI: no owner


def own(root: Path, job_dir: Path, owner: str) -> str:
    write_text_atomic(root / OWNERS_DIR / job_dir.name, owner + "\n")
    return job_dir.name


@pytest.fixture(scope="module")
def jobs(tmp_path_factory: pytest.TempPathFactory) -> Jobs:
    root = tmp_path_factory.mktemp("ask-service") / "artifacts"
    return Jobs(
        root=root,
        ana=own(root, run_finished_job(root), "ana"),
        ben=own(root, run_finished_job(root), "ben"),
        queued=own(root, make_queued_job(root), "ana"),
        cli=run_finished_job(root).name,
    )


@pytest.fixture
def client(jobs: Jobs) -> Iterator[TestClient]:
    with TestClient(make_app(jobs.root, RecordingQueue())) as test_client:
        yield test_client


def ask_events(jobs: Jobs, job_id: str) -> list[dict]:
    path = jobs.root / job_id / "ask_events.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []


def sse(text: str) -> list[tuple[str, dict]]:
    """The (event, data) pairs of an SSE body."""
    frames = []
    for block in text.strip().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines())
        frames.append((fields["event"], json.loads(fields["data"])))
    return frames


def test_the_owner_gets_a_cited_answer(client: TestClient, jobs: Jobs) -> None:
    answer = client.post(f"/jobs/{jobs.ana}/ask", headers=ANA, json={"question": ANSWERABLE})
    assert answer.status_code == 200, answer.text
    body = answer.json()
    # "What is the total Amount?" is a statistics request the report holds: answered from its basis, recorded
    assert body["abstained"] is False and body["jobs"] == [jobs.ana] and body["retrieval"] == "basis"
    assert body["request"]["steps"][0]["op"] == "sum" and body["computed"] == "total of `Amount`"
    assert body["citations"] and all(f"[{c['id']}]" in body["answer"] for c in body["citations"])
    assert {c["job_id"] for c in body["citations"]} == {jobs.ana}
    assert body["model_calls"] >= 1


def test_another_users_job_is_not_found_and_gets_no_question(client: TestClient, jobs: Jobs) -> None:
    before = len(ask_events(jobs, jobs.ana))
    refused = client.post(f"/jobs/{jobs.ana}/ask", headers=BEN, json={"question": ANSWERABLE})
    assert refused.status_code == 404 and refused.json() == {"detail": "No such job.", "fix": None}
    assert len(ask_events(jobs, jobs.ana)) == before  # nothing was asked of it
    named = client.post("/ask", headers=BEN, json={"question": ANSWERABLE, "jobs": [jobs.ana]})
    assert named.status_code == 404


def test_asking_across_jobs_sees_only_the_callers_own_finished_ones(client: TestClient, jobs: Jobs) -> None:
    before = {job: len(ask_events(jobs, job)) for job in (jobs.ben, jobs.cli, jobs.queued)}
    answer = client.post("/ask", headers=ANA, json={"question": ANSWERABLE})
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["jobs"] == [jobs.ana]  # not ben's, not the queued one, not the CLI's (no owner on a token server)
    assert body["citations"] and {c["job_id"] for c in body["citations"]} == {jobs.ana}
    assert {job: len(ask_events(jobs, job)) for job in before} == before


def test_a_job_that_has_not_finished_cannot_be_asked(client: TestClient, jobs: Jobs) -> None:
    refused = client.post(f"/jobs/{jobs.queued}/ask", headers=ANA, json={"question": ANSWERABLE})
    assert refused.status_code == 409
    assert "queued" in refused.json()["detail"] and refused.json()["fix"]


def test_nothing_relevant_abstains_without_a_model_call(client: TestClient, jobs: Jobs) -> None:
    body = client.post(f"/jobs/{jobs.ana}/ask", headers=ANA, json={"question": UNANSWERABLE}).json()
    assert (body["abstained"], body["model_calls"], body["citations"]) == (True, 0, [])
    assert body["answer"] == abstention_sentence(UNANSWERABLE)


def test_the_answer_streams_as_sse_then_comes_whole(client: TestClient, jobs: Jobs) -> None:
    headers = {**ANA, "Accept": "text/event-stream"}
    with client.stream("POST", f"/jobs/{jobs.ana}/ask", headers=headers, json={"question": ANSWERABLE}) as streamed:
        assert streamed.status_code == 200
        assert streamed.headers["content-type"].startswith("text/event-stream")
        frames = sse(streamed.read().decode("utf-8"))
    kinds = [kind for kind, _ in frames]
    assert kinds[-1] == "answer" and set(kinds[:-1]) == {"text"} and len(kinds) >= 2
    result = frames[-1][1]
    assert "".join(data["text"] for kind, data in frames[:-1]) == result["answer"]
    assert result["citations"] and result["abstained"] is False


def test_errors_before_a_stream_are_plain_http_answers(client: TestClient, jobs: Jobs) -> None:
    headers = {**BEN, "Accept": "text/event-stream"}
    refused = client.post(f"/jobs/{jobs.ana}/ask", headers=headers, json={"question": ANSWERABLE})
    assert refused.status_code == 404 and refused.headers["content-type"] == "application/json"


def test_analyze_and_the_session_reach_the_answerer_and_a_late_error_ends_the_stream(
    client: TestClient, jobs: Jobs, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[dict] = []

    def failing(job_dirs: list[Path], question: str, **kwargs: object) -> AskResult:
        seen.append({"jobs": [p.name for p in job_dirs], "question": question, **kwargs})
        kwargs["on_text"]("A first piece. ")  # type: ignore[operator]
        raise ModelError("the provider timed out at https://internal.example")

    monkeypatch.setattr(answering, "ask", failing)
    body = {"question": "  West in the last month?  ", "session": "s9", "analyze": True}
    headers = {**ANA, "Accept": "text/event-stream"}
    with client.stream("POST", f"/jobs/{jobs.ana}/ask", headers=headers, json=body) as streamed:
        frames = sse(streamed.read().decode("utf-8"))
    assert frames == [("text", {"text": "A first piece. "}), ("error", internal_body())]  # no internals leak
    (call,) = seen
    assert (call["jobs"], call["question"], call["user"], call["session"]) == (
        [jobs.ana],
        "West in the last month?",
        "ana",
        "s9",
    )
    assert call["analyze"] is True and call["memory"] is not None


def test_sessions_remember_per_user_and_can_be_forgotten(client: TestClient, jobs: Jobs) -> None:
    for question in (ANSWERABLE, "And the average per row?"):
        asked = client.post(f"/jobs/{jobs.ana}/ask", headers=ANA, json={"question": question, "session": "q3"})
        assert asked.status_code == 200, asked.text
    turns = client.get("/ask/sessions/q3", headers=ANA).json()["turns"]
    assert [t["role"] for t in turns] == ["user", "assistant", "user", "assistant"]
    assert turns[0]["text"] == ANSWERABLE and turns[2]["text"] == "And the average per row?"
    assert "q3" in client.get("/ask/sessions", headers=ANA).json()["sessions"]
    assert client.get("/ask/sessions", headers=BEN).json()["sessions"] == []
    assert client.get("/ask/sessions/q3", headers=BEN).json()["turns"] == []
    assert client.delete("/ask/sessions/q3", headers=BEN).status_code == 204  # ben's own (empty) q3
    assert len(client.get("/ask/sessions/q3", headers=ANA).json()["turns"]) == 4
    assert client.delete("/ask/sessions/q3", headers=ANA).status_code == 204
    assert client.get("/ask/sessions/q3", headers=ANA).json()["turns"] == []
    assert "q3" not in client.get("/ask/sessions", headers=ANA).json()["sessions"]


def test_bad_bodies_and_session_names_are_refused(client: TestClient, jobs: Jobs) -> None:
    path = f"/jobs/{jobs.ana}/ask"
    assert client.post(path, headers=ANA, json={"question": ""}).status_code == 422
    assert client.post(path, headers=ANA, json={"question": "x", "session": "../etc"}).status_code == 422
    assert client.post(path, headers=ANA, json={"question": "x", "unknown": 1}).status_code == 422
    bad_name = client.delete("/ask/sessions/..%2Fx", headers=ANA)
    assert bad_name.status_code in (400, 404)


def test_a_cookie_session_needs_the_csrf_token_to_ask(client: TestClient, jobs: Jobs) -> None:
    signed_in = client.post("/session", json={"token": ANA_TOKEN})
    csrf = signed_in.json()["csrf_token"]
    path = f"/jobs/{jobs.ana}/ask"
    assert client.post(path, json={"question": ANSWERABLE}).status_code == 403
    assert client.post(path, headers={"Origin": "http://evil.example", "X-CSRF-Token": csrf}).status_code == 403
    assert client.delete("/ask/sessions/q3").status_code == 403
    ok = client.post(path, headers={"X-CSRF-Token": csrf}, json={"question": ANSWERABLE})
    assert ok.status_code == 200 and ok.json()["citations"]
    client.cookies.clear()
    assert client.post(path, json={"question": ANSWERABLE}).status_code == 401


def test_without_a_token_cli_jobs_are_the_local_users(jobs: Jobs) -> None:
    app = create_app(offline(jobs.root), ServiceConfig(), queue=RecordingQueue(), cwd=jobs.root)
    with TestClient(app) as client:
        listed = {job["id"] for job in client.get("/jobs").json()["jobs"]}
        assert jobs.cli in listed and jobs.ana not in listed  # ana's and ben's jobs stay theirs
        assert client.get(f"/jobs/{jobs.cli}").json()["status"] == "completed"
        body = client.post("/ask", json={"question": ANSWERABLE}).json()
        assert body["jobs"] == [jobs.cli] and body["citations"]
    # With tokens configured the same job is nobody's.
    with TestClient(make_app(jobs.root, RecordingQueue())) as client:
        assert client.get(f"/jobs/{jobs.cli}", headers=ANA).status_code == 404


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_for_startup(server: subprocess.Popen[bytes]) -> None:
    """Read the server's log until uvicorn says it serves (a dead server ends the log and fails the test)."""
    assert server.stderr is not None
    seen = []
    for raw in iter(server.stderr.readline, b""):
        seen.append(raw.decode("utf-8", errors="replace"))
        if "Application startup complete" in seen[-1]:
            return
    raise AssertionError("insightloom serve exited:\n" + "".join(seen[-30:]))


def test_insightloom_serve_over_a_folder_of_cli_jobs_lists_and_opens_them(jobs: Jobs, tmp_path: Path) -> None:
    config = tmp_path / "insightloom.yaml"
    config.write_text(f"artifacts: {json.dumps(str(jobs.root))}\nprovider: offline\n", encoding="utf-8")
    port = _free_port()
    env = child_env("INSIGHTLOOM_")
    command = [sys.executable, "-m", "insightloom", "serve", "--port", str(port), "--config", str(config)]
    server = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_for_startup(server)
        listed = httpx.get(f"{url}/jobs", timeout=10).json()["jobs"]
        assert jobs.cli in {job["id"] for job in listed}
        opened = httpx.get(f"{url}/jobs/{jobs.cli}", timeout=10).json()
        assert opened["status"] == "completed" and opened["report"] == "final_report.docx"
        page = httpx.get(url, timeout=10).text
        assert 'id="ask-form"' in page
    finally:
        server.terminate()
        server.wait(timeout=30)
