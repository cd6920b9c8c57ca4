"""bash_tool reads its output as a stream under a cap, and refuses options that read unchecked file lists or follow
every link (the bash_tool gaps of the isolation issue: 900 MB cat, grep -R into /etc, --files0-from)."""

from __future__ import annotations

import os
import tracemalloc
from pathlib import Path

import pytest

from insightloom.config import Settings
from insightloom.jobs import JobFolder
from insightloom.runtime import JobRuntime
from insightloom.tools import make_bash_tool
from insightloom.tools.bash import MAX_OUTPUT


@pytest.fixture
def rt(tmp_path: Path) -> JobRuntime:
    job = JobFolder.create(tmp_path / "artifacts")
    return JobRuntime.create(job, Settings(provider="offline"), "req", "en")


def _run(rt: JobRuntime, command: str) -> tuple[bool, str]:
    result = make_bash_tool(rt)._tool_func(command=command)
    if isinstance(result, dict):
        return False, result["content"][0]["text"]
    return True, result


def test_a_huge_output_is_cut_while_it_streams(rt: JobRuntime) -> None:
    line = b"0123456789" * 10 + b"\n"
    with (rt.root / "big.txt").open("wb") as handle:
        for _ in range(4):
            handle.write(line * 100_000)  # 40 MB in all
    tracemalloc.start()
    ok, text = _run(rt, "cat big.txt")
    _current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert ok and len(text) < MAX_OUTPUT + 200 and "bytes cut" in text
    assert text.rstrip().removesuffix("```").rstrip().endswith("0123456789")  # the tail is the real end of the file
    assert peak < 2_000_000  # the host never held the 40 MB


@pytest.mark.parametrize(
    ("command", "option"),
    [
        ("grep -R root .", "-R"),
        ("grep --dereference-recursive root .", "--dereference-recursive"),
        ("wc --files0-from=names.txt", "--files0-from"),
        ("file -f names.txt", "-f"),
        ("du -L .", "-L"),
        ("ls -lL .", "-L"),
    ],
)
def test_options_that_read_unchecked_paths_are_refused(rt: JobRuntime, command: str, option: str) -> None:
    (rt.root / "names.txt").write_bytes(b"/etc/shadow\0")
    ok, text = _run(rt, command)
    assert not ok and option in text and "Fix:" in text


def test_recursive_grep_does_not_follow_a_planted_folder_link(rt: JobRuntime, tmp_path: Path) -> None:
    secret = tmp_path / "elsewhere"
    secret.mkdir()
    (secret / "secret.txt").write_text("needle-outside\n", encoding="utf-8")
    os.symlink(secret, rt.root / "linked")
    (rt.root / "inside.txt").write_text("needle-inside\n", encoding="utf-8")
    _ok, text = _run(rt, "grep -r needle .")
    assert "needle-inside" in text and "needle-outside" not in text
    blocked_ok, blocked = _run(rt, "cat linked/secret.txt")
    assert not blocked_ok and "outside the job folder" in blocked


def test_a_command_that_outlives_its_timeout_is_killed(rt: JobRuntime) -> None:
    os.mkfifo(rt.root / "never")
    result = make_bash_tool(rt)._tool_func(command="cat never", timeout=1)
    assert isinstance(result, dict) and "timeout" in result["content"][0]["text"]
