"""The commands that answer at once (issue 23's "start fast") import no agent stack: no Strands, no model SDK, no
workflow. Each runs in a fresh interpreter, so modules another test imported cannot hide an import."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

#: Modules whose import is the start-up cost of the agent stack.
HEAVY = ("strands", "botocore", "boto3", "litellm", "insightloom.workflow", "insightloom.agents", "insightloom.models")

_PROBE = """
import json, sys
prefixes = tuple(json.loads(sys.stdin.read()))
from typer.testing import CliRunner
from insightloom.cli import app
result = CliRunner().invoke(app, sys.argv[1:])
heavy = sorted({".".join(m.split(".")[:2]) if m.startswith("insightloom.") else m.split(".")[0]
                for m in sys.modules if m == prefixes or m.startswith(prefixes)})
print(json.dumps({"exit": result.exit_code, "heavy": heavy, "out": result.output[-300:]}))
"""


@pytest.mark.parametrize(
    ("args", "allowed"),
    [
        (["--help"], ()),
        (["jobs", "--artifacts", "{tmp}"], ()),
        (["schema"], ()),
        (["schema", "profile"], ()),
        (["doctor"], ()),
        (["doctor", "--live"], ("botocore", "boto3", "insightloom.models")),  # it asks Bedrock, through botocore
    ],
)
def test_a_quick_command_imports_no_agent_stack(
    args: list[str], allowed: tuple[str, ...], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("AWS_PROFILE", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name, raising=False)  # doctor --live stops before any call without credentials
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    argv = [a.replace("{tmp}", str(tmp_path)) for a in args]
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, *argv], input=json.dumps(HEAVY), capture_output=True, text=True, check=True
    )
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["exit"] in (0, 1), found  # doctor exits 1 on a machine missing an optional tool
    heavy = [m for m in found["heavy"] if m not in allowed]
    assert heavy == [], f"`insightloom {' '.join(args)}` imported {heavy}"
