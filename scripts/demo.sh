#!/usr/bin/env bash
# Set up a virtualenv with a plain (non-editable) install and run the offline demo.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv-demo
.venv-demo/bin/python -m pip install -q --upgrade pip
.venv-demo/bin/python -m pip install -q .
.venv-demo/bin/insightloom demo "$@"
