#!/usr/bin/env bash
# Run pytest with the interpreter in $PYTHON (default .venv/bin/python) and the given arguments; pytest's exit 5
# (no tests collected) becomes a failure, so a lane that selects nothing can never pass.
set -uo pipefail
"${PYTHON:-.venv/bin/python}" -m pytest "$@"
rc=$?
if [ "$rc" -eq 5 ]; then
  echo "pytest collected no tests: failing on purpose" >&2
  exit 1
fi
exit "$rc"
