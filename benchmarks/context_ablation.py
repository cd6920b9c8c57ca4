"""Benchmark: the same offline demo job under two context policies, and what each sends to the model.

- engineered: insightloom's policy (per-agent context, budgeted clues, reduced tool history, prompt caching);
- naive: one agent holding every tool, with every instruction, the whole plan, the full history and every tool
  output verbatim, and no caching. It walks the same steps (analysis scripts, validation, render, audit) in one
  conversation, with the same plan, through the same agent factory.

Token figures are counted by the product's tokenizer with no safety margin; "sent" is input + cache read + cache
write. The last line is exactly
``input_ratio=<naive/engineered> peak_tokens=<n> supervisor_growth=<last/second> cache_read_share=<f>
coder_system_tokens=<n>`` so scripts can parse it; the exit code is 1 when a target is missed.

Usage: python benchmarks/context_ablation.py [--keep DIR]
"""

from __future__ import annotations

import argparse
import importlib.util
import logging
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

_SRC = Path(__file__).resolve().parents[1] / "src"
if importlib.util.find_spec("insightloom") is None:  # run from a checkout without installing
    sys.path.insert(0, str(_SRC))

from insightloom.models.offline.naive import naive  # noqa: E402

from insightloom.agents import build_agent  # noqa: E402
from insightloom.agents.tool_agents import tools_for  # noqa: E402
from insightloom.config import TOOL_AGENT_ROLES, Settings  # noqa: E402
from insightloom.context.tokens import count_tokens  # noqa: E402
from insightloom.demo_data import generate_demo_csv, write_column_definitions  # noqa: E402
from insightloom.models.offline import OfflineModel  # noqa: E402
from insightloom.plan import parse_plan  # noqa: E402
from insightloom.prompting import render_prompt, split_static  # noqa: E402
from insightloom.runtime import JobRuntime  # noqa: E402
from insightloom.skills import discover_skills  # noqa: E402
from insightloom.telemetry.usage import CallRecord  # noqa: E402
from insightloom.workflow import AutoApprove, JobOptions, create_job, load_runtime, run_job, stages  # noqa: E402

logger = logging.getLogger(__name__)
REQUEST = "Analyze this sales data and write a DOCX report"
TARGETS = {
    "input_ratio": 3.0,
    "peak_tokens": 20_000,
    "supervisor_growth": 1.5,
    "cache_read_share": 0.60,
    "coder_system_tokens": 4_000,
}


@dataclass
class PolicyRun:
    """One policy's model calls."""

    name: str
    calls: list[CallRecord]
    status: str

    @property
    def sent(self) -> int:
        return sum(c.sent_tokens for c in self.calls)

    @property
    def peak(self) -> int:
        return max(c.sent_tokens for c in self.calls)

    @property
    def cache_read_share(self) -> float:
        return sum(c.cache_read_tokens for c in self.calls) / self.sent if self.sent else 0.0

    @property
    def cost(self) -> float:
        return sum(c.cost_usd for c in self.calls)


def _options(root: Path, name: str) -> JobOptions:
    settings = Settings(provider="offline").with_provider("offline")
    return JobOptions(
        inputs=[root / "demo.csv"],
        request=REQUEST,
        settings=settings,
        job_dir=root / name,
        columns_file=root / "column_definitions.json",
        cwd=root,
    )


def run_engineered(root: Path) -> tuple[PolicyRun, str]:
    """The demo job as the product runs it; returns its calls and its approved plan (unticked)."""
    outcome = run_job(_options(root, "engineered"), AutoApprove())
    rt = load_runtime(outcome.job_dir)
    plan = rt.job.path("plan.md").read_text(encoding="utf-8").replace("- [x] ", "- [ ] ")
    return PolicyRun("engineered", rt.ledger.calls(), outcome.status), plan


def naive_prompt(rt: JobRuntime) -> str:
    """Every tool agent's instructions and the Supervisor's, each with the whole plan, in one system prompt."""
    plan = parse_plan(rt.state.full_plan)
    values = {
        "full_plan": rt.state.full_plan,
        "plan_section": rt.state.full_plan,
        "other_sections": f"Title: {plan.title}\nRequest: {REQUEST}",
        "clues": "",
        "data_profile": rt.profile.to_prompt() if rt.profile else "",
        "skills_catalog": rt.extras["skills"].prompt_block() if rt.extras.get("skills") else "",
        "language": rt.language,
        "max_reporter_retries": rt.settings.max_reporter_retries,
    }
    parts = []
    for role in ("supervisor", *TOOL_AGENT_ROLES):
        values["max_tokens"] = rt.settings.spec(role).max_tokens
        static, dynamic = split_static(render_prompt(role, rt.settings.prompts_dir, **values))
        parts.append(f"{static}\n\n{dynamic}")
    return "\n\n---\n\n".join(parts)


