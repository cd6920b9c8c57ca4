#!/usr/bin/env bash
# The README's test command: set up .venv with the dev extras, then every gate in turn — ruff lint, ruff format,
# mypy, and the whole test suite in parallel (pytest-xdist). Extra arguments go to pytest, e.g. `-m "not e2e"` for
# the core lane. pytest's exit 5 (no tests) is a failure (scripts/run_pytest.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[dev]'
LINTED=(src tests benchmarks scripts deploy)
.venv/bin/ruff check "${LINTED[@]}"
.venv/bin/ruff format --check "${LINTED[@]}"
.venv/bin/mypy
# A fresh, private temp root for this run: pytest refuses to start when /tmp/pytest-of-<user> was left behind by
# another user or user namespace.
PYTEST_DEBUG_TEMPROOT="$(mktemp -d -t insightloom-pytest-XXXXXX)"
export PYTEST_DEBUG_TEMPROOT
trap 'rm -rf "$PYTEST_DEBUG_TEMPROOT"' EXIT
bash scripts/run_pytest.sh -q -n "${PYTEST_WORKERS:-2}" "$@"
