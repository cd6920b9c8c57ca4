"""Small pieces of the service: safe file names, safe plan HTML, service env settings, session signatures."""

from __future__ import annotations

from pathlib import Path

import pytest

from insightloom.errors import ConfigError
from insightloom.service import ServiceConfig
from insightloom.service.auth import Authenticator
from insightloom.service.plan_html import plan_html
from insightloom.service.service_settings import is_loopback
from insightloom.service.uploads import safe_name


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("sales.csv", "sales.csv"),
        ("../../etc/passwd.csv", "passwd.csv"),
        ("C:\\Users\\ana\\Q1 Sales.XLSX", "Q1 Sales.xlsx"),
        ("매출 데이터.csv", "매출 데이터.csv"),
        (".hidden.csv", "hidden.csv"),
        ("a;rm -rf $HOME|x.csv", "a_rm -rf _HOME_x.csv"),
        ("", "upload.csv"),
        ("....", "upload.csv"),
        ("x" * 300 + ".csv", "x" * 116 + ".csv"),
    ],
)
def test_safe_names_stay_in_their_folder(raw: str, expected: str) -> None:
    assert safe_name(raw) == expected
    assert "/" not in safe_name(raw) and "\\" not in safe_name(raw) and not safe_name(raw).startswith(".")


def test_plan_html_escapes_what_a_model_could_inject() -> None:
    html = plan_html(
        "# Plan\n## steps\n- [ ] Run <script>alert(1)</script>\n- [x] Done\n\n"
        "[click](javascript:alert(1)) <img src=x onerror=alert(1)>\n\n### 1. Coder: 매출 분석\n"
    )
    assert "<script" not in html and "<img" not in html and 'href="javascript' not in html
    assert "&lt;script&gt;" in html and "<h3>1. Coder: 매출 분석</h3>" in html
    assert html.count('<input type="checkbox" disabled') == 2 and html.count("checked") == 1


def test_service_env_reads_tokens_files_and_limits(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens.yaml"
    tokens.write_text("tok-ana: ana\ntok-ben: ben\n", encoding="utf-8")
    config = ServiceConfig.from_env(
        {
            "INSIGHTLOOM_TOKENS_FILE": str(tokens),
            "INSIGHTLOOM_API_TOKEN": "tok-admin",
            "INSIGHTLOOM_MAX_UPLOAD_MB": "5",
            "INSIGHTLOOM_WORKERS": "8",
        }
    )
    assert config.tokens == {"tok-ana": "ana", "tok-ben": "ben", "tok-admin": "default"}
    assert (config.max_upload_bytes, config.workers, config.open) == (5 * 1024 * 1024, 8, False)
    assert ServiceConfig.from_env({}).open and ServiceConfig.from_env({}).max_upload_mb == 200


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"INSIGHTLOOM_MAX_UPLOAD_MB": "lots"}, "INSIGHTLOOM_MAX_UPLOAD_MB must be a number"),
        ({"INSIGHTLOOM_WORKERS": "0"}, "INSIGHTLOOM_WORKERS must be above 0"),
        ({"INSIGHTLOOM_TOKENS_FILE": "/nonexistent/tokens.yaml"}, "cannot be read"),
    ],
)
def test_bad_service_env_names_the_variable(env: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message) as caught:
        ServiceConfig.from_env(env)
    assert caught.value.exit_code == 2 and caught.value.fix


@pytest.mark.parametrize("text", ["- just a list\n", "tok: [ana]\n", "tok: ''\n", "{{{"])
def test_malformed_tokens_files_are_refused(tmp_path: Path, text: str) -> None:
    path = tmp_path / "tokens.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match="INSIGHTLOOM_TOKENS_FILE"):
        ServiceConfig.from_env({"INSIGHTLOOM_TOKENS_FILE": str(path)})


