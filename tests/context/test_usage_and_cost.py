"""Usage per model call, the estimated cost, the usage table, and real token counts for every provider."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import jsonschema
from typer.testing import CliRunner

from insightloom.agents import build_agent
from insightloom.cli import app
from insightloom.config import Settings
from insightloom.context.tokens import count_request
from insightloom.jobs import JobFolder
from insightloom.models.bedrock import make_bedrock
from insightloom.runtime import JobRuntime
from insightloom.telemetry.pricing import PriceTable
from insightloom.telemetry.usage import CallRecord, UsageLedger
from repo_paths import load_contract

RULES = "Rules of the agent that never change. " * 700  # over Haiku 4.5's 4,096-token minimum


def offline_runtime(tmp_path: Path, **settings: object) -> JobRuntime:
    config = Settings(provider="offline", **settings).with_provider("offline")
    return JobRuntime.create(JobFolder.create(tmp_path / "artifacts"), config, "req", "en")


def test_offline_calls_are_recorded_with_cache_reads_writes_and_cost(tmp_path: Path) -> None:
    rt = offline_runtime(tmp_path)
    for n in range(2):  # two invocations of the same role: the second reads the static prefix the first wrote
        agent = build_agent("coordinator", rt, f"{RULES}\n<!-- dynamic -->\nper-call part {n}\n")
        agent("hello")
    calls = rt.ledger.calls()
    assert [c.agent for c in calls] == ["coordinator", "coordinator"]
    first, second = calls
    assert first.cache_read_tokens == 0 and first.cache_write_tokens > 4096
    assert second.cache_read_tokens >= 4096 and second.model_id == "offline-coordinator"
    assert all(c.stop_reason == "end_turn" and c.latency_ms >= 0 and c.cost_usd > 0 for c in calls)
    prices = PriceTable(rt.settings.pricing)
    haiku, sonnet = prices.price("offline-coordinator"), prices.price("offline-coder")
    # Offline roles are priced like their default hosted model: Haiku for the Coordinator, Sonnet for the Coder.
    assert haiku is not None and haiku.input == 1.0 and haiku.cache_read == 0.1
    assert sonnet is not None and sonnet.input == 3.0 and sonnet.cache_read == 0.3
    assert second.cost_usd < first.cost_usd  # reads cost a tenth of plain input
    usage = json.loads(rt.job.path("usage.json").read_text(encoding="utf-8"))
    jsonschema.validate(usage, load_contract("usage"))
    assert usage["agents"]["coordinator"]["calls"] == 2 and len(usage["model_calls"]) == 2
    total = usage["total"]
    sent = total["input_tokens"] + total["cache_read_tokens"] + total["cache_write_tokens"]
    assert usage["cache_read_share"] == round(total["cache_read_tokens"] / sent, 4)


def test_uncached_agent_never_reads_the_cache(tmp_path: Path) -> None:
    rt = offline_runtime(tmp_path)
    rt.settings.agents["coordinator"].cache = False
    rt.models.clear()
    for _ in range(2):
        build_agent("coordinator", rt, f"{RULES}\n<!-- dynamic -->\nsame\n")("hello")
    assert all(c.cache_read_tokens == 0 and c.cache_write_tokens == 0 for c in rt.ledger.calls())


def test_price_lookup_exact_then_pattern_and_unknown_costs_nothing() -> None:
    table = PriceTable(Settings().pricing)
    assert table.price("us.anthropic.claude-haiku-4-5-20251001-v1:0").input == 1.0
    assert table.price("eu.anthropic.claude-sonnet-4-5-20250929-v1:0").output == 15.0
    assert table.price("someone-else/model") is None
    assert table.cost("someone-else/model", 1000, 1000, 0, 0) == 0.0
    assert table.cost("offline-coder", 1_000_000, 0, 1_000_000, 0) == 3.3


def test_usage_command_prints_the_table_with_cost(tmp_path: Path) -> None:
    job = JobFolder.create(tmp_path / "artifacts")
    ledger = UsageLedger(job.path("usage.json"))
    ledger.record(CallRecord("coder", "offline-coder", 1000, 200, 3000, 500, 12, "end_turn", 0.0123))
    ledger.record(CallRecord("tracker", "offline-tracker", 400, 50, 0, 0, 3, "tool_use", 0.0019))
    result = CliRunner().invoke(app, ["usage", str(job.root)], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert "cost (USD)" in result.output and "0.0142" in result.output and "0.0123" in result.output
    assert "cache-read share 61%" in result.output  # 3000 / (1400 + 3000 + 500)
    flat = " ".join(result.output.split())
    offline = "estimated on Claude Sonnet 4.5 and Claude Haiku 4.5 list prices (offline run: nothing was charged)"
    assert f"{offline}: $0.0142" in flat


def test_a_hosted_runs_cost_names_the_models_it_was_priced_on() -> None:
    from insightloom.telemetry.report import cost_line

    ledger = UsageLedger()
    for role, model, cost in (("coder", "eu.anthropic.claude-sonnet-4-5-20250929-v1:0", 0.5),
                              ("tracker", "eu.anthropic.claude-haiku-4-5-20251001-v1:0", 0.25)):  # fmt: skip
        ledger.record(CallRecord(role, model, 10, 2, 0, 0, 1, "end_turn", cost))
    line = cost_line(ledger.to_dict())
    assert line == ("estimated on eu.anthropic.claude-haiku-4-5-20251001-v1:0, "
                    "eu.anthropic.claude-sonnet-4-5-20250929-v1:0: $0.7500")  # fmt: skip
    assert "charge" not in line


def test_bedrock_counts_locally_with_the_claude_margin_not_chars_over_four() -> None:
    settings = Settings(provider="bedrock").with_provider("bedrock")
    model = make_bedrock(settings.spec("coder"), settings)
    messages = [{"role": "user", "content": [{"text": "매출은 12월에 증가했습니다. " * 50}]}]
    local = count_request(messages)
    assert asyncio.run(model.count_tokens(messages)) == -(-local * 12 // 10)  # ceil(local * 1.2)
    assert "use_native_token_count" not in model.config  # no credentials here: no CountTokens call
    assert model.context_window_limit == 200_000


def test_offline_caching_follows_each_roles_configured_model_minimum(tmp_path: Path) -> None:
    rt = offline_runtime(tmp_path)
    rules = "Rules of the agent that never change. " * 150  # about 1,100 tokens: Sonnet caches it, Haiku cannot
    assert 1024 < count_request([], None, rules) < 4096
    for role in ("tracker", "coder"):  # Haiku 4.5 by default, then Sonnet 4.5
        for n in range(2):
            build_agent(role, rt, f"{rules}\n<!-- dynamic -->\nper-call part {n}\n")("hello")
    tracker = [c for c in rt.ledger.calls() if c.agent == "tracker"]
    coder = [c for c in rt.ledger.calls() if c.agent == "coder"]
    assert all(c.cache_read_tokens == 0 and c.cache_write_tokens == 0 for c in tracker)
    assert coder[1].cache_read_tokens > 1024
    usage = json.loads(rt.job.path("usage.json").read_text(encoding="utf-8"))
    assert "4,096-token minimum of us.anthropic.claude-haiku-4-5" in usage["cache_notes"]["tracker"]
    assert "coder" not in usage["cache_notes"]
    jsonschema.validate(usage, load_contract("usage"))
