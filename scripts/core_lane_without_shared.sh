#!/usr/bin/env bash
# Prove the repository stands on its own: copy the tracked files to a folder with no ../shared beside it and run the
# core lane (`pytest -m "not e2e"`) there, with the copy's own sources first on the path. Needs .venv (scripts/test.sh).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d -t insightloom-alone-XXXXXX)"
trap 'rm -rf "$work"' EXIT
copy="$work/insightloom"
mkdir "$copy"
git -C "$repo" ls-files -z | (cd "$repo" && tar --null -T - -cf -) | tar -xf - -C "$copy"
[ ! -e "$work/shared" ] || { echo "the copy must have no ../shared beside it" >&2; exit 1; }
cd "$copy"
export PYTHONPATH="$copy/src" PYTEST_DEBUG_TEMPROOT="$work"
"$repo/.venv/bin/python" - "$copy" <<'PY'
import sys
import insightloom
if not insightloom.__file__.startswith(sys.argv[1]):
    sys.exit(f"insightloom was imported from {insightloom.__file__}, not from the copy")
PY
PYTHON="$repo/.venv/bin/python" bash "$repo/scripts/run_pytest.sh" -q -n "${PYTEST_WORKERS:-2}" -m "not e2e" -p no:cacheprovider
