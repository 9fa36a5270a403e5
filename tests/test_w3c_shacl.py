"""The W3C SHACL core suite through finkg's SHACL compiler: every test agrees with its
expected report (conforms, and the focus nodes with results) or is refused by name; none
disagrees silently (tests/w3c_shacl.py reads the manifests)."""

from __future__ import annotations

from collections import Counter

import pytest

from tests.w3c_shacl import Case, cases, run

CASES = list(cases())


def test_the_suite_has_every_core_test() -> None:
    assert len(CASES) == 98
    assert len({c.name for c in CASES}) == 98


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_each_case_agrees_or_is_refused_by_name(case: Case) -> None:
    outcome = run(case)
    assert outcome.verdict in ("agree", "refused"), outcome.detail
    if outcome.verdict == "refused":  # the message names the shape (or literal) and feature
        assert outcome.detail.startswith(("shape ", "data: ")), outcome.detail
        assert " uses " in outcome.detail or "stores rewritten" in outcome.detail


def test_what_is_refused_is_only_what_the_readme_lists() -> None:
    """Refusals stay the features the README names: the logical and qualified-shape
    components, xsd:byte, and literals Oxigraph rewrites; everything else agrees."""
    outcomes = [run(c) for c in CASES]
    verdicts = Counter(o.verdict for o in outcomes)
    assert verdicts["disagree"] == 0
    assert verdicts["agree"] >= 74, verdicts
    features = ("sh:node", "sh:not", "sh:and", "sh:or", "sh:xone", "qualified value shapes")
    for o in outcomes:
        if o.verdict == "refused":
            assert any(f in o.detail for f in features) or "Oxigraph stores" in o.detail, o.detail
