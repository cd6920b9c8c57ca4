"""The hostile-file corpus of issue 24: every generated file ends cleanly through the real CLI.

Each case of ``benchmarks/hostile_inputs.py`` (wide headers, zip and XML bombs, long lines and fields, CR-only and
mixed line endings, NUL bytes, BOM mixes, deep JSON, formula cells, degenerate tables ...) is written in tmp_path and
run as ``python -m insightloom run FILE -r "Analyze this data" --yes --provider offline --job-dir DIR``. It must end
in one of the exit codes the case allows (0 or 3 when the file is read and a whole job runs, 2 when it is refused),
never 1, with no traceback on stderr and under 2 GB of peak memory; intake must be over (the file refused, or read
and cached) within 15 s of the CLI's start.

The 15 s is a bound, not a benchmark: a file intake refuses is killed at 15 s, so a hang or a parse that runs for
minutes fails here, but the test measures nothing finer. A file that is read runs a whole offline job after intake,
which takes 9-27 s on this shared 2-core machine (the CLI's imports alone take 3-6 s), so that job is killed only at
60 s (a hang guard); its intake still has the 15 s bound. ``python benchmarks/hostile_inputs.py`` prints the table of
exit codes, seconds and peak MB (``-s`` shows the same rows here). Cases that run whole jobs are marked e2e.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
if str(BENCHMARKS) not in sys.path:
    sys.path.append(str(BENCHMARKS))  # appended, so no benchmark script shadows an installed module
bench = importlib.import_module("hostile_inputs")


def _param(case: Any) -> Any:
    return pytest.param(case, id=case.name, marks=[pytest.mark.e2e] if case.whole_job else [])


def test_the_corpus_has_at_least_40_distinct_hostile_files() -> None:
    names = [case.name for case in bench.CASES]
    assert len(names) >= 40 and len(set(names)) == len(names)
    assert sum(case.exits == bench.REFUSED for case in bench.CASES) >= 20  # refusals, not only files that read


@pytest.mark.parametrize("case", [_param(case) for case in bench.CASES])
def test_a_hostile_file_ends_with_0_2_or_3_fast_and_without_a_traceback(case: Any, tmp_path: Path) -> None:
    outcome = bench.run_case(case, tmp_path)
    print(outcome.row())
    # Besides the exit, the time, the memory and the traceback: a refusal says why and how to fix it, and a file
    # that is read shows the rows and column names it holds (a CR-only file is 60 rows, not one).
    assert not outcome.problems, f"{case.name}: {'; '.join(outcome.problems)}\n{outcome.stderr[-3000:]}"
