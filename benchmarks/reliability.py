"""Reliability report (issue: reliability and security).

Runs the suites that try finkg's failure modes and counts what they tried and what held,
case by case, then loads `finkg serve` (benchmarks/serve_load.py):

- bad inputs (`tests/data/bad/`, `tests/test_bad_inputs.py`): files tried; those that got
  an error naming file, line and field with the store digest unchanged (a document that
  cannot be read is recorded in the Error state, its lifecycle's audited write, and
  nothing else); those that landed in the rejects file with --skip-bad (the documents'
  in one CLI run, so one test);
- crash scenarios (`tests/test_crash.py`, `tests/test_crash_jobs.py`): SIGKILL during an
  ingest, a prediction write and a feedback (memory) write; survived = the store opens
  whole and the rerun completes without duplicates;
- injection attempts (`tests/test_injection.py`, the binder's hostile-value tests in
  `tests/test_queries.py` and its property tests, hypothesis cases counted as one test
  each): succeeded = a test that failed;
- isolation (`tests/test_isolation.py`: exports; the dataset test in `tests/test_store.py`;
  `tests/test_recommend.py`: another customer's graph never reaches a recommendation):
  violations = a test that failed;
- outbound calls (`tests/test_serve.py`: SERVICE and LOAD through `finkg serve`): held =
  refused with no request leaving;
- SHACL: the W3C SHACL core suite (`tests/data/w3c-shacl-core`, read by
  `tests/w3c_shacl.py`) through finkg's compiler: tests that agree with the expected
  report (conforms and focus nodes), that are refused by name, that disagree (target 0);
- fuzzed input (`tests/fuzz_inputs.py`, issue 24): FUZZ_CASES mutated inputs per loader
  (rdf, companies, news, prices, filings, fartrans, documents) from FUZZ_SEED through
  `finkg ingest`: the exit codes seen per loader (0 or 2 held; 1, 3 or a traceback did
  not), exit 2 with the store changed, and `finkg validate` on what each store accepted;
  its test (`tests/test_fuzz_ingest.py`, a smaller corpus) is counted with the suites;
- load: WORKERS readers for SECONDS against a writing ingest: queries/s, p50/p99,
  errors, half batches seen.

    python -m benchmarks.reliability [--workers 8] [--seconds 60] [--fuzz-cases 40]
        [--fuzz-seed 24] [--report PATH]
"""

from __future__ import annotations

import argparse
import datetime as dt
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from benchmarks.harness import report_option, write_report
from benchmarks.serve_load import run_load
from tests.w3c_shacl import cases, run

GROUPS = {
    "bad input: clear error, store unchanged": (
        "tests/test_bad_inputs.py::test_a_bad_file_is_named_with_its_line_and_field_and_nothing_is_written",
    ),
    "bad document: named, nothing written (or only its Error state)": (
        "tests/test_bad_inputs.py::test_a_bad_document_is_rejected_naming_its_file_and_field",
    ),
    "bad input: lands in the rejects file (--skip-bad)": (
        "tests/test_bad_inputs.py::test_with_skip_bad_a_bad_record_lands_in_the_rejects_file",
        "tests/test_bad_inputs.py::test_with_skip_bad_every_bad_document_lands_in_the_rejects_file",
    ),
    "fuzzed input: exit 0 or 2, store unchanged on 2, accepted data valid": (
        "tests/test_fuzz_ingest.py",
    ),
    "crash scenario survived": ("tests/test_crash.py", "tests/test_crash_jobs.py"),
    "injection attempt held": (
        "tests/test_injection.py",
        "tests/test_queries.py::test_a_hostile_value_stays_one_literal",
        "tests/test_queries.py::test_a_hostile_iri_is_refused_not_pasted",
        "tests/test_recommend.py::test_a_reply_citing_what_was_not_offered_fails_and_writes_nothing",
        "tests/test_properties.py::test_a_bound_string_comes_back_as_itself",
        "tests/test_properties.py::test_a_bound_string_cannot_change_what_a_query_reads",
    ),
    "outbound call refused (SERVICE, LOAD)": (
        "tests/test_serve.py::test_service_is_refused_with_its_reason_and_no_request_leaves",
        "tests/test_serve.py::test_load_is_refused_on_a_read_write_endpoint",
    ),
    "isolation held": (
        "tests/test_isolation.py",
        "tests/test_store.py::test_a_dataset_restricts_what_a_query_reads",
        "tests/test_recommend.py::test_another_customers_graph_never_reaches_the_prompt_or_the_output",
    ),
}


