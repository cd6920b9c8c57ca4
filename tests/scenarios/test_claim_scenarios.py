"""Issue 20: a Reporter that writes a claim word as free text ("Revenue is rising") is refused with the fix, then
completes by citing the tracked claim as ``{{claim:ID}}``; the job ends ``completed`` with no finding E."""

from __future__ import annotations

import json
import re

from harness import assert_outcome, body_text
from test_scenarios import assert_refused

from insightloom.claims.wording import claim_text
from insightloom.models.offline.conversation import Conversation, Reply

_CLAIM_RE = re.compile(r"\{\{claim:(claim_trend[^}]*)\}\}")


def _after_first_section(markdown: str, sentence: str) -> str:
    """``markdown`` with ``sentence`` as a paragraph of its own under the first ``## `` heading."""
    return re.sub(r"(?m)^(## .*)$", lambda m: f"{m.group(1)}\n\n{sentence}\n", markdown, count=1)


def free_text_then_claim():
    """First render: the brain's report with "Revenue is rising." as free text. Once refused, the same report with
    that sentence stating the tracked trend claim instead. The model sees its own calls, as a hosted model does."""
    state = {"markdown": "", "claim": ""}

    def deviate(n: int, conv: Conversation, brain: Reply) -> Reply | None:
        if not state["markdown"]:
            calls = [c for c in brain.tool_calls if c.name == "render_report" and c.input.get("markdown")]
            if not calls:
                return None
            state["markdown"] = calls[0].input["markdown"]
            found = _CLAIM_RE.search(state["markdown"])
            assert found, "the offline report cites no trend claim"
            state["claim"] = found.group(1)
            return Reply.call("render_report", markdown=_after_first_section(state["markdown"], "Revenue is rising."))
        last = conv.exchanges()[-1] if conv.exchanges() else None
        if last is None or last.name != "render_report" or last.status != "error":
            return None
        sentence = f"Revenue over the period: {{{{claim:{state['claim']}}}}}."
        return Reply.call("render_report", markdown=_after_first_section(state["markdown"], sentence))

    deviate.hide = False  # type: ignore[attr-defined]
    deviate.state = state  # type: ignore[attr-defined]
    return deviate


def test_a_reporter_that_writes_a_claim_as_free_text_is_refused_then_cites_the_claim(scenario) -> None:
    reporter = free_text_then_claim()
    run = scenario({"reporter": reporter})
    refusal = assert_refused(run, "reporter", "render_report", "unsupported claim 'is rising'")
    assert "state it with {{claim:ID}}" in refusal and "or drop the word" in refusal
    assert "claim_trend" in refusal  # the tracked trend claim is named in the fix
    assert_outcome(run, "completed")  # every number cited and verified, no finding E
    audit = json.loads((run.job_dir / "audit_findings.json").read_text(encoding="utf-8"))
    assert audit["verdict"] == "pass" and audit["stats"]["type_e"] == 0
    text, _, _ = body_text(run.job_dir / "final_report.docx")
    assert "Revenue is rising" not in text
    meta = json.loads((run.job_dir / "calculation_metadata.json").read_text(encoding="utf-8"))["calculations"]
    claim = next(c for c in meta if c["id"] == reporter.state["claim"])
    citations = json.loads((run.job_dir / "citations.json").read_text(encoding="utf-8"))["citations"]
    entry = next(c for c in citations if c["calculation_id"] == claim["id"])
    assert entry["verification_status"] == "verified"
    assert f"Revenue over the period: {claim_text(claim, 'en')} {entry['citation_id']}." in text
