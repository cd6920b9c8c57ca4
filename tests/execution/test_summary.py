"""Limits, output capping and the summary the model sees."""

from __future__ import annotations

from insightloom.execution import Limits, RunResult
from insightloom.execution.limits import head_tail, human_mb


def test_limits_defaults_match_the_contract() -> None:
    limits = Limits()
    assert (limits.timeout_s, limits.memory_mb, limits.cpu_s, limits.output_chars, limits.file_size_mb) == (
        120,
        4096,
        300,
        1500,
        512,
    )


def test_head_tail_keeps_both_ends_and_counts_the_cut() -> None:
    text = "START" + "x" * 10_000 + "END"
    shown, cut = head_tail(text, 100)
    assert shown.startswith("START") and shown.endswith("END")
    assert cut == len(text) - 100
    assert f"{cut:,} chars cut" in shown


def test_head_tail_leaves_short_text_alone() -> None:
    assert head_tail("short", 100) == ("short", 0)


def test_human_units() -> None:
    assert human_mb(2048) == "2 GiB"
    assert human_mb(512) == "512 MiB"


def _result(**kw: object) -> RunResult:
    base = {"exit_code": 0, "status": "ok", "duration_s": 0.5}
    base.update(kw)
    return RunResult(**base)  # type: ignore[arg-type]


def test_summary_has_status_duration_lines_and_files() -> None:
    text = _result(stdout="answer 42\n", new_files=["charts/a.png", "out.csv"]).summary(
        lines_written=12, script="/jobs/j1/code/step_1.py"
    )
    assert "code/step_1.py (12 lines)" in text
    assert "Status: ok (exit code 0) in 0.50 s" in text
    assert "answer 42" in text
    assert "charts/a.png, out.csv" in text


def test_summary_is_capped_head_and_tail() -> None:
    out = "HEAD-MARK" + "y" * 50_000 + "TAIL-MARK"
    text = _result(stdout=out, stderr="warn" * 5_000).summary(lines_written=1, output_chars=1500)
    assert "HEAD-MARK" in text and "TAIL-MARK" in text
    assert len(text) < 1500 + 600  # budget plus fixed wording
    assert "chars not shown" in text


def test_failed_run_gives_the_traceback_tail_most_room() -> None:
    err = "Traceback (most recent call last):\n" + "  frame\n" * 2_000 + "KeyError: 'Amount'\n"
    text = _result(exit_code=1, status="error", stdout="o" * 5_000, stderr=err).summary(lines_written=3)
    assert "KeyError: 'Amount'" in text


def test_summary_never_echoes_script_text() -> None:
    script_text = "import pandas as pd\nSECRET_MARKER = 1\nprint('hi')\n"
    text = _result(stdout="hi\n").summary(lines_written=3, script=script_text)
    assert "SECRET_MARKER" not in text and "import pandas" not in text


def test_killed_reason_is_reported_in_words() -> None:
    text = _result(exit_code=-9, status="timeout", killed_reason="killed after 30 s timeout").summary(lines_written=2)
    assert "killed after 30 s timeout" in text
