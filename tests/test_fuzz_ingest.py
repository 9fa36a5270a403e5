"""Every loader, fed a fuzzed corpus through the CLI (`tests/fuzz_inputs.py`), answers
exit 0 or 2: never 1, which the README keeps for violations found, never a traceback; on
exit 2 the store is as it was; and whatever was accepted passes `finkg validate` (issue 24).

FINKG_FUZZ_SEED and FINKG_FUZZ_CASES (per kind) run another or a larger corpus."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from finkg.cli import cli
from tests.fuzz_inputs import KINDS, SEEDS, Case, cases, run_case, validate

SEED = int(os.environ.get("FINKG_FUZZ_SEED", "24"))
PER_KIND = int(os.environ.get("FINKG_FUZZ_CASES", "12"))
CASES = cases(SEED, PER_KIND)


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, str]]:
    """One store per kind, holding that kind's valid seed inputs (so a mutated input meets
    records already there)."""
    envs = {}
    for kind in KINDS:
        root = tmp_path_factory.mktemp(f"fuzz-{kind}")
        env = {"FINKG_HOME": str(root / "home"), "FINKG_STORE": str(root / "store")}
        assert CliRunner().invoke(cli, ["init"], env=env).exit_code == 0
        for i, (files, args) in enumerate(SEEDS[kind]):
            seed = Case(kind, {n: t.encode() for n, t in files.items()}, args, skip_bad=False)
            outcome = run_case(seed, root / f"seed-{i}", env)
            assert outcome.exit_code == 0, outcome.traceback or outcome.output
        envs[kind] = env
    return envs


def test_the_corpus_covers_every_loader() -> None:
    assert {c.kind for c in CASES} == set(KINDS)
    assert len(CASES) == PER_KIND * len(KINDS)


@pytest.mark.parametrize("index", range(len(CASES)), ids=lambda i: f"{i}-{CASES[i].kind}")
def test_a_fuzzed_input_exits_0_or_2_and_exit_2_writes_nothing(
    stores: dict[str, dict[str, str]], tmp_path: Path, index: int
) -> None:
    case = CASES[index]
    outcome = run_case(case, tmp_path / "case", stores[case.kind])
    assert outcome.traceback is None, f"{case.name}\n{outcome.traceback}"
    assert outcome.exit_code in (0, 2), f"{case.name}: exit {outcome.exit_code}\n{outcome.output}"
    assert outcome.unchanged, f"{case.name}: exit 2 but the store changed\n{outcome.output}"


@pytest.mark.parametrize("kind", KINDS)
def test_what_the_fuzzed_ingests_accepted_passes_validate(
    stores: dict[str, dict[str, str]], kind: str
) -> None:
    code, output = validate(stores[kind])
    assert code == 0, output
