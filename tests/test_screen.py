"""The shape screen (`shapes/screen.py`) may only pass what the SPARQL checks pass: every
invalid fixture is held back at the shape it breaks, clean data passes, and every lexical
form, comparison and pattern it accepts is one Oxigraph's SPARQL accepts too."""

from __future__ import annotations

from pathlib import Path

import pyoxigraph as ox
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from finkg.shapes import castable, screen
from finkg.shapes.validate import FSH, finkg_checks, validate_quads

DATA = Path(__file__).parent / "data"
INVALID = sorted((DATA / "invalid").glob("*.ttl"))
VALID = sorted((DATA / "valid").glob("*.ttl"))
XSD = "http://www.w3.org/2001/XMLSchema#"


def _statements(path: Path) -> list[tuple]:
    triples = ox.parse(path=str(path), format=ox.RdfFormat.TURTLE)
    return [(t.subject, t.predicate, t.object) for t in triples]


@pytest.mark.parametrize("path", INVALID, ids=lambda p: p.stem)
def test_each_invalid_file_is_held_back_at_the_shape_it_breaks(path: Path) -> None:
    expected = path.read_text().splitlines()[0].removeprefix("# breaks: ").strip()
    statements = _statements(path)
    assert not screen.surely_conforms(statements)
    doubted = {check.shape.replace(FSH, "fsh:") for _, check in screen.doubts(statements)}
    assert expected in doubted


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.stem)
def test_valid_data_passes_except_where_a_sparql_constraint_must_decide(path: Path) -> None:
    statements = _statements(path)
    doubts = list(screen.doubts(statements))
    assert doubts, "the valid fixture has outputs, whose SHACL-SPARQL constraints need a store"
    assert {check.component for _, check in doubts} == {"SPARQL"}
    # without the nodes those constraints target, the screen passes the rest by itself
    sparql_classes = {c for ch in finkg_checks() if ch.component == "SPARQL" for c in ch.classes}
    held = {s for s, p, o in statements if p.value.endswith("#type") and o.value in sparql_classes}
    rest = [st for st in statements if st[0] not in held]
    assert len(rest) > 100
    assert screen.surely_conforms(rest)
    assert validate_quads([ox.Quad(s, p, o) for s, p, o in rest]).conforms


def _casts(datatype: str, lexical: str) -> bool:
    query = f'SELECT ?v WHERE {{ BIND (<{datatype}>("{lexical}") AS ?v) }}'
    return next(iter(ox.Store().query(query)))["v"] is not None


PROBES = {
    "integer": ["12", "-3", "+4", "007", "1.0", "", "1e3", " 1", "١٢"],
    "decimal": ["1.5", "-0.25", ".5", "5.", "+3", "1e3", "NaN", "1,5"],
    "double": ["1e3", "-2.5E-3", "INF", "-INF", "+INF", "NaN", "1.", ".5e1", "e3", "1e400"],
    "boolean": ["true", "false", "1", "0", "TRUE", "yes"],
    "date": ["2020-02-29", "2019-02-29", "2020-13-01", "2020-01-01Z", "2020-01-01+05:30", "20-1-1"],
    "dateTime": [
        "2020-04-30T16:30:00-04:00",
        "2020-04-30T16:30:00Z",
        "2020-04-30T16:30:00.123456+00:00",
        "2020-04-30T16:30:00.1234567+00:00",
        "2020-04-30T16:30:00",
        "2020-04-30T24:00:00Z",
        "2020-02-30T10:00:00Z",
        "2020-04-30 16:30:00Z",
        "2020-04-30T16:30:00+15:00",
        "2020-04-30T16:30:60Z",
    ],
}


@pytest.mark.parametrize("name", sorted(PROBES))
def test_every_lexical_form_the_screen_accepts_is_castable(name: str) -> None:
    accepts = screen._LEXICAL[XSD + name]
    assert accepts is not None
    accepted = [p for p in PROBES[name] if accepts(p)]
    assert accepted, f"the screen accepts no {name} at all"
    assert [p for p in accepted if not _casts(XSD + name, p)] == []


def test_the_common_lexical_forms_are_accepted() -> None:
    assert screen._LEXICAL[XSD + "dateTime"]("2020-04-30T16:30:00-04:00")  # type: ignore[misc]
    assert screen._LEXICAL[XSD + "decimal"]("-0.25")  # type: ignore[misc]
    assert screen._LEXICAL[XSD + "string"] is None  # every string is well formed