@dataclass
class Tally:
    tried: int = 0
    held: int = 0
    failed: list[str] = field(default_factory=list)


class Collector:
    """A pytest plugin that keeps each test's outcome (the call phase, or a setup error)."""

    def __init__(self) -> None:
        self.outcomes: dict[str, str] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
            self.outcomes[report.nodeid] = report.outcome


def run_suites() -> dict[str, Tally]:
    targets = sorted({t for group in GROUPS.values() for t in group})
    collector = Collector()
    code = pytest.main(
        ["-q", "-p", "no:cacheprovider", "-m", "not remote", *targets],
        plugins=[collector],
    )
    if code not in (0, 1):
        raise SystemExit(f"pytest could not run the suites (exit {code})")
    tallies = {}
    for name, prefixes in GROUPS.items():
        t = Tally()
        for nodeid, outcome in collector.outcomes.items():
            if outcome == "skipped" or not nodeid.startswith(prefixes):
                continue
            t.tried += 1
            t.held += outcome == "passed"
            if outcome != "passed":
                t.failed.append(nodeid)
        tallies[name] = t
    return tallies


def shacl_suite() -> dict[str, list[str]]:
    """The W3C SHACL core tests by verdict: agree, refused, disagree."""
    verdicts: dict[str, list[str]] = {"agree": [], "refused": [], "disagree": []}
    for case in cases():
        outcome = run(case)
        verdicts[outcome.verdict].append(f"{case.name}: {outcome.detail}")
    return verdicts


@dataclass
class Fuzz:
    """What the fuzzed corpus did, per loader."""

    seed: int
    per_kind: int
    codes: dict[str, Counter[str]] = field(default_factory=dict)  # kind -> exit code -> cases
    changed: list[str] = field(default_factory=list)  # exit 2 with the store changed
    invalid: list[str] = field(default_factory=list)  # kinds whose store failed validate

    @property
    def held(self) -> int:
        return sum(n for c in self.codes.values() for code, n in c.items() if code in "02")

    @property
    def cases(self) -> int:
        return sum(sum(c.values()) for c in self.codes.values())


def run_fuzz(seed: int, per_kind: int) -> Fuzz:
    """The fuzzed corpus through `finkg ingest`, one store per loader (seeded with its valid
    inputs), then `finkg validate` on each store."""
    from click.testing import CliRunner

    from finkg.cli import cli
    from tests.fuzz_inputs import KINDS, SEEDS, Case, cases, run_case, validate

    fuzz = Fuzz(seed, per_kind)
    with tempfile.TemporaryDirectory() as tmp:
        root, envs = Path(tmp), {}
        for kind in KINDS:
            env = {"FINKG_HOME": str(root / kind / "home"), "FINKG_STORE": str(root / kind / "s")}
            CliRunner().invoke(cli, ["init"], env=env)
            for i, (files, args) in enumerate(SEEDS[kind]):
                seeded = Case(kind, {n: t.encode() for n, t in files.items()}, args, False)
                run_case(seeded, root / kind / f"seed-{i}", env)
            envs[kind] = env
            fuzz.codes[kind] = Counter()
        for i, case in enumerate(cases(seed, per_kind)):
            outcome = run_case(case, root / f"case-{i}", envs[case.kind])
            code = "traceback" if outcome.traceback else str(outcome.exit_code)
            fuzz.codes[case.kind][code] += 1
            if not outcome.unchanged:
                fuzz.changed.append(case.name)
        fuzz.invalid = [k for k in KINDS if validate(envs[k])[0] != 0]
    return fuzz


