"""ask(): abstains without a model call, validates and retries answers, streams, remembers and records telemetry."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from test_fragments import make_job

from insightloom.ask.answer import ask
from insightloom.ask.events import read_ask_events
from insightloom.ask.memory import SQLiteMemory
from insightloom.config import Settings
from insightloom.contracts import load_schema
from insightloom.errors import BadInputError
from insightloom.models.offline import OfflineModel
from insightloom.models.offline.conversation import Conversation, Reply


class ScriptedModel(OfflineModel):
    """An LLM-like test double: answers with canned texts in order and keeps every request it was sent."""

    def __init__(self, *replies: str) -> None:
        super().__init__(role="answerer", brain=self._reply)
        self.replies = list(replies)
        self.seen: list[Conversation] = []

    def _reply(self, conv: Conversation) -> Reply:
        self.seen.append(conv)
        return Reply(text=self.replies.pop(0))


@pytest.fixture
def job(tmp_path: Path) -> Path:
    return make_job(tmp_path / "job")


@pytest.fixture
def offline(tmp_path: Path) -> Settings:
    settings = Settings().with_provider("offline")
    settings.artifacts = tmp_path
    return settings


def test_nothing_relevant_means_zero_model_calls(job: Path, offline: Settings) -> None:
    model = ScriptedModel("This must never be said [F1].")
    result = ask([job], "What is the weather on Mars tomorrow?", settings=offline, model=model)
    assert model.seen == [] and result.model_calls == 0
    assert result.abstained and result.reason == "no_relevant_fragments"
    assert result.answer.startswith("The analysis results do not hold") and "weather, mars" in result.answer
    assert [e["kind"] for e in read_ask_events(job)] == ["retrieved", "reranked", "abstained"]


def test_a_korean_question_abstains_in_korean(job: Path, offline: Settings) -> None:
    result = ask([job], "화성의 날씨는 어떤가요?", settings=offline, model=ScriptedModel())
    assert result.abstained and result.answer.startswith("분석 결과에는") and result.model_calls == 0


def test_a_wrong_number_then_a_right_one_on_retry_is_accepted(job: Path, offline: Settings) -> None:
    model = ScriptedModel("Total revenue was 1,300,000 KRW [F1].", "Total revenue was {{calc:total_revenue}}.")
    result = ask([job], "What was total revenue?", settings=offline, model=model)
    assert not result.abstained and result.model_calls == 2
    assert result.answer.startswith("Total revenue was 1,234,567 KRW [F")
    assert result.citations and "total_revenue" in result.citations[0]["calc_ids"]
    retry = model.seen[1].messages[-1]["content"][0]["text"]
    assert "1,300,000" in retry and "<problems>" in retry
    answered = [e for e in read_ask_events(job) if e["kind"] == "answered"]
    assert answered and answered[0]["data"]["retried"] is True


def test_an_answer_wrong_twice_ends_in_the_abstention(job: Path, offline: Settings) -> None:
    model = ScriptedModel("Total revenue was 1,300,000 KRW [F1].", "See [F99] for 1,234,567 KRW.")
    result = ask([job], "What was total revenue?", settings=offline, model=model)
    assert result.abstained and result.reason == "invalid_answer" and result.model_calls == 2
    assert "1,300,000" not in result.answer and result.citations == []
    assert any("[F99]" in problem for problem in result.problems)


def test_the_offline_answerer_cites_and_copies_numbers_exactly(job: Path, offline: Settings) -> None:
    pieces: list[str] = []
    result = ask([job], "What was total revenue?", settings=offline, on_text=pieces.append)
    assert not result.abstained and result.model_calls == 1 and result.retrieval == "bm25"
    assert "".join(pieces).strip() == result.answer
    assert "1,234,567 KRW [F" in result.answer and "[calc:" not in result.answer
    assert {c["job_id"] for c in result.citations} == {"20250101T000000Z-aaaaaaaaaaaa"}
    usage = json.loads((job / "usage.json").read_text(encoding="utf-8"))["ask"]
    assert usage["calls"] == 1 and usage["questions"] == 1 and usage["retrieval"] == "bm25"
    assert usage["input_tokens"] > 0 and usage["cost_usd"] > 0
    schema = load_schema("ask_event")
    for event in read_ask_events(job):
        jsonschema.validate(event, schema)


def test_a_session_remembers_the_turn_pair(job: Path, offline: Settings, tmp_path: Path) -> None:
    memory = SQLiteMemory(tmp_path / "memory.sqlite3")
    first = ask([job], "What was total revenue?", settings=offline, session="s1", memory=memory)
    turns = memory.turns("local", "s1")
    assert [(t.role, t.text) for t in turns] == [("user", "What was total revenue?"), ("assistant", first.answer)]
    model = ScriptedModel("Total revenue was {{calc:total_revenue}}.")
    ask([job], "And the total revenue again?", settings=offline, session="s1", memory=memory, model=model)
    assert "# Conversation so far" in model.seen[0].user_text and first.answer in model.seen[0].user_text


def test_only_finished_jobs_with_a_report_are_asked(job: Path, offline: Settings) -> None:
    status = json.loads((job / "job.json").read_text(encoding="utf-8"))
    (job / "job.json").write_text(json.dumps({**status, "status": "running"}), encoding="utf-8")
    with pytest.raises(BadInputError):
        ask([job], "What was total revenue?", settings=offline)


def _with_dates(job: Path) -> Path:
    path = job / "cache" / "profile.json"
    profile = json.loads(path.read_text(encoding="utf-8"))
    date = {"name": "Date", "role": "date", "dtype": "datetime", "min": "2024-01-01", "max": "2024-12-31"}
    profile["tables"][0]["columns"].append(date)
    path.write_text(json.dumps(profile), encoding="utf-8")
    return job


def test_a_year_the_data_do_not_cover_abstains_naming_it_without_a_model_call(job: Path, offline: Settings) -> None:
    model = ScriptedModel("Total revenue was 1,234,567 KRW [F1].")  # a verified figure, but of another period
    result = ask([_with_dates(job)], "What was the total Amount in 2019?", settings=offline, model=model)
    assert result.abstained and result.reason == "period_not_covered" and model.seen == []
    assert "2019 (the data cover 2024-01-01 to 2024-12-31)" in result.answer
    schema = load_schema("ask_event")
    for event in read_ask_events(job):
        jsonschema.validate(event, schema)
    assert [e["data"]["reason"] for e in read_ask_events(job) if e["kind"] == "abstained"] == ["period_not_covered"]


def test_a_year_inside_the_data_is_no_reason_to_abstain(job: Path, offline: Settings) -> None:
    result = ask([_with_dates(job)], "What was the total Amount in 2024?", settings=offline, model=ScriptedModel())
    assert result.reason != "period_not_covered"
