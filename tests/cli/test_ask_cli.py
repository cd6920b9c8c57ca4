"""``insightloom ask``: cited answers on stdout, exit 3 on abstention, 2 on bad input, sessions and --jobs-from."""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from finished_jobs import ANSWERABLE, MOON_KR, UNANSWERABLE, make_queued_job, run_finished_job
from insightloom.ask.memory import open_memory
from insightloom.ask.prompt import abstention_sentence
from insightloom.cli import app
from insightloom.cli.asking import AnswerPrinter, citation_lines

CITE_LINE = "  [F"


@dataclass
class Jobs:
    root: Path  # the artifacts folder holding the three
    english: Path
    korean: Path
    queued: Path  # never run


@pytest.fixture(scope="module")
def jobs(tmp_path_factory: pytest.TempPathFactory) -> Jobs:
    root = tmp_path_factory.mktemp("ask-cli") / "artifacts"
    return Jobs(root, run_finished_job(root), run_finished_job(root, MOON_KR), make_queued_job(root))


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run from an empty folder: no ./insightloom.yaml, and memory under ./artifacts here."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def ask(*args: str) -> object:
    return CliRunner().invoke(app, ["ask", "--provider", "offline", *args])


def test_bad_input_exits_2_with_a_fix(in_tmp: Path) -> None:
    not_a_job = ask(str(in_tmp), ANSWERABLE)
    assert not_a_job.exit_code == 2 and "not a job folder" in not_a_job.stderr and "Fix:" in not_a_job.stderr
    no_question = ask(str(in_tmp), "  ")
    assert no_question.exit_code == 2 and "No question" in no_question.stderr
    no_job = ask(ANSWERABLE)
    assert no_job.exit_code == 2 and "--jobs-from" in no_job.stderr
    empty = ask("--jobs-from", str(in_tmp), ANSWERABLE)
    assert empty.exit_code == 2 and "no finished jobs" in empty.stderr
    bad_session = ask("--session", "../x", str(in_tmp), ANSWERABLE)
    assert bad_session.exit_code == 2 and "not a session name" in bad_session.stderr
    assert ask("--forget", "s1", str(in_tmp)).exit_code == 2  # --forget takes nothing else
    assert not (in_tmp / "artifacts").exists()  # nothing was asked, nothing remembered


@pytest.mark.e2e
def test_a_job_that_has_not_finished_exits_2_naming_resume(jobs: Jobs, in_tmp: Path) -> None:
    result = ask(str(jobs.queued), ANSWERABLE)
    assert result.exit_code == 2 and "queued" in result.stderr and "insightloom resume" in result.stderr


@pytest.mark.e2e
def test_an_answer_streams_to_stdout_with_its_sources_after(jobs: Jobs, in_tmp: Path) -> None:
    result = ask("-v", str(jobs.english), ANSWERABLE)
    assert result.exit_code == 0, result.stderr
    answer, _, sources = result.stdout.partition("\nSources:\n")
    cited = [line.split("]")[0].strip() + "]" for line in sources.splitlines() if line.startswith(CITE_LINE)]
    assert cited and all(ref in answer for ref in cited)  # every listed source is cited in the answer
    assert answer.count(answer.strip().splitlines()[0]) == 1  # streamed once, not printed again after
    # a statistics request the report holds: answered from the calculations' basis, what was computed on stderr
    assert "answered in" in result.stderr and "· basis ·" in result.stderr
    assert "computed: total of `Amount`" in result.stderr


@pytest.mark.e2e
def test_nothing_relevant_exits_3_with_the_abstention_sentence(jobs: Jobs, in_tmp: Path) -> None:
    result = ask(str(jobs.english), UNANSWERABLE)
    assert result.exit_code == 3, result.stderr
    assert result.stdout.strip() == abstention_sentence(UNANSWERABLE) and "Sources:" not in result.stdout
    assert "0 model calls" in result.stderr


@pytest.mark.e2e
def test_a_korean_question_gets_a_korean_answer_or_abstention(jobs: Jobs, in_tmp: Path) -> None:
    answered = ask(str(jobs.korean), "Amount 합계는?")
    assert answered.exit_code == 0, answered.stderr
    assert "합계" in answered.stdout and "\nSources:\n  [F" in answered.stdout
    nothing = "내일 파리 날씨는 어떤가요?"
    abstained = ask(str(jobs.korean), nothing)
    assert abstained.exit_code == 3 and abstained.stdout.strip() == abstention_sentence(nothing)


@pytest.mark.e2e
def test_jobs_from_asks_every_finished_job_and_skips_the_rest(jobs: Jobs, in_tmp: Path) -> None:
    before = {job: _ask_lines(job) for job in (jobs.english, jobs.korean)}
    result = ask("--jobs-from", str(jobs.root), ANSWERABLE)
    assert result.exit_code == 0, result.stderr
    assert all(_ask_lines(job) > count for job, count in before.items())  # each finished job was searched
    assert _ask_lines(jobs.queued) == 0


@pytest.mark.e2e
def test_a_session_remembers_and_forget_deletes_it(jobs: Jobs, in_tmp: Path) -> None:
    job = str(jobs.english)
    assert ask("--session", "q3", job, ANSWERABLE).exit_code == 0
    assert ask("--session", "q3", job, "And the average per row?").exit_code == 0
    memory = open_memory(in_tmp / "artifacts")
    assert [t.role for t in memory.turns("local", "q3")] == ["user", "assistant", "user", "assistant"]
    forgot = ask("--forget", "q3")
    assert forgot.exit_code == 0 and "forgot session q3 (4 turns)" in forgot.stderr
    assert "q3" not in open_memory(in_tmp / "artifacts").sessions("local")


def _ask_lines(job: Path) -> int:
    path = job / "ask_events.jsonl"
    return len(path.read_text(encoding="utf-8").splitlines()) if path.exists() else 0


def test_the_printer_writes_each_piece_at_once_and_the_answer_when_nothing_streamed() -> None:
    out = io.StringIO()
    printer = AnswerPrinter(out)
    printer("Revenue is 84,523 USD [F2]. ")
    assert out.getvalue() == "Revenue is 84,523 USD [F2]. "  # shown before the rest arrives
    printer("West leads [F3].")
    printer.finish("Revenue is 84,523 USD [F2]. West leads [F3].")
    assert out.getvalue() == "Revenue is 84,523 USD [F2]. West leads [F3].\n"
    quiet = io.StringIO()
    AnswerPrinter(quiet).finish("Nothing streamed.")
    assert quiet.getvalue() == "Nothing streamed.\n"


def test_citation_lines_name_the_job_only_when_there_are_several() -> None:
    one = {"id": "F2", "job_id": "j1", "source": "results", "section": "KPIs", "text": "Total is 5 " * 40}
    (line,) = citation_lines([one])
    assert line.startswith("[F2] results / KPIs: Total is 5") and line.endswith("…") and "j1" not in line
    two = citation_lines([one, {**one, "id": "F7", "job_id": "j2"}])
    assert two[0].startswith("[F2] j1 · results") and two[1].startswith("[F7] j2 · results")