def fuzz_lines(fuzz: Fuzz) -> list[str]:
    codes = sorted({c for counts in fuzz.codes.values() for c in counts})
    lines = [
        "",
        f"## Fuzzed input ({fuzz.per_kind} cases per loader, seed {fuzz.seed}, "
        "`tests/fuzz_inputs.py` through `finkg ingest`)",
        "",
        "| loader | cases | " + " | ".join(f"exit {c}" for c in codes) + " |",
        "|---|---|" + "---|" * len(codes),
    ]
    for kind, counts in fuzz.codes.items():
        cells = " | ".join(str(counts.get(c, 0)) for c in codes)
        lines.append(f"| {kind} | {sum(counts.values())} | {cells} |")
    lines += [
        "",
        f"Held (exit 0 or 2): {fuzz.held} of {fuzz.cases}. Exit 2 with the store changed: "
        f"{len(fuzz.changed)} (target 0). Stores failing `finkg validate` after the "
        f"accepted inputs: {len(fuzz.invalid)} (target 0)"
        + (f": {', '.join(fuzz.invalid)}" if fuzz.invalid else "")
        + ".",
    ]
    lines += [f"- changed on exit 2: {name}" for name in fuzz.changed]
    return lines


def report(
    tallies: dict[str, Tally],
    load: dict[str, object],
    seconds: float,
    shacl: dict[str, list[str]] | None = None,
    fuzz: Fuzz | None = None,
) -> str:
    lines = [
        "# Reliability report",
        "",
        f"Generated {dt.datetime.now(dt.UTC).isoformat(timespec='seconds')} by "
        f"`python -m benchmarks.reliability` in {seconds:.0f} s.",
        "",
        "| check | tried | held | failed (target 0) |",
        "|---|---|---|---|",
    ]
    for name, t in tallies.items():
        lines.append(f"| {name} | {t.tried} | {t.held} | {t.tried - t.held} |")
    lines += [
        "",
        "Injection attempts that succeeded: "
        f"{tallies['injection attempt held'].tried - tallies['injection attempt held'].held}"
        " (target 0). Isolation violations: "
        f"{tallies['isolation held'].tried - tallies['isolation held'].held} (target 0).",
    ]
    if shacl is not None:
        total = sum(len(v) for v in shacl.values())
        lines += [
            "",
            f"## SHACL: the W3C core suite through finkg's compiler ({total} tests)",
            "",
            "| verdict | tests |",
            "|---|---|",
            f"| agrees (conforms and focus nodes) | {len(shacl['agree'])} |",
            f"| refused by name (exit 2) | {len(shacl['refused'])} |",
            f"| disagrees (target 0) | {len(shacl['disagree'])} |",
        ]
        lines += [f"- disagrees: {d}" for d in shacl["disagree"]]
    lines += [
        *(fuzz_lines(fuzz) if fuzz is not None else []),
        "",
        f"## `finkg serve` under load ({load['workers']} readers, {load['seconds']} s, "
        "an ingest writing through the server)",
        "",
        "| figure | value |",
        "|---|---|",
    ]
    lines += [f"| {k} | {v} |" for k, v in load.items()]
    lines += [
        "",
        "A half batch is a snapshot (one query) that shows an ingest commit without all its "
        "articles or articles without their commit; target 0. `store_states_seen` counts the "
        "distinct numbers of committed batches the readers saw, so reads overlapped writes.",
    ]
    failed = [n for t in tallies.values() for n in t.failed]
    if failed:
        lines += ["", "## Failed", "", *[f"- `{n}`" for n in failed]]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--fuzz-cases", type=int, default=40, help="fuzzed inputs per loader")
    parser.add_argument("--fuzz-seed", type=int, default=24)
    report_option(parser, "reliability.md")
    args = parser.parse_args()
    print(f"options: {vars(args)}")
    started = time.perf_counter()
    tallies = run_suites()
    for name, t in tallies.items():
        print(f"{name}: {t.held}/{t.tried}")
    shacl = shacl_suite()
    print("W3C SHACL core: " + ", ".join(f"{k} {len(v)}" for k, v in shacl.items()))
    fuzz = run_fuzz(args.fuzz_seed, args.fuzz_cases)
    for kind, counts in fuzz.codes.items():
        print(f"fuzz {kind}: {dict(sorted(counts.items()))}")
    print(
        f"fuzz: {fuzz.held}/{fuzz.cases} held, {len(fuzz.changed)} changed on exit 2, "
        f"{len(fuzz.invalid)} stores invalid"
    )
    with tempfile.TemporaryDirectory() as tmp:
        load = run_load(Path(tmp) / "store", workers=args.workers, seconds=args.seconds)
    summary = load.summary()
    for k, v in summary.items():
        print(f"load {k}: {v}")
    text = report(tallies, summary, time.perf_counter() - started, shacl, fuzz)
    write_report(args.report, text)
    print(f"wrote {args.report}")


if __name__ == "__main__":
    main()