def run_naive(root: Path, plan: str) -> PolicyRun:
    """The same job by one agent holding every tool, with the naive offline brain, through the same factory."""
    opts = _options(root, "naive")
    rt = create_job(opts)
    stages.intake(rt, opts.inputs, opts.columns_file)
    stages.set_plan(rt, plan)
    tools: dict[str, object] = {}
    hooks: list[object] = []
    for role in TOOL_AGENT_ROLES:
        role_tools, role_hooks = tools_for(role, rt)
        tools.update({t.tool_name: t for t in role_tools if t.tool_name not in tools})
        hooks += role_hooks
    model = OfflineModel(role="supervisor", max_tokens=rt.settings.spec("supervisor").max_tokens, brain=naive)
    agent = build_agent("supervisor", rt, naive_prompt(rt), list(tools.values()), hooks, model=model, naive=True)
    agent("Execute the approved plan, one section at a time, until every item is checked.")
    status, _ = stages.final_status(rt)
    return PolicyRun("naive", rt.ledger.calls(), status)


def coder_system_tokens(settings: Settings, cwd: Path) -> int:
    """The Coder's static system prompt plus its skills catalog, in tokens."""
    catalog = discover_skills(settings.skills_dirs, cwd).prompt_block()
    values = dict.fromkeys(("plan_section", "other_sections", "clues", "data_profile", "skills_catalog"), "")
    values.update(max_tokens=settings.spec("coder").max_tokens, language="en")
    static, _ = split_static(render_prompt("coder", settings.prompts_dir, **values))
    return count_tokens(static) + count_tokens(catalog)


def _table(runs: list[PolicyRun]) -> str:
    rows = [("policy", "status", "calls", "input sent", "peak call", "cache-read share", "est. cost USD")]
    rows += [
        (
            r.name,
            r.status,
            f"{len(r.calls)}",
            f"{r.sent:,}",
            f"{r.peak:,}",
            f"{r.cache_read_share:.2f}",
            f"{r.cost:.4f}",
        )
        for r in runs
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(cell.rjust(w) for cell, w in zip(row, widths, strict=True)) for row in rows)


def measure(root: Path) -> tuple[dict[str, float], PolicyRun, PolicyRun]:
    """Run both policies on the demo job in ``root``; returns the figures of the last line and both runs."""
    root.mkdir(parents=True, exist_ok=True)
    generate_demo_csv(root / "demo.csv")
    write_column_definitions(root / "column_definitions.json")
    engineered, plan = run_engineered(root)
    naive_run = run_naive(root, plan)
    supervisor = [c.sent_tokens for c in engineered.calls if c.agent == "supervisor"]
    figures = {
        "input_ratio": naive_run.sent / engineered.sent,
        "peak_tokens": engineered.peak,
        "supervisor_growth": supervisor[-1] / supervisor[1] if len(supervisor) > 1 else 1.0,
        "cache_read_share": engineered.cache_read_share,
        "coder_system_tokens": coder_system_tokens(Settings(provider="offline").with_provider("offline"), root),
    }
    return figures, engineered, naive_run


def missed_targets(figures: dict[str, float]) -> list[str]:
    """The figures that miss their target (ratios and shares must reach it, sizes must stay under it)."""
    at_least = ("input_ratio", "cache_read_share")
    return [
        name
        for name, target in TARGETS.items()
        if (figures[name] < target if name in at_least else figures[name] > target)
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, help="Keep the two job folders here (default: a temporary folder).")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    with tempfile.TemporaryDirectory(prefix="il-ablation-") as tmp:
        figures, engineered, naive_run = measure(args.keep or Path(tmp))
    supervisor = [c.sent_tokens for c in engineered.calls if c.agent == "supervisor"]
    print(_table([engineered, naive_run]))
    print(
        f"ratios naive/engineered: input sent {figures['input_ratio']:.2f}x, "
        f"cost {naive_run.cost / engineered.cost if engineered.cost else 0:.2f}x, "
        f"peak call {naive_run.peak / engineered.peak:.2f}x"
    )
    print(f"supervisor sent per call: {', '.join(f'{n:,}' for n in supervisor)}")
    missed = missed_targets(figures)
    print("targets: " + ("all met" if not missed else "MISSED " + ", ".join(missed)))
    print(
        f"input_ratio={figures['input_ratio']:.2f} peak_tokens={figures['peak_tokens']} "
        f"supervisor_growth={figures['supervisor_growth']:.2f} cache_read_share={figures['cache_read_share']:.3f} "
        f"coder_system_tokens={figures['coder_system_tokens']}"
    )
    ok = not missed and engineered.status == "completed" and naive_run.status == "completed"
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
