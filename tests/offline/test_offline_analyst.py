"""The offline analyst end to end on five tables: plan, write scripts, run them, re-check every number in DuckDB."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pandas as pd
import pytest

from insightloom.analysis_utils import calc_refs, read_results, write_utils_module
from insightloom.calc_refs import CLAIM_REF_RE
from insightloom.demo_data import generate_demo_csv, write_column_definitions
from insightloom.intake import ingest
from insightloom.models.offline.analyst import AnalysisSpec, parse_item, plan_analyses, script_for
from insightloom.validation.recipes import expression
from repo_paths import DATA, REPO

# Every test here reads the module fixture that plans and runs every analysis script of five datasets.
pytestmark = pytest.mark.e2e

MOON_EN = DATA / "moon-market-en"
MOON_KR = DATA / "moon-market-kr"
YUMMY = DATA / "yummy-food"
DATASETS: dict[str, tuple[Path | None, Path | None]] = {
    "demo": (None, None),
    "moon_en": (MOON_EN / "moon-market-fresh-food-sales.csv", MOON_EN / "column_definitions.json"),
    "moon_kr": (MOON_KR / "moon-market-fresh-food-sales.csv", MOON_KR / "column_definitions.json"),
    "yummy": (YUMMY / "yummy-food-market.csv", YUMMY / "column_definitions.json"),
    "xlsx": (DATA / "training-assessment" / "training_assessment.xlsx", None),
    "categories_only": (None, None),  # no measure, no date, a Korean column name, missing values
}
CATEGORIES_ONLY_CSV = "store,색상,size\n" + "".join(
    f"{'ABC'[i % 3] if i % 11 else ''},{['빨강', '파랑'][i % 2]},{'SML'[i % 3 if i % 7 else 0]}\n" for i in range(60)
)


@dataclass
class JobRun:
    job: Path
    profile: dict[str, Any]
    specs: list[AnalysisSpec]
    failures: list[str] = field(default_factory=list)

    @property
    def calcs(self) -> list[dict[str, Any]]:
        return json.loads((self.job / "calculation_metadata.json").read_text(encoding="utf-8"))["calculations"]


def _run_job(name: str, root: Path) -> JobRun:
    job = root / name
    job.mkdir()
    data, columns = DATASETS[name]
    if name == "demo":
        data = generate_demo_csv(root / "inputs" / "loom-and-loaf-orders.csv")
        columns = write_column_definitions(root / "inputs" / "column_definitions.json")
    elif data is None:
        data = root / "inputs" / "survey.csv"
        data.parent.mkdir(exist_ok=True)
        data.write_text(CATEGORIES_ONLY_CSV, encoding="utf-8")
    profile = ingest([data], job, columns_file=columns).to_dict()
    code = job / "code"
    write_utils_module(code)
    env = dict(os.environ, INSIGHTLOOM_JOB_DIR=str(job), PYTHONPATH=os.pathsep.join([str(code), str(REPO / "src")]))
    run = JobRun(job, profile, plan_analyses(profile, "Analyze this data", profile["language"]))
    for spec in run.specs:
        file_name, source = script_for(spec, profile, profile["language"])
        script = code / file_name
        script.write_text(source, encoding="utf-8")
        result = subprocess.run([sys.executable, str(script)], cwd=job, env=env, capture_output=True, text=True,
                                timeout=120)  # fmt: skip
        if result.returncode != 0:
            run.failures.append(f"{file_name}: {result.stderr[-2000:]}")
    return run


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, JobRun]:
    root = tmp_path_factory.mktemp("analyst")
    with ThreadPoolExecutor(max_workers=max(2, min(5, os.cpu_count() or 2))) as pool:
        futures = {name: pool.submit(_run_job, name, root) for name in DATASETS}
        return {name: future.result() for name, future in futures.items()}


def _tables(run: JobRun):
    views = {t["view"]: t["parquet"] for t in run.profile["tables"]}
    views |= {alias: views[view] for alias, view in run.profile["aliases"].items()}
    return lambda view: pd.read_parquet(run.job / views[view])


def _recheck(run: JobRun) -> list[str]:
    con = duckdb.connect()
    for table in run.profile["tables"]:
        parquet = (run.job / table["parquet"]).as_posix().replace("'", "''")
        con.execute(f"CREATE VIEW \"{table['view']}\" AS SELECT * FROM read_parquet('{parquet}')")
    for alias, view in run.profile["aliases"].items():
        con.execute(f'CREATE VIEW "{alias}" AS SELECT * FROM "{view}"')
    problems = []
    for calc in run.calcs:
        if calc.get("kind") == "claim":
            continue  # a claim's check is a statistical test ("stat:trend"): the Validator re-computes it with SciPy
        if not calc.get("check"):
            # The few deliberate gaps: a low/medium detail whose recipe the offline Validator re-derives in pandas.
            if calc["importance"] == "high" or expression(calc.get("recipe")) is None:
                problems.append(f"{calc['id']}: no check and no usable recipe")
                continue
            got, want = eval(expression(calc["recipe"]), {"np": np, "pd": pd, "table": _tables(run)}), calc["value"]
            if abs(float(got) - float(want)) >= 0.01:
                problems.append(f"{calc['id']}: tracked {want!r}, recipe gives {got!r}")
            continue
        rows = con.execute(calc["check"]).fetchall()
        if len(rows) != 1 or len(rows[0]) != 1:
            problems.append(f"{calc['id']}: check returned {rows!r}")
            continue
        got, want = rows[0][0], calc["value"]
        same = got == want if isinstance(want, str) else got is not None and abs(float(got) - float(want)) < 0.01
        if not same:
            problems.append(f"{calc['id']}: tracked {want!r}, check gives {got!r}")
    return problems


@pytest.mark.parametrize("name", list(DATASETS))
def test_every_script_runs_and_every_check_agrees(runs: dict[str, JobRun], name: str) -> None:
    run = runs[name]
    assert run.failures == []
    assert _recheck(run) == []
    unchecked = [c for c in run.calcs if not c.get("check")]
    assert 0 < len(unchecked) <= len(run.calcs) // 5  # a few gaps for the tiers, most numbers checked
    minimum = 15 if name == "demo" else 10
    assert len({c["id"] for c in run.calcs}) >= minimum


@pytest.mark.parametrize("name", list(DATASETS))
def test_charts_sidecars_and_findings(runs: dict[str, JobRun], name: str) -> None:
    run = runs[name]
    charts = sorted((run.job / "charts").glob("*.png"))
    assert len(charts) >= (3 if name == "demo" else 2)
    for chart in charts:
        sidecar = json.loads(chart.with_suffix(".json").read_text(encoding="utf-8"))
        assert set(sidecar) == {"title", "alt", "caption", "clipped_texts", "repeated_tick_labels"}
        assert sidecar["clipped_texts"] == [] and sidecar["repeated_tick_labels"] == [], chart.name
    ids = {c["id"] for c in run.calcs}
    sections = read_results(run.job / "all_results.txt")
    assert len(sections) == len(run.specs)
    referenced: set[str] = set()
    for section in sections:
        for finding in section.findings:
            refs = calc_refs(finding)
            assert set(refs) <= ids, finding
            bare = CLAIM_REF_RE.sub("", finding)
            for ref in refs:
                bare = bare.replace("{{calc:" + ref + "}}", "")
            for col in run.specs[0].columns() + [c["name"] for t in run.profile["tables"] for c in t["columns"]]:
                bare = bare.replace(col, "")
            assert not any(ch.isdigit() for ch in bare), f"typed digit in finding: {finding}"
        notes = "\n".join(section.findings + [section.table])
        referenced |= set(calc_refs(notes)) | set(CLAIM_REF_RE.findall(notes))
        assert set(section.calculations) <= ids
        assert (run.job / section.script).is_file()
    assert ids == referenced  # every tracked number is cited somewhere, so the audit finds no unused calculation


@pytest.mark.parametrize("name", list(DATASETS))
def test_no_calculation_touches_personal_or_identifier_columns(runs: dict[str, JobRun], name: str) -> None:
    run = runs[name]
    banned = {c["name"] for t in run.profile["tables"] for c in t["columns"] if c["role"] in ("pii", "identifier")}
    for calc in run.calcs:
        assert not set(calc["source_columns"]) & banned, calc["id"]
        assert not any(f'"{col}"' in (calc.get("check") or "") for col in banned), calc["id"]
    for spec in run.specs:
        assert not set(spec.columns()) & banned


@pytest.mark.parametrize("name", list(DATASETS))
def test_plan_items_round_trip(runs: dict[str, JobRun], name: str) -> None:
    run = runs[name]
    for spec in run.specs:
        for language in ("en", "ko"):
            assert parse_item(spec.item_text(language), run.profile) == spec
            assert parse_item(f"- [ ] {spec.item_text(language)}", run.profile) == spec


def test_ids_are_ascii_snake_case_and_units_follow_the_design(runs: dict[str, JobRun]) -> None:
    for run in runs.values():
        for calc in run.calcs:
            assert calc["id"].isascii() and calc["id"] == calc["id"].lower() and " " not in calc["id"]
    moon = {c["id"]: c for c in runs["moon_en"].calcs}
    assert moon["amount_total"]["unit"] == "KRW"
    assert moon["amount_by_category_share_1"]["unit"] == "%"
    assert 0 < moon["amount_by_category_share_1"]["value"] <= 100  # stored in percent, not as a fraction
    assert moon["rows"]["value"] == 836 and moon["rows"]["unit"] == "count"
    yummy = {c["id"]: c for c in runs["yummy"].calcs}
    frame = pd.read_parquet(runs["yummy"].job / runs["yummy"].profile["tables"][0]["parquet"])
    assert yummy["ctr"]["value"] == pytest.approx(frame["클릭수"].sum() / frame["노출수"].sum() * 100)
    assert yummy["ctr"]["value"] != pytest.approx(frame["CTR"].mean(), abs=0.01)  # recomputed, not averaged
    assert yummy["roas"]["unit"] == "ratio" and yummy["ctr"]["unit"] == "%"
    demo = {c["id"]: c for c in runs["demo"].calcs}
    assert demo["revenue_total"]["unit"] == "USD"


def test_korean_data_gets_korean_findings(runs: dict[str, JobRun]) -> None:
    sections = read_results(runs["yummy"].job / "all_results.txt")
    assert all(any("\uac00" <= ch <= "\ud7a3" for ch in s.findings[0]) for s in sections)
