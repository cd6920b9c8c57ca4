"""Statistics answers: an answer is checked against the question's request, and an LLM-like answerer that answers
another question (a different operation, other decimals, a value for a name) is refused naming the mismatch."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from insightloom.ask.answer import ask
from insightloom.config import Settings
from insightloom.models.offline import OfflineModel
from insightloom.models.offline.conversation import Conversation, Reply
from insightloom.statistics.rounding import format_rounded

pytestmark = pytest.mark.e2e

_COMPUTED = re.compile(r"<computed[^>]*>(.*?)</computed>", re.S)
_REF = re.compile(r"\{\{calc:([^}]+)\}\}")


class ScriptedAnswerer(OfflineModel):
    """An LLM-like answerer: each reply is made by a function of the conversation; it keeps what it was sent."""

    def __init__(self, *replies: Callable[[Conversation], str]) -> None:
        super().__init__(role="answerer", brain=self._reply)
        self.replies = list(replies)
        self.seen: list[Conversation] = []

    def _reply(self, conv: Conversation) -> Reply:
        self.seen.append(conv)
        return Reply(text=self.replies.pop(0)(conv))


def _computed(conv: Conversation) -> str:
    found = _COMPUTED.search(conv.user_text)
    assert found, "the prompt has no computed block"
    return " ".join(found.group(1).split())


def _retry_text(model: ScriptedAnswerer) -> str:
    return str(model.seen[-1].messages[-1]["content"][0]["text"])


@pytest.fixture(scope="module")
def moon_job(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Settings]:
    from finished_jobs import offline, run_finished_job

    root = tmp_path_factory.mktemp("stat-answers")
    return run_finished_job(root), offline(root)


def _values(job: Path) -> dict[str, object]:
    data = json.loads((job / "calculation_metadata.json").read_text(encoding="utf-8"))
    return {c["id"]: c["value"] for c in data["calculations"]}


def test_a_median_for_a_mean_and_std_question_is_refused_then_corrected(moon_job: tuple[Path, Settings]) -> None:
    job, settings = moon_job
    model = ScriptedAnswerer(lambda conv: "The data hold {{calc:rows}} rows.", _computed)
    question = "Calculate the mean and standard deviation of the Amount column. Round to 2 decimal places."
    result = ask([job], question, settings=settings, analyze=True, model=model)
    assert result.model_calls == 2 and not result.abstained, result.answer
    assert any("{{calc:rows}}" in p and "does not ask" in p and "mean of `Amount`" in p for p in result.problems)
    assert "does not ask" in _retry_text(model)
    assert result.request and [s["op"] for s in result.request["steps"]] == ["mean", "std"]
    assert result.computed.startswith("mean of `Amount`; standard deviation (sample, ddof 1) of `Amount`")
    values = _values(job)
    ids = [i for i in _REF.findall(_computed(model.seen[0]))]
    assert all(format_rounded(float(values[i]), 2) in result.answer for i in ids)  # type: ignore[arg-type]
    assert result.citations


def test_two_decimals_where_four_were_asked_is_refused(moon_job: tuple[Path, Settings]) -> None:
    job, settings = moon_job

    def two_decimals(conv: Conversation) -> str:
        calc_id = _REF.findall(_computed(conv))[0]
        return f"The mean of Amount is {format_rounded(float(_values(job)[calc_id]), 2)}."  # type: ignore[arg-type]

    model = ScriptedAnswerer(two_decimals, two_decimals)
    result = ask([job], "What is the mean of Amount? Round to 4 decimals.", settings=settings, analyze=True,
                 model=model)  # fmt: skip
    assert result.abstained and result.reason == "invalid_answer" and result.model_calls == 2
    assert any("has 2 decimals, but the question asks 4" in p for p in result.problems), result.problems


def test_a_value_for_a_which_group_question_is_refused(moon_job: tuple[Path, Settings]) -> None:
    job, settings = moon_job

    def value_only(conv: Conversation) -> str:
        value_ref = next(r for r in _REF.findall(_computed(conv)) if r.endswith("_value"))
        return "The highest total is {{calc:" + value_ref + "}}."

    model = ScriptedAnswerer(value_only, _computed)
    result = ask([job], "Which Category has the highest total Amount?", settings=settings, analyze=True,
                 model=model)  # fmt: skip
    assert any("asks which `Category`: name the group" in p for p in result.problems), result.problems
    assert not result.abstained and result.request and result.request["form"] == "name"
    group_id = next(i for i in _REF.findall(_computed(model.seen[0])) if i.endswith("_group"))
    assert str(_values(job)[group_id]) in result.answer


def test_an_unsupported_operation_abstains_naming_it_without_a_model_call(moon_job: tuple[Path, Settings]) -> None:
    job, settings = moon_job
    model = ScriptedAnswerer()
    result = ask([job], "What is the geometric mean of Amount?", settings=settings, analyze=True, model=model)
    assert result.abstained and result.model_calls == 0 and "geometric mean" in result.answer
    missing = ask([job], "What is the mean of the Temperature column?", settings=settings, analyze=True, model=model)
    assert missing.abstained and "Temperature" in missing.answer and "mean" not in missing.answer.split("'")[1]


def test_a_statistic_without_sql_is_re_derived_from_the_real_views_and_a_changed_value_refused(
    moon_job: tuple[Path, Settings],
) -> None:
    from insightloom.ask.analyze import recompute
    from insightloom.validation.jobfiles import load_calculations

    job, settings = moon_job
    result = ask([job], "Is Amount normally distributed (Shapiro-Wilk, α = 0.05)? Give the p-value to 4 decimals.",
                 settings=settings, analyze=True)  # fmt: skip
    assert not result.abstained and result.answer.split(":")[0] in ("Yes", "No"), result.answer
    calcs = [c for c in load_calculations(job) if c["id"] in result.new_calc_ids]
    p_value = next(c for c in calcs if c["id"].endswith("_p_value"))
    assert p_value["check"] is None and p_value["recipe"]["op"] == "statistic"
    assert p_value["basis"]["op"] == "normality" and p_value["basis"]["columns"] == ["Amount"]
    verified, refused = recompute(job, [p_value, {**p_value, "id": "tampered", "value": p_value["value"] + 0.2}])
    assert p_value["id"] in verified and verified[p_value["id"]]["verification_method"] == "recipe"
    assert "tampered" in refused and "disagrees" in refused["tampered"]


def test_a_model_fills_the_request_through_its_tool_and_is_held_to_it(moon_job: tuple[Path, Settings]) -> None:
    from insightloom.ask.request_tool import TOOL_NAME

    job, settings = moon_job
    calcs = json.loads((job / "calculation_metadata.json").read_text(encoding="utf-8"))["calculations"]
    mean = next(c for c in calcs if (c.get("basis") or {}).get("op") == "mean" and not c["basis"]["filters"])
    column = mean["basis"]["columns"][0]
    bad = {"steps": [{"op": "average", "columns": [column]}, {"op": "mean", "columns": ["Nope"]}]}
    good = {"steps": [{"op": "mean", "columns": [column]}], "decimals": 3}

    def call(request: dict) -> Callable[[Conversation], Reply]:
        return lambda conv: Reply.call(TOOL_NAME, request=request)

    def restate(conv: Conversation) -> Reply:
        result = conv.messages[-1]["content"][0]["toolResult"]["content"][0]["text"]
        return Reply(text=" ".join(_COMPUTED.search(result).group(1).split()))  # type: ignore[union-attr]

    class ToolAnswerer(OfflineModel):
        def __init__(self) -> None:
            super().__init__(role="answerer", brain=self._reply)
            self.steps = [call(bad), call(good), restate]
            self.results: list[str] = []

        def _reply(self, conv: Conversation) -> Reply:
            last = conv.messages[-1]["content"][0]
            if "toolResult" in last:
                self.results.append(str(last["toolResult"]["content"][0]["text"]))
            return self.steps.pop(0)(conv)

    model = ToolAnswerer()
    question = f"Where does the typical {column} sit, to three places?"  # no catalog word: the parser reads none
    result = ask([job], question, settings=settings, model=model, threshold=0.0)
    assert "no catalog operation 'average'" in model.results[0] and "no column 'Nope'" in model.results[0]
    assert not result.abstained, result.answer
    assert format_rounded(float(mean["value"]), 3) in result.answer and result.citations
    assert result.request and result.request["steps"][0]["op"] == "mean"


def test_plain_questions_are_answered_from_the_figure_they_ask_for(moon_job: tuple[Path, Settings]) -> None:
    job, settings = moon_job
    values = _values(job)
    rows = ask([job], "How many rows are there?", settings=settings)
    assert not rows.abstained and [c["calc_ids"] for c in rows.citations] == [["rows"]], rows.answer
    assert f"{values['rows']:,}" in rows.answer
    female = ask([job], "What is the Amount for Gender F?", settings=settings)
    assert not female.abstained and female.computed == "total of `Amount` where `Gender` = 'F'", female.answer
    cited = {i for c in female.citations for i in c["calc_ids"]}
    assert cited and all(values[i] != values["amount_total"] for i in cited), female.answer  # not the overall total


def test_a_whole_median_prints_no_decimals(moon_job: tuple[Path, Settings]) -> None:
    import pandas as pd

    from finished_jobs import MOON_EN

    job, settings = moon_job
    frame = pd.read_csv(MOON_EN)
    median = float(frame.loc[frame["Gender"] == "F", "Qty"].median())
    assert median.is_integer()
    result = ask([job], "What is the median Qty for Gender F?", settings=settings, analyze=True)
    assert not result.abstained and re.search(rf"(?<![\d.]){int(median)}(?![\d.])", result.answer), result.answer
    assert f"{int(median)}.00" not in result.answer


def test_a_korean_question_no_figure_answers_abstains_in_korean_naming_the_statistic(
    moon_job: tuple[Path, Settings],
) -> None:
    job, settings = moon_job
    result = ask([job], "Category별 Qty 중앙값이 가장 큰 Category는?", settings=settings)
    assert result.abstained and result.reason == "not_computed" and result.model_calls == 0
    assert result.answer.startswith("이 질문에는 답할 수 없습니다") and "`Qty`" in result.answer
    assert "no verified value" not in result.answer and "--analyze" in result.answer


@pytest.fixture(scope="module")
def described_job(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Settings]:
    """A moon-market job with its column definitions, so column fragments can be retrieved."""
    from finished_jobs import MOON_EN, REQUEST, offline
    from insightloom.workflow import AutoApprove, JobOptions, run_job

    root = tmp_path_factory.mktemp("described")
    settings = offline(root)
    options = JobOptions(inputs=[MOON_EN], request=REQUEST, settings=settings, cwd=root,
                         columns_file=MOON_EN.parent / "column_definitions.json")  # fmt: skip
    outcome = run_job(options, AutoApprove())
    assert outcome.status == "completed", outcome.error
    return outcome.job_dir, settings


def test_a_column_description_never_answers_a_question_that_asks_for_a_figure(
    described_job: tuple[Path, Settings],
) -> None:
    job, settings = described_job

    def cite_a_column(conv: Conversation) -> str:  # an LLM-like answerer that restates a column's description
        found = re.search(r'<fragment id="(F\d+)" source="columns"', conv.user_text)
        assert found, "no column fragment was retrieved"
        return f"The Category column holds the product category [{found.group(1)}]."

    figure = ask([job], "How many product categories such as Soup/Side/Main are there?", settings=settings,
                 model=ScriptedAnswerer(cite_a_column))  # fmt: skip
    assert figure.abstained and figure.reason == "no_figure" and not figure.citations, figure.answer
    meaning = ask([job], "What does the Category column hold?", settings=settings,
                  model=ScriptedAnswerer(cite_a_column))  # fmt: skip
    assert not meaning.abstained and {c["source"] for c in meaning.citations} == {"columns"}, meaning.answer


def test_a_profile_line_of_another_column_never_answers_a_superlative(moon_job: tuple[Path, Settings]) -> None:
    job, settings = moon_job

    def cite_the_profile(conv: Conversation) -> str:  # the profile lists other columns' leading values, not these
        found = re.search(r'<fragment id="(F\d+)" source="profile"', conv.user_text)
        assert found, "no profile fragment was retrieved"
        return f"The ship-city column is a text column [{found.group(1)}]."

    question = "Which ship-city column is the oddest?"
    oddest = ask([job], question, settings=settings, model=ScriptedAnswerer(cite_the_profile))
    assert oddest.abstained and oddest.reason == "no_figure", oddest.answer