PAIRS = [
    (("1", "integer"), ">=", ("0", "integer")),
    (("0.5", "decimal"), "<=", ("1", "integer")),
    (("2.5", "double"), ">", ("2.4", "decimal")),
    (("0.1", "decimal"), "<", ("0.1", "double")),
    (("NaN", "double"), ">=", ("0", "integer")),
    (("2020-01-02", "date"), "<", ("2020-01-03", "date")),
    (("2020-01-02T10:00:00-05:00", "dateTime"), "<", ("2020-01-02T16:00:00Z", "dateTime")),
    (("2020-01-02T10:00:00", "dateTime"), "<", ("2020-01-02T16:00:00Z", "dateTime")),
    (("2020-01-02T10:00:00Z", "dateTime"), "<", ("2020-01-03", "date")),
    (("abc", "string"), "<", ("abd", "string")),
    (("1", "integer"), "<", ("2", "string")),
    (("5", "integer"), "<=", ("5", "integer")),
    (("5.0", "integer"), ">=", ("0", "integer")),
    (
        ("2020-01-01T00:00:00.0000009Z", "dateTime"),
        "<=",
        ("2020-01-01T00:00:00.0000001Z", "dateTime"),
    ),
]


@pytest.mark.parametrize(("a", "op", "b"), PAIRS, ids=lambda x: str(x))
def test_a_comparison_the_screen_passes_holds_in_sparql(
    a: tuple[str, str], op: str, b: tuple[str, str]
) -> None:
    passed, holds = _screen_and_sparql(a[0], a[1], op, b[0], b[1])
    assert not passed or holds


def _screen_and_sparql(a: str, a_type: str, op: str, b: str, b_type: str) -> tuple[bool, bool]:
    """Whether the screen passes `a op b` (typed literals), and whether SPARQL holds it."""
    left = ox.Literal(a, datatype=ox.NamedNode(XSD + a_type))
    right = ox.Literal(b, datatype=ox.NamedNode(XSD + b_type))
    passed = screen._compare(screen._OPERATORS[op], screen._value(left), screen._value(right))
    query = f"SELECT (COALESCE({left} {op} {right}, false) AS ?r) WHERE {{}}"
    return passed, next(iter(ox.Store().query(query)))["r"].value == "true"


def test_the_screen_passes_the_plain_comparisons() -> None:
    def passed(a: str, op: str, b: str, datatype: str = "integer") -> bool:
        left = screen._value(ox.Literal(a, datatype=ox.NamedNode(XSD + datatype)))
        right = screen._value(ox.Literal(b, datatype=ox.NamedNode(XSD + datatype)))
        return screen._compare(screen._OPERATORS[op], left, right)

    assert passed("5", ">=", "0")
    assert passed("2020-01-02", "<", "2020-01-03", "date")
    assert not passed("-1", ">=", "0")


@pytest.mark.parametrize(
    ("pattern", "text"),
    [
        ("(Z|[+-][0-9]{2}:[0-9]{2})$", "2020-01-01T00:00:00Z"),
        ("(Z|[+-][0-9]{2}:[0-9]{2})$", "2020-01-01T00:00:00Z\n"),
        ("^[A-Z0-9][A-Z0-9.\\-]{0,9}$", "BRK.B"),
        ("^[A-Z0-9][A-Z0-9.\\-]{0,9}$", "brk.b"),
        ("^sha256:[0-9a-f]{64}$", "sha256:" + "a" * 64),
        ("^a.c$", "a\rc"),
        ("^\\s$", "\u00a0"),
        ("^\\w+$", "a_b"),
        ("^[^\\w]$", "+"),
    ],
)
def test_a_pattern_the_screen_passes_matches_in_sparql(pattern: str, text: str) -> None:
    value = ox.Literal(text)
    passed = screen._pattern(pattern, None)(value)
    query = f"SELECT (REGEX({value}, {ox.Literal(pattern)}) AS ?r) WHERE {{}}"
    matches = next(iter(ox.Store().query(query)))["r"].value == "true"
    assert not passed or matches


def test_patterns_with_xpath_only_syntax_are_left_to_sparql() -> None:
    assert not screen._pattern("^\\i\\c*$", None)(ox.Literal("abc"))
    assert not screen._pattern("^[a-z-[aeiou]]+$", None)(ox.Literal("bcd"))
    assert not screen._pattern("^abc$", "q")(ox.Literal("abc"))
    assert screen._pattern("^abc$", "i")(ox.Literal("ABC"))


