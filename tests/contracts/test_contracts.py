"""The package owns the job folder's JSON Schemas: they are valid, exported, and never narrower than the reference."""

from __future__ import annotations

import copy
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parent))

from contract_examples import EXAMPLES

from insightloom.cli import app
from insightloom.contracts import SCHEMA_NAMES, load_schema, schema_text
from insightloom.errors import BadInputError
from repo_paths import DATA

JSON_LEAVES = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 10**7), st.floats(-1e6, 1e6, allow_nan=False), st.text(max_size=12)
)
JSON_VALUES = st.recursive(
    JSON_LEAVES,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)),
    max_leaves=6,
)


@pytest.mark.parametrize("name", SCHEMA_NAMES)
def test_every_schema_is_valid_draft_2020_12_and_accepts_its_examples(name: str) -> None:
    schema = load_schema(name)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert EXAMPLES[name], name
    for document in EXAMPLES[name]:
        jsonschema.validate(document, schema)


def test_schemas_reject_what_the_contract_forbids() -> None:
    bad_state = dict(EXAMPLES["shared_state"][0], extra="no fifth key")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad_state, load_schema("shared_state"))
    summed_year = copy.deepcopy(EXAMPLES["profile"][1])
    summed_year["tables"][0]["columns"][0]["aggregation"] = "total"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(summed_year, load_schema("profile"))
    failed_without_error = dict(EXAMPLES["job"][0], status="failed")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(failed_without_error, load_schema("job"))
    seven_roles = copy.deepcopy(EXAMPLES["usage"][0])
    del seven_roles["agents"]["tracker"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(seven_roles, load_schema("usage"))


def test_names_are_forgiving_and_unknown_names_name_the_choices() -> None:
    assert load_schema("job.json") == load_schema("job") == load_schema("job.schema.json")
    assert load_schema("events.jsonl") == load_schema("event")
    first = load_schema("usage")
    first["title"] = "changed"
    assert load_schema("usage")["title"] == "usage.json"  # each call returns a fresh dict
    with pytest.raises(BadInputError) as info:
        schema_text("report")
    assert "citations" in info.value.fix and "report" in info.value.message


def test_schema_command_prints_a_schema_and_lists_them() -> None:
    runner = CliRunner()
    printed = runner.invoke(app, ["schema", "citations"])
    assert printed.exit_code == 0
    assert json.loads(printed.stdout) == load_schema("citations")
    listed = runner.invoke(app, ["schema"])
    assert listed.exit_code == 0 and all(name in listed.stdout for name in SCHEMA_NAMES)
    unknown = runner.invoke(app, ["schema", "nope"])
    assert unknown.exit_code == 2 and "audit_findings" in unknown.stderr


def test_test_data_is_in_the_repository_with_its_license() -> None:
    files = {p.relative_to(DATA).as_posix() for p in DATA.rglob("*") if p.is_file()}
    assert "LICENSE-deep-insight-sample-data.txt" in files
    for name in (
        "moon-market-en/moon-market-fresh-food-sales.csv",
        "moon-market-kr/moon-market-fresh-food-sales.csv",
        "yummy-food/yummy-food-market.csv",
        "training-assessment/training_assessment.xlsx",
    ):
        assert (DATA / name).stat().st_size > 1000, name


# --- optional reference checks: they need ../shared beside the repository ---------------------------------------


def _paths(document: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path into a JSON document (dict keys and list indexes), the root included."""
    found = [prefix]
    if isinstance(document, dict):
        for key, value in document.items():
            found += _paths(value, (*prefix, key))
    elif isinstance(document, list):
        for index, value in enumerate(document):
            found += _paths(value, (*prefix, index))
    return found


@st.composite
def _mutated(draw: st.DrawFn, seed: Any) -> Any:
    """A seed document with one to three edits: a value replaced, a key dropped or a key added."""
    document = copy.deepcopy(seed)
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(_paths(document)))
        if not path:
            continue
        parent = document
        for step in path[:-1]:
            parent = parent[step]
        action = draw(st.sampled_from(("replace", "drop", "add")))
        if action == "replace":
            parent[path[-1]] = draw(JSON_VALUES)
        elif action == "drop" and isinstance(parent, dict):
            del parent[path[-1]]
        elif action == "add" and isinstance(parent, dict):
            parent[draw(st.text(min_size=1, max_size=8))] = draw(JSON_VALUES)
    return document


def _reference(shared_dir: Path, name: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((shared_dir / "contracts" / f"{name}.schema.json").read_text("utf-8"))
    return document


def test_every_reference_contract_has_a_package_schema(shared_dir: Path) -> None:
    reference = {p.name.removesuffix(".schema.json") for p in (shared_dir / "contracts").glob("*.schema.json")}
    assert reference and reference <= set(SCHEMA_NAMES)


#: The package's own contracts, with no reference in the design to be compatible with.
PACKAGE_ONLY = ("profile", "ask_event", "request")


def test_only_the_package_own_contracts_lack_a_reference(shared_dir: Path) -> None:
    reference = {p.name.removesuffix(".schema.json") for p in (shared_dir / "contracts").glob("*.schema.json")}
    assert set(SCHEMA_NAMES) - reference == set(PACKAGE_ONLY)


@pytest.mark.parametrize("name", [n for n in SCHEMA_NAMES if n not in PACKAGE_ONLY])
def test_package_schema_accepts_what_the_reference_accepts(shared_dir: Path, name: str) -> None:
    reference = jsonschema.Draft202012Validator(_reference(shared_dir, name))
    package = jsonschema.Draft202012Validator(load_schema(name))
    checked: list[int] = []

    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(document=st.sampled_from(EXAMPLES[name]).flatmap(_mutated))
    def accepted_by_both(document: Any) -> None:
        if reference.is_valid(document):
            checked.append(1)
            errors = [e.message for e in package.iter_errors(document)]
            assert not errors, (document, errors)

    for seed in EXAMPLES[name]:
        assert reference.is_valid(seed), seed  # the seeds are reference documents
    accepted_by_both()
    assert checked  # the mutations reached documents the reference accepts


def test_tests_data_is_an_exact_copy_of_the_reference_data(shared_dir: Path) -> None:
    def digests(root: Path) -> dict[str, str]:
        return {
            p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in root.rglob("*")
            if p.is_file()
        }

    assert digests(DATA) == digests(shared_dir / "data")
