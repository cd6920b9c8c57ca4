from pathlib import Path

import pytest

from insightloom.config import Settings
from insightloom.jobs import JobFolder
from insightloom.runtime import JobRuntime
from insightloom.tools import make_bash_tool, make_file_read, make_update_plan

PLAN = """# Plan
## title
T
## steps
### 1. Coder: A
- [ ] Do one
- [ ] Do two
### 2. Validator: B
- [ ] Check
"""


@pytest.fixture
def rt(tmp_path: Path) -> JobRuntime:
    job = JobFolder.create(tmp_path / "artifacts")
    runtime = JobRuntime.create(job, Settings(provider="offline"), "req", "en")
    (job.root / "all_results.txt").write_text("## Section\n- plan_item: x\n", encoding="utf-8")
    (tmp_path / "secret.txt").write_text("top secret", encoding="utf-8")
    return runtime


def _call(tool, **kwargs):
    return tool._tool_func(**kwargs)


def test_file_read_reads_inside_and_refuses_outside(rt: JobRuntime) -> None:
    read = make_file_read(rt)
    assert "## Section" in _call(read, path="all_results.txt")
    assert "all_results.txt" in _call(read, path=".")
    for bad in ("../secret.txt", str(rt.root.parent.parent / "secret.txt"), "/etc/passwd"):
        result = _call(read, path=bad)
        assert isinstance(result, dict) and result["status"] == "error"
        assert "outside the job folder" in result["content"][0]["text"]
    missing = _call(read, path="nope.txt")
    assert missing["status"] == "error" and "does not exist" in missing["content"][0]["text"]


def test_file_read_pages_long_files(rt: JobRuntime) -> None:
    (rt.root / "big.txt").write_text("x" * 70_000, encoding="utf-8")
    first = _call(make_file_read(rt), path="big.txt")
    assert "call again with offset=60000" in first
    assert len(_call(make_file_read(rt), path="big.txt", offset=60_000)) == 10_000


def test_bash_tool_runs_allowed_commands_without_a_shell(rt: JobRuntime) -> None:
    bash = make_bash_tool(rt)
    assert "all_results.txt" in _call(bash, command="ls")
    assert _call(bash, command="rm -rf .")["status"] == "error"
    injected = _call(bash, command="ls ; rm all_results.txt")
    assert injected["status"] == "error"
    assert (rt.root / "all_results.txt").exists()
    outside = _call(bash, command="cat ../secret.txt")
    assert outside["status"] == "error" and "outside the job folder" in outside["content"][0]["text"]


def test_update_plan_ticks_items_with_evidence_and_reports_status(rt: JobRuntime) -> None:
    rt.state.set_plan(PLAN)
    (rt.root / "charts" / "one.png").write_bytes(b"\x89PNG")
    (rt.root / "charts" / "one.json").write_text("{}", encoding="utf-8")
    (rt.root / "all_results.txt").write_text(
        "## One\n- plan_item: Do one\n- charts: charts/one.png\n", encoding="utf-8"
    )
    update = make_update_plan(rt)
    text = _call(update, items=["Do one"])
    assert "- Coder: 1/2 (open)" in text and "- Validator: 0/1 (open)" in text
    assert "- [x] Do one" in (rt.root / "plan.md").read_text()
    assert "- [x] Do one" in rt.state.full_plan
    wrong = _call(update, items=["Do three"])
    assert wrong["status"] == "error" and "exact wording" in wrong["content"][0]["text"]
    assert "'Do two' (Coder)" in wrong["content"][0]["text"]  # the open items are listed
    again = _call(update, items=["Do one"])
    assert isinstance(again, str) and "already checked" in again


@pytest.mark.parametrize(
    "command",
    [
        "find . -maxdepth 0 -exec sh -c 'echo pwned > ../escaped' {} +",  # find is not allowed at all
        "sort -o/tmp/escaped all_results.txt",  # sort is not allowed (it writes with -o)
        "grep -f/etc/passwd all_results.txt",  # a path glued to an option
        "grep --file=/etc/passwd all_results.txt",
        "head /etc/passwd",
    ],
)
def test_bash_tool_refuses_escapes(rt: JobRuntime, command: str) -> None:
    result = _call(make_bash_tool(rt), command=command)
    assert isinstance(result, dict) and result["status"] == "error"
    assert not (rt.root.parent / "escaped").exists()


def test_bash_tool_runs_without_the_host_environment(rt: JobRuntime, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "do-not-leak")
    (rt.root / "probe.txt").write_text("x\n", encoding="utf-8")
    assert "exit status 0" in _call(make_bash_tool(rt), command="wc -l probe.txt", timeout=-5)
