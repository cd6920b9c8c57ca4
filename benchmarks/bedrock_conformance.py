"""Benchmark: whole jobs through Strands' ``BedrockModel`` against the strict Bedrock endpoint, as a user runs them.

The endpoint (``insightloom.testing.bedrock_endpoint``) serves on loopback in this process, with the product's
offline model per role as its brain (``offline_router``). Each job is the real CLI in a subprocess,
``insightloom run <data> --provider bedrock --yes`` (the demo's own table and column definitions for the demo),
pointed at the endpoint by ``AWS_ENDPOINT_URL_BEDROCK_RUNTIME`` with dummy credentials and no shared AWS files: the
boto3 client, botocore's retries and Strands' request formatting are the ones a user with credentials gets. Every
request is checked against Bedrock's rules; a violation is answered with ``ValidationException`` and counted as
``rejected``. One throttling burst (``--burst`` calls answered 429 ``ThrottlingException``) is injected before the
second job; botocore's adaptive retries must carry the job through, and the job's events must show the
"throttled by Bedrock" progress notices. Then ten follow-up questions (``insightloom ask``, four with ``--analyze``)
run through the endpoint too.

Per-job lines go to stderr. The last stdout line:
``jobs=<n> completed=<n> requests=<n> rejected=<n> throttled_recovered=<n> cache_read_share=<r>``, where
``throttled_recovered`` counts throttled calls in jobs that completed, and ``cache_read_share`` is cache reads over
every input token billed (input + cache reads + cache writes), as the endpoint bills them. The line before it
gives the asks: ``asks=<n> answered=<n> abstained=<n> failed=<n>``. Exit 1 when a job fails, a request is rejected
or an ask fails; else 0.

Usage: python benchmarks/bedrock_conformance.py [--out DIR] [--burst 3] [--keep]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data"  # copies of the shared datasets
REQUEST = "Analyze this data and write a DOCX report"
#: The demo, then the four shared datasets (the e2e tests' datasets).
DATASETS: tuple[tuple[str, str], ...] = (
    ("demo", ""),
    ("moon-market-en", "moon-market-en/moon-market-fresh-food-sales.csv"),
    ("moon-market-kr", "moon-market-kr/moon-market-fresh-food-sales.csv"),
    ("yummy-food", "yummy-food/yummy-food-market.csv"),
    ("training-assessment", "training-assessment/training_assessment.xlsx"),
)
#: Ten follow-ups: (job, question, analyze).
ASKS: tuple[tuple[str, str, bool], ...] = (
    ("demo", "What was total revenue?", False),
    ("demo", "Which region had the highest revenue?", False),
    ("demo", "What is the mean of `Units`? Round to 2 decimals.", True),
    ("moon-market-en", "What is the total Amount?", False),
    ("moon-market-en", "What is the median of `Qty`? Round to 1 decimal.", True),
    ("moon-market-kr", "총 매출액(Amount)은 얼마입니까?", False),
    ("yummy-food", "매체별 광고비용 합계가 가장 큰 매체는?", False),
    ("yummy-food", "What is the Pearson correlation between `클릭수` and `전환수`? Round to 3 decimals.", True),
    ("training-assessment", "How many trainees are there?", False),
    ("demo", "What is the standard deviation of `Revenue`? Round to 2 decimals.", True),
)


@dataclass
class JobLine:
    name: str
    status: str
    seconds: float
    requests: int
    throttled: int
    notices: int
    coder_output: int
    reporter_output: int


def _env(endpoint_env: dict[str, str], home: Path) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "INSIGHTLOOM_"))}
    keep.update(endpoint_env)
    keep.update({"AWS_CONFIG_FILE": str(home / "aws-config"), "AWS_SHARED_CREDENTIALS_FILE": str(home / "aws-creds")})
    keep.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    if keep.get("PYTHONPATH"):  # the subprocesses run elsewhere: a relative entry would point nowhere
        keep["PYTHONPATH"] = os.pathsep.join(str(Path(p).resolve()) for p in keep["PYTHONPATH"].split(os.pathsep))
    return keep


def _cli(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "insightloom", *args]
    return subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, timeout=1800, check=False)


def _demo_inputs(folder: Path) -> list[str]:
    from insightloom.demo_data import generate_demo_csv, write_column_definitions

    csv = generate_demo_csv(folder / "bakery_sales.csv")
    columns = write_column_definitions(folder / "column_definitions.json")
    return [str(csv), "--columns", str(columns)]


def _outputs(job_dir: Path) -> tuple[int, int]:
    try:
        usage = json.loads((job_dir / "usage.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return 0, 0
    agents = usage.get("agents") or usage.get("by_agent") or {}

    def output(role: str) -> int:
        entry = agents.get(role) or {}
        return int(entry.get("output_tokens") or entry.get("output") or 0)

    return output("coder"), output("reporter")


def _notices(job_dir: Path) -> int:
    path = job_dir / "events.jsonl"
    if not path.exists():
        return 0
    lines = path.read_text(encoding="utf-8").splitlines()
    return sum('"throttled"' in line and '"progress"' in line for line in lines)


def run(out: Path, burst: int) -> int:
    from insightloom.testing.bedrock_endpoint import BedrockEndpoint, offline_router

    endpoint = BedrockEndpoint(offline_router())
    jobs: list[JobLine] = []
    jobs_dirs: dict[str, Path] = {}
    with endpoint:
        env = _env(endpoint.env(), out)
        for index, (name, relative) in enumerate(DATASETS):
            if index == 1 and burst:
                endpoint.throttle(burst)
            job_dir = out / name
            before = len(endpoint.exchanges)
            inputs = _demo_inputs(out) if not relative else [str(DATA / relative)]
            started = time.perf_counter()
            done = _cli(
                ["run", *inputs, "-r", REQUEST, "--provider", "bedrock", "--yes", "-q", "--job-dir", str(job_dir)],
                env,
                out,
            )
            seconds = time.perf_counter() - started
            mine = endpoint.exchanges[before:]
            status = "completed" if done.returncode == 0 else f"exit {done.returncode}"
            if done.returncode != 0:
                print(done.stderr[-2000:], file=sys.stderr)
            coder, reporter = _outputs(job_dir)
            line = JobLine(
                name,
                status,
                seconds,
                sum(e.operation != "count-tokens" for e in mine),
                sum(e.error == "ThrottlingException" for e in mine),
                _notices(job_dir),
                coder,
                reporter,
            )
            jobs.append(line)
            jobs_dirs[name] = job_dir
            print(
                f"job={name} status={status} seconds={seconds:.1f} requests={line.requests} "
                f"throttled={line.throttled} throttle_notices={line.notices} coder_output={coder} "
                f"reporter_output={reporter}",
                file=sys.stderr,
                flush=True,
            )
        answered = abstained = failed = 0
        for name, question, analyze in ASKS:
            args = ["ask", str(jobs_dirs[name]), question, "--provider", "bedrock", "-q"]
            done = _cli([*args, "--analyze"] if analyze else args, env, out)
            kind = {0: "answered", 3: "abstained"}.get(done.returncode, f"failed (exit {done.returncode})")
            answered += kind == "answered"
            abstained += kind == "abstained"
            failed += kind.startswith("failed")
            first = (done.stdout.strip().splitlines() or [done.stderr.strip()[-300:]])[0]
            print(f"ask job={name} analyze={analyze} {kind}: {question} -> {first[:160]}", file=sys.stderr, flush=True)
        stats = endpoint.stats()
    for violation in endpoint.violations[:10]:
        print(f"violation: {violation}", file=sys.stderr)
    billed = stats["input"] + stats["cache_read"] + stats["cache_write"]
    share = stats["cache_read"] / billed if billed else 0.0
    completed = sum(j.status == "completed" for j in jobs)
    recovered = sum(j.throttled for j in jobs if j.status == "completed")
    print(f"asks={len(ASKS)} answered={answered} abstained={abstained} failed={failed}")
    print(
        f"jobs={len(jobs)} completed={completed} requests={stats['requests']} rejected={stats['rejected']} "
        f"throttled_recovered={recovered} cache_read_share={share:.3f}"
    )
    return 0 if completed == len(jobs) and not stats["rejected"] and not failed else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="Folder for the jobs (default: a temporary one)")
    parser.add_argument("--burst", type=int, default=3, help="Throttled calls injected before the second job")
    parser.add_argument("--keep", action="store_true", help="Keep the temporary folder")
    args = parser.parse_args(argv)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        return run(args.out.resolve(), args.burst)
    folder = Path(tempfile.mkdtemp(prefix="insightloom-conformance-"))
    try:
        return run(folder, args.burst)
    finally:
        if not args.keep:
            import shutil

            shutil.rmtree(folder, ignore_errors=True)
        else:
            print(f"jobs kept in {folder}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