BOUNDS = {
    "integer": (
        [str(castable.INTEGER_MAX), str(castable.INTEGER_MIN), "+0009223372036854775807"],
        [str(castable.INTEGER_MAX + 1), str(castable.INTEGER_MIN - 1), "1" + "0" * 25],
    ),
    "decimal": (
        [
            str(castable.DECIMAL_MAX),
            str(castable.DECIMAL_MIN),
            "0." + "0" * 17 + "1",
            "0." + "1" * 18 + "000",
            "-0." + "9" * 18,
        ],
        [
            "170141183460469231731.687303715884105728",  # one step beyond each bound
            "-170141183460469231731.687303715884105729",
            "0." + "0" * 18 + "1",  # 19 places
            "0." + "0" * 29 + "1",  # 1e-30
            "1" + "0" * 25,  # 1e25
            "1" + "0" * 300,  # 1e300
        ],
    ),
}


@pytest.mark.parametrize("name", sorted(BOUNDS))
def test_the_numeric_limits_are_oxigraphs(name: str) -> None:
    """castable.py's limits are where Oxigraph's casts stop: every value at a bound casts
    and the screen accepts it; every value one step beyond fails the cast and the screen."""
    inside, beyond = BOUNDS[name]
    accepts = screen._LEXICAL[XSD + name]
    assert accepts is not None
    assert [v for v in inside if not (_casts(XSD + name, v) and accepts(v))] == []
    assert [v for v in beyond if _casts(XSD + name, v) or accepts(v)] == []


def test_a_decimal_oxigraph_cannot_hold_is_not_compared() -> None:
    """`1e25` as xsd:decimal is a SPARQL error in a comparison (a minInclusive check fails
    on it), so the screen must not pass `1e25 >= 0`."""
    for big in BOUNDS["decimal"][1]:
        passed, holds = _screen_and_sparql(big.lstrip("-"), "decimal", ">=", "0", "integer")
        assert not passed and not holds


LEXICAL = st.one_of(
    st.from_regex(r"[+-]?[0-9]{1,3}(\.[0-9]{0,3})?([eE][+-]?[0-9]{1,3})?", fullmatch=True),
    st.from_regex(r"[+-]?[0-9]{15,24}(\.[0-9]{14,22})?", fullmatch=True),  # near the limits
    st.from_regex(r"[+-]?0\.[0-9]{16,20}", fullmatch=True),  # 18 places, and beyond
    st.from_regex(
        r"[0-9]{4}-[01][0-9]-[0-3][0-9](T[0-2][0-9]:[0-6][0-9]:[0-6][0-9](\.[0-9]{1,8})?)?"
        r"(Z|[+-][01][0-9]:[0-6][0-9])?",
        fullmatch=True,
    ),
    st.sampled_from(["INF", "-INF", "+INF", "NaN", "true", "0", "1", ""]),
    st.text(alphabet="0123456789.-+eEZT: ", max_size=12),
)
DATATYPES = st.sampled_from(
    ["integer", "decimal", "double", "float", "date", "dateTime", "string", "boolean"]
)


@settings(max_examples=300, deadline=None)
@given(
    LEXICAL, DATATYPES, st.sampled_from(["<", "<=", ">", ">="]), LEXICAL, DATATYPES, st.booleans()
)
def test_whatever_the_literals_a_comparison_the_screen_passes_holds_in_sparql(
    a: str, a_type: str, op: str, b: str, b_type: str, same_type: bool
) -> None:
    b_type = a_type if same_type else b_type  # comparable pairs often enough to matter
    passed, holds = _screen_and_sparql(a, a_type, op, b, b_type)
    assert not passed or holds


@settings(max_examples=300, deadline=None)
@given(LEXICAL, DATATYPES)
def test_whatever_the_form_one_the_screen_accepts_casts(lexical: str, name: str) -> None:
    accepts = screen._LEXICAL[XSD + name]
    if accepts is not None and accepts(lexical):
        assert _casts(XSD + name, lexical)


def test_a_triple_term_value_is_left_to_sparql() -> None:
    """RDF 1.2 triple terms (an `ingest rdf` file may hold them) have no string form to
    measure or match: the screen doubts them instead of failing."""
    g = ox.NamedNode("https://e.org/s")
    triple = ox.Triple(g, ox.NamedNode("https://e.org/p"), ox.Literal("o"))
    source = ox.NamedNode("https://e.org/doc")
    statements = [
        (
            source,
            ox.NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type"),
            ox.NamedNode("https://w3id.org/finkg/ns#SourceDocument"),
        ),
        (source, ox.NamedNode("https://w3id.org/finkg/ns#contentHash"), triple),
        (source, ox.NamedNode("http://purl.org/dc/terms/source"), g),
    ]
    doubted = {check.component for _, check in screen.doubts(statements)}
    assert "Pattern" in doubted
