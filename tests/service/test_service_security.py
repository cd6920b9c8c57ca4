"""Security of the API: tokens, ownership, artifact paths, upload limits and types, sessions, binding."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from servicekit import ANA, BEN, MOON, REQUEST, RecordingQueue, job_json, make_app, upload
from typer.testing import CliRunner

from insightloom.cli import app as cli
from insightloom.config import Settings
from insightloom.errors import BadInputError
from insightloom.service import ServiceConfig, run_server
from insightloom.service.auth import COOKIE
from insightloom.service.service_settings import check_binding


@pytest.fixture
def queue() -> RecordingQueue:
    return RecordingQueue()


@pytest.fixture
def client(tmp_path: Path, queue: RecordingQueue) -> Iterator[TestClient]:
    with TestClient(make_app(tmp_path / "artifacts", queue)) as test_client:
        yield test_client


def submit(client: TestClient, headers: dict[str, str] = ANA, files: list | None = None, **data: str):
    return client.post("/jobs", headers=headers, data={"request": REQUEST, **data}, files=files or [upload()])


def test_health_and_page_are_open_but_every_api_call_needs_a_token(client: TestClient) -> None:
    assert client.get("/healthz").json()["status"] == "ok"
    page = client.get("/")
    assert page.status_code == 200 and "Sign in" in page.text
    assert "default-src 'self'" in page.headers["content-security-policy"]
    assert client.get("/static/app.js").status_code == 200
    for method, path in (
        ("GET", "/jobs"),
        ("POST", "/jobs"),
        ("GET", "/session"),
        ("GET", "/jobs/20260101T000000Z-0123456789ab"),
        ("GET", "/jobs/20260101T000000Z-0123456789ab/events"),
        ("GET", "/jobs/20260101T000000Z-0123456789ab/artifacts/job.json"),
        ("POST", "/jobs/20260101T000000Z-0123456789ab/review"),
        ("POST", "/jobs/20260101T000000Z-0123456789ab/cancel"),
    ):
        response = client.request(method, path)
        assert response.status_code == 401, (method, path)
        assert response.headers["www-authenticate"] == "Bearer"
    wrong = client.get("/jobs", headers={"Authorization": "Bearer not-a-real-token"})
    assert wrong.status_code == 401 and "Traceback" not in wrong.text


def test_unknown_jobs_and_other_users_jobs_are_not_found(client: TestClient, tmp_path: Path) -> None:
    created = submit(client)
    assert created.status_code == 201
    job_id = created.json()["id"]
    assert client.get(f"/jobs/{job_id}", headers=ANA).status_code == 200
    assert [j["id"] for j in client.get("/jobs", headers=ANA).json()["jobs"]] == [job_id]
    assert client.get("/jobs", headers=BEN).json() == {"jobs": []}
    for method, path in (
        ("GET", f"/jobs/{job_id}"),
        ("GET", f"/jobs/{job_id}/events"),
        ("GET", f"/jobs/{job_id}/artifacts/job.json"),
        ("POST", f"/jobs/{job_id}/cancel"),
    ):
        assert client.request(method, path, headers=BEN).status_code == 404, path
    assert client.post(f"/jobs/{job_id}/review", headers=BEN, json={"approve": True}).status_code == 404
    for unknown in ("20260101T000000Z-0123456789ab", "not-a-job", "%2e%2e", "20260101T000000Z-0123456789AB"):
        response = client.get(f"/jobs/{unknown}", headers=ANA)
        assert response.status_code == 404, unknown
        assert response.json() == {"detail": "No such job.", "fix": None}
    assert not job_json(tmp_path / "artifacts" / job_id).get("cancel")  # ben's cancel reached nothing


def test_artifact_paths_never_leave_the_job_folder(client: TestClient, tmp_path: Path) -> None:
    job_id = submit(client).json()["id"]
    root = tmp_path / "artifacts" / job_id
    (tmp_path / "secret.txt").write_text("top secret", encoding="utf-8")
    (tmp_path / "artifacts" / "other.txt").write_text("not yours", encoding="utf-8")
    (root / "charts" / "link.txt").symlink_to(tmp_path / "secret.txt")
    (root / "job.lock").write_text("{}", encoding="utf-8")
    good = client.get(f"/jobs/{job_id}/artifacts/job.json", headers=ANA)
    assert good.status_code == 200 and good.json()["id"] == job_id
    assert good.headers["content-disposition"].startswith("attachment")
    assert good.headers["content-security-policy"] == "sandbox"
    for path in (
        "..%2F..%2Fsecret.txt",
        "..%2Fother.txt",
        "%2e%2e/%2e%2e/secret.txt",
        "data/..%2F..%2F..%2Fsecret.txt",
        "%2Fetc%2Fpasswd",
        "charts/link.txt",
        "job.lock",
        "data",
        "",
    ):
        response = client.get(f"/jobs/{job_id}/artifacts/{path}", headers=ANA)
        assert response.status_code == 404, path
        assert "secret" not in response.text and "not yours" not in response.text


def test_an_oversized_upload_is_413_and_leaves_no_job(tmp_path: Path) -> None:
    root = tmp_path / "artifacts"
    with TestClient(make_app(root, RecordingQueue(), max_upload_mb=0.01)) as client:
        big = tmp_path / "big.csv"
        big.write_text("a,b\n" + "1,2\n" * 10_000, encoding="utf-8")  # 40 KB against a 10 KB limit
        response = submit(client, files=[upload(big)])
        assert response.status_code == 413 and "0.01 MB" in response.json()["detail"]
        huge = tmp_path / "huge.csv"
        huge.write_bytes(b"a,b\n" + b"1,2\n" * 300_000)  # past the body limit itself (limit + form slack)
        assert submit(client, files=[upload(huge)]).status_code == 413

        def chunks() -> Iterator[bytes]:  # no Content-Length: counted while it streams in
            yield b'--xyz\r\nContent-Disposition: form-data; name="files"; filename="a.csv"\r\n\r\n'
            for _ in range(40):
                yield b"1,2\n" * 10_000
            yield b"\r\n--xyz--\r\n"

        streamed = client.post(
            "/jobs", headers={**ANA, "Content-Type": "multipart/form-data; boundary=xyz"}, content=chunks()
        )
        assert streamed.status_code == 413
    assert not [p for p in root.iterdir() if not p.name.startswith(".")]


@pytest.mark.parametrize(
    ("name", "status", "expected"),
    [
        ("notes.txt", 400, "unsupported file type '.txt'"),
        ("sales.xls", 400, "Save the sheet as .xlsx"),
        ("program.exe", 400, "unsupported file type '.exe'"),
        ("noextension", 400, "unsupported file type '(none)'"),
    ],
)
def test_unsupported_file_types_are_400_naming_the_file(client: TestClient, name: str, status: int, expected: str):
    response = submit(client, files=[upload(MOON), upload(MOON, name)])
    assert response.status_code == status
    assert name in response.json()["detail"] and expected in response.json()["detail"]


def test_malformed_submissions_are_4xx_with_reasons(client: TestClient, queue: RecordingQueue) -> None:
    columns = MOON.parent / "column_definitions.json"
    two_json = submit(client, files=[upload(MOON), upload(columns), upload(columns, "more.json")])
    assert two_json.status_code == 400 and "only one column definitions" in two_json.json()["detail"]
    only_json = submit(client, files=[upload(columns)])
    assert only_json.status_code == 400 and "No data file" in only_json.json()["detail"]
    assert submit(client, request="   ").status_code == 400
    assert "Unknown provider" in submit(client, provider="gpt-9").json()["detail"]
    assert submit(client, max_revisions="99").status_code == 400
    assert submit(client, max_revisions="many").status_code == 422
    missing = client.post("/jobs", headers=ANA, files=[upload()])
    assert missing.status_code == 422 and missing.json()["detail"][0]["loc"][-1] == "request"
    assert client.post("/jobs", headers=ANA, data={"request": REQUEST}).status_code == 422
    assert queue.items == []  # nothing malformed was queued


def test_uploads_get_safe_names_inside_the_job(client: TestClient, queue: RecordingQueue, tmp_path: Path) -> None:
    columns = MOON.parent / "column_definitions.json"
    files = [upload(MOON, "../../evil name$.CSV"), upload(MOON, "..\\..\\evil name$.csv"), upload(columns, "c.json")]
    response = submit(client, files=files, provider="offline", auto_approve="true", max_revisions="1")
    assert response.status_code == 201 and response.headers["location"] == f"/jobs/{response.json()['id']}"
    job_dir = tmp_path / "artifacts" / response.json()["id"]
    assert sorted(p.name for p in (job_dir / "data").iterdir()) == [
        "column_definitions.json",
        "evil name.csv",
        "evil name_2.csv",
    ]
    assert not list(tmp_path.glob("*.csv")) and not list((tmp_path / "artifacts").glob("*.csv"))
    (item,) = queue.items
    assert (item.action, item.inputs) == ("start", ("evil name.csv", "evil name_2.csv"))
    status = job_json(job_dir)
    assert (status["owner"], status["auto_approve"], status["status"]) == ("ana", True, "queued")
    run_info = (job_dir / "run_info.json").read_text(encoding="utf-8")
    assert '"max_revisions": 1' in run_info and '"provider": "offline"' in run_info


def test_browser_session_cookie_is_httponly_strict_and_signed(client: TestClient) -> None:
    assert client.post("/session", json={"token": "wrong"}).status_code == 401
    signed_in = client.post("/session", json={"token": ANA["Authorization"].split()[1]})
    assert signed_in.json()["user"] == "ana" and signed_in.json()["csrf_token"]
    cookie = signed_in.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/" in cookie
    assert client.get("/jobs").status_code == 200  # the cookie alone is enough (EventSource, downloads)
    assert client.get("/session").json()["user"] == "ana"
    value = client.cookies[COOKIE]
    user, expiry, nonce, signature = value.split(".")
    client.cookies.clear()
    forgeries = (f"{user}.{int(expiry) + 999}.{nonce}.{signature}", f"YmVu.{expiry}.{nonce}.{signature}", "ana")
    for forged in (*forgeries, value + "x"):
        assert client.get("/jobs", headers={"Cookie": f"{COOKIE}={forged}"}).status_code == 401, forged
    assert client.get("/jobs", headers={"Cookie": f"{COOKIE}={value}"}).status_code == 200
    signed_out = client.delete("/session")
    assert signed_out.status_code == 204 and f'{COOKIE}=""' in signed_out.headers["set-cookie"]


def test_open_server_needs_no_token_and_stays_on_loopback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from insightloom.service import create_app

    settings = Settings(artifacts=tmp_path / "artifacts").with_provider("offline")
    with TestClient(create_app(settings, ServiceConfig(), queue=RecordingQueue())) as client:
        assert client.get("/session").json()["user"] == "local"
        assert client.get("/jobs").status_code == 200
    with pytest.raises(BadInputError, match="without an API token"):
        run_server("0.0.0.0", 8000, settings)
    check_binding("0.0.0.0", ServiceConfig(tokens={"t": "u"}))  # a token makes any address acceptable
    check_binding("::1", ServiceConfig())
    monkeypatch.setenv("INSIGHTLOOM_ARTIFACTS", str(tmp_path / "artifacts"))
    result = CliRunner().invoke(cli, ["serve", "--host", "0.0.0.0", "--port", "8000"])
    assert result.exit_code == 2 and "INSIGHTLOOM_API_TOKEN" in result.stderr
    assert "Traceback" not in result.stderr and os.environ.get("INSIGHTLOOM_API_TOKEN") is None


def test_other_requests_cannot_send_big_bodies(client: TestClient) -> None:
    job = "20260101T000000Z-0123456789ab"
    big = {"approve": False, "feedback": "x" * (2 * 1024 * 1024)}
    assert client.post(f"/jobs/{job}/review", headers=ANA, json=big).status_code == 413
    assert client.post("/session", json={"token": "t" * (2 * 1024 * 1024)}).status_code == 413


def test_a_script_rewriting_job_json_cannot_give_the_job_away(client: TestClient, tmp_path: Path) -> None:
    job_id = submit(client).json()["id"]
    status_path = tmp_path / "artifacts" / job_id / "job.json"
    forged = job_json(tmp_path / "artifacts" / job_id) | {"owner": "ben"}
    status_path.write_text(json.dumps(forged), encoding="utf-8")  # what a hostile script could do
    assert client.get(f"/jobs/{job_id}", headers=BEN).status_code == 404
    assert client.get("/jobs", headers=BEN).json() == {"jobs": []}
    assert client.get(f"/jobs/{job_id}", headers=ANA).status_code == 200


def _signed_in(client: TestClient) -> str:
    signed_in = client.post("/session", json={"token": ANA["Authorization"].split()[1]})
    assert signed_in.status_code == 200
    return signed_in.json()["csrf_token"]


def test_cookie_requests_that_change_state_need_the_same_origin_and_the_csrf_token(client: TestClient) -> None:
    csrf = _signed_in(client)
    files = [upload()]
    own = str(client.base_url)
    attacks = (
        {"Origin": "http://127.0.0.1:9999"},  # another port on the same host is another origin
        {"Origin": "http://evil.example", "X-CSRF-Token": csrf},
        {},  # same-site but no token
        {"X-CSRF-Token": csrf + "x"},
    )
    for headers in attacks:
        refused = client.post("/jobs", headers=headers, data={"request": REQUEST}, files=files)
        assert refused.status_code == 403, headers
    ok = client.post("/jobs", headers={"Origin": own, "X-CSRF-Token": csrf}, data={"request": REQUEST}, files=files)
    assert ok.status_code == 201
    job_id = ok.json()["id"]
    assert client.post(f"/jobs/{job_id}/cancel", headers={"Origin": "http://127.0.0.1:1"}).status_code == 403
    assert client.get("/session").json()["csrf_token"] == csrf  # reads need no token; the page fetches it here
    # Bearer clients send no cookie and need no CSRF token, but a browser's cross-origin Origin is still refused.
    client.cookies.clear()
    assert submit(client).status_code == 201
    assert submit(client, headers={**ANA, "Origin": "http://127.0.0.1:9999"}).status_code == 403


def test_signing_out_revokes_the_cookie_on_the_server(client: TestClient) -> None:
    csrf = _signed_in(client)
    value = client.cookies[COOKIE]
    assert client.delete("/session", headers={"X-CSRF-Token": csrf}).status_code == 204
    client.cookies.clear()
    assert client.get("/jobs", headers={"Cookie": f"{COOKIE}={value}"}).status_code == 401  # a kept copy is dead


def test_nul_bytes_and_planted_links_in_artifact_paths_are_not_found(client: TestClient, tmp_path: Path) -> None:
    job_id = submit(client).json()["id"]
    root = tmp_path / "artifacts" / job_id
    (tmp_path / "outside.txt").write_text("secret", encoding="utf-8")
    os.symlink(tmp_path / "outside.txt", root / "charts" / "link.png")
    os.symlink(tmp_path, root / "charts" / "folder")
    for path in ("data%00.csv", "charts/link.png", "charts/folder/outside.txt", "request.json%00"):
        response = client.get(f"/jobs/{job_id}/artifacts/{path}", headers=ANA)
        assert response.status_code == 404, path
    listed = client.get(f"/jobs/{job_id}", headers=ANA).json()["artifacts"]
    assert not any("link.png" in name or "outside" in name for name in listed)