def test_sessions_expire_and_die_with_their_token() -> None:
    auth = Authenticator(ServiceConfig(tokens={"t1": "ana", "t2": "한국 사용자"}, session_hours=1))
    cookie = auth.make_session("한국 사용자", now=1000.0)
    assert auth.user_for_session(cookie, now=1000.0 + 3599) == "한국 사용자"
    assert auth.user_for_session(cookie, now=1000.0 + 3601) is None
    rotated = Authenticator(ServiceConfig(tokens={"t1": "ana", "t3": "한국 사용자"}, session_hours=1))
    assert rotated.user_for_session(cookie, now=1000.0) is None  # a changed token signs everyone out
    assert auth.user_for_token("t2") == "한국 사용자" and auth.user_for_token("t") is None


def test_loopback_hosts() -> None:
    assert all(is_loopback(h) for h in ("127.0.0.1", "localhost", "::1", "[::1]", "127.1.2.3"))
    assert not any(is_loopback(h) for h in ("0.0.0.0", "::", "10.0.0.5", "example.com"))


def test_the_hangul_web_font_is_open_and_has_no_tables_browsers_reject(tmp_path: Path) -> None:
    import io

    from fastapi.testclient import TestClient
    from fontTools.ttLib import TTFont
    from servicekit import RecordingQueue, make_app

    from insightloom.fonts import find_cjk_font

    with TestClient(make_app(tmp_path / "artifacts", RecordingQueue())) as client:
        response = client.get("/fonts/cjk")  # no token: the sign-in page itself may need it
    if find_cjk_font() is None:
        assert response.status_code == 404
        return
    assert response.status_code == 200 and response.headers["content-type"] == "font/woff"
    font = TTFont(io.BytesIO(response.content))
    assert not [tag for tag in font.reader.tables if tag.startswith("TSI")]
    assert ord("한") in font.getBestCmap()


def test_domain_errors_map_to_http_statuses_only_in_the_app_layer() -> None:
    from insightloom import errors
    from insightloom.service import app as app_module
    from insightloom.service import manager as manager_module

    assert app_module.http_status(errors.JobNotFound("No such job.")) == 404
    assert app_module.http_status(errors.JobConflict("not awaiting review")) == 409
    assert app_module.http_status(errors.QueueFull("full")) == 503
    assert app_module.http_status(errors.BadInputError("bad")) == 400
    assert app_module.http_status(errors.BudgetExceeded("ceiling")) == 500
    assert "fastapi" not in Path(manager_module.__file__).read_text(encoding="utf-8")
    assert issubclass(errors.QueueFull, errors.InsightloomError)
    assert issubclass(errors.ServerUnavailable, errors.ExecutionError)


@pytest.mark.parametrize(("text", "shown"), [("yes: ana\n", "True"), ("0123: ana\n", "83"), ("123: ana\n", "123")])
def test_tokens_that_yaml_would_turn_into_numbers_or_booleans_are_refused(tmp_path: Path, text: str, shown: str):
    path = tmp_path / "tokens.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=f"token {shown} is read as") as info:
        ServiceConfig.from_env({"INSIGHTLOOM_TOKENS_FILE": str(path)})
    assert "quotes" in info.value.fix
    path.write_text("'0123': ana\n", encoding="utf-8")
    assert ServiceConfig.from_env({"INSIGHTLOOM_TOKENS_FILE": str(path)}).tokens == {"0123": "ana"}


def test_a_signed_out_session_is_dead_even_where_a_copy_survives(tmp_path: Path) -> None:
    config = ServiceConfig(tokens={"t1": "ana"}, session_hours=1)
    revoked = tmp_path / ".sessions" / "revoked.json"
    auth = Authenticator(config, revoked_path=revoked)
    cookie, other = auth.make_session("ana", now=1000.0), auth.make_session("ana", now=1000.0)
    auth.revoke(cookie, now=1001.0)
    assert auth.user_for_session(cookie, now=1002.0) is None
    assert auth.user_for_session(other, now=1002.0) == "ana"  # only that session ends
    restarted = Authenticator(config, revoked_path=revoked)  # the revocation survives a server restart
    assert restarted.user_for_session(cookie, now=1002.0) is None
    assert restarted.csrf_token(other) == auth.csrf_token(other) != auth.csrf_token(cookie)
