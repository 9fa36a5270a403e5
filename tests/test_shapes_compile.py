"""The SHACL compiler checks what it claims or refuses it: one regression test per bug of
issue 24 (inline Turtle), each compared with pyshacl where both engines apply."""

from __future__ import annotations

from pathlib import Path

import pyoxigraph as ox
import pytest
from click.testing import CliRunner

from finkg.cli import cli
from finkg.errors import InputError
from finkg.shapes.compile import ShapeCompileError
from finkg.shapes.validate import Report, read_shapes, validate_quads

PREFIXES = """@prefix ex: <http://example.org/> .
@prefix sh: <http://www.w3.org/ns/shacl#> .
@prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
"""


def _on_p(constraints: str) -> str:
    """A shape of ex:a whose property shape on ex:p has `constraints`."""
    return (
        f"ex:S a sh:NodeShape ; sh:targetNode ex:a ; sh:property [ sh:path ex:p ; {constraints} ] ."
    )


def _check(tmp_path: Path, shapes: str, data: str, *, exact: bool = True) -> dict[str, Report]:
    """`data` against `shapes` by both engines (pyshacl only where it is the reference)."""
    path = tmp_path / "shapes.ttl"
    path.write_text(PREFIXES + shapes)
    graph = read_shapes([path])
    quads = [
        ox.Quad(t.subject, t.predicate, t.object)
        for t in ox.parse(PREFIXES + data, format=ox.RdfFormat.TURTLE)
    ]
    return {
        engine: validate_quads(quads, shapes=graph, engine=engine, exact=exact)
        for engine in ("sparql", "pyshacl")
    }


def _foci(report: Report) -> set[str]:
    return {v.focus.rsplit("/", 1)[-1] for v in report.violations}


@pytest.mark.parametrize(
    "target",
    [
        "sh:targetNode ex:a, ex:b",
        "sh:targetSubjectsOf ex:p",
        "sh:targetObjectsOf ex:points",
        "a rdfs:Class",  # an implicit class target
        "a owl:Class",
    ],
)
def test_a_shape_without_sh_targetClass_is_checked_not_passed(tmp_path: Path, target: str) -> None:
    shapes = f"ex:S a sh:NodeShape ; {target} ; sh:property [ sh:path ex:p ; sh:maxCount 1 ] ."
    data = """ex:a a ex:S ; ex:p 1, 2 . ex:b a ex:S ; ex:p 1 .
              ex:x ex:points ex:a, ex:b ."""
    for report in _check(tmp_path, shapes, data).values():
        assert _foci(report) == {"a"}, report.text()


def test_sh_class_and_targets_follow_rdfs_subClassOf_stated_in_the_data(tmp_path: Path) -> None:
    shapes = """ex:S a sh:NodeShape ; sh:targetClass ex:Animal ;
        sh:property [ sh:path ex:owner ; sh:class ex:Person ] ."""
    data = """ex:Dog rdfs:subClassOf ex:Animal . ex:Puppy rdfs:subClassOf ex:Dog .
        ex:Student rdfs:subClassOf ex:Person .
        ex:rex a ex:Puppy ; ex:owner ex:ann .  ex:ann a ex:Student .
        ex:fido a ex:Dog ; ex:owner ex:rock . ex:rock a ex:Stone ."""
    for engine, report in _check(tmp_path, shapes, data).items():
        assert _foci(report) == {"fido"}, (engine, report.text())


def test_numbers_beyond_oxigraphs_ranges_give_no_false_violations(tmp_path: Path) -> None:
    shapes = """ex:S a sh:NodeShape ; sh:targetSubjectsOf ex:n ;
        sh:property [ sh:path ex:n ; sh:datatype xsd:integer ; sh:minInclusive 0 ] ;
        sh:property [ sh:path ex:d ; sh:datatype xsd:decimal ; sh:maxExclusive 2 ;
                      sh:lessThan ex:cap ] ."""
    data = """ex:big ex:n 99999999999999999999 ; ex:d 1.0000000000000000000001 ;
                     ex:cap 1.0000000000000000000002 .
              ex:neg ex:n -99999999999999999999 ; ex:d 2.0000000000000000000001 ;
                     ex:cap 3 ."""
    reports = _check(tmp_path, shapes, data)
    for report in reports.values():
        assert _foci(report) == {"neg"}, report.text()
    components = {v.message for v in reports["sparql"].violations}
    assert components == {"value is not >= 0", "value is not < 2"}


@pytest.mark.parametrize("datatype", ["xsd:byte", "xsd:dateTimeStamp", "xsd:unsignedInt"])
def test_a_datatype_oxigraph_stores_as_another_is_refused_in_a_shape(
    tmp_path: Path, datatype: str
) -> None:
    shapes = _on_p(f"sh:datatype {datatype}")
    with pytest.raises(ShapeCompileError, match=f"example.org/p.*{datatype[4:]}") as e:
        _check(tmp_path, shapes, "ex:a ex:p 1 .")
    assert e.value.exit_code == 2


@pytest.mark.parametrize("literal", ['"1"^^xsd:byte', '"2020-01-01T00:00:00Z"^^xsd:dateTimeStamp'])
def test_a_data_literal_oxigraph_retypes_is_refused_when_checked_exactly(
    tmp_path: Path, literal: str
) -> None:
    shapes = _on_p("sh:minCount 1")
    with pytest.raises(InputError, match="stores rewritten"):
        _check(tmp_path, shapes, f"ex:a ex:p {literal} .")


def test_a_non_canonical_literal_is_refused_only_where_a_check_reads_its_form(
    tmp_path: Path,
) -> None:
    counts = _on_p("sh:maxCount 1")
    pattern = _on_p('sh:pattern "0$"')
    for report in _check(tmp_path, counts, "ex:a ex:p 4.0 .").values():
        assert report.conforms  # "4.0" is stored as "4": the count is the same
    with pytest.raises(InputError, match=r"4\.0"):
        _check(tmp_path, pattern, "ex:a ex:p 4.0 .")
    with pytest.raises(InputError, match=r"4\.0"):  # "4.0" and "4" would become one value
        _check(tmp_path, counts, "ex:a ex:p 4.0, 4.00 .")
    sparql = _check(tmp_path, pattern, "ex:a ex:p 4.0 .", exact=False)["sparql"]
    assert not sparql.conforms  # as the store holds it: "4" does not end in 0


@pytest.mark.parametrize(
    ("pattern", "text", "matches"),
    [
        (r"^\\w+$", "a_b", False),  # "_" is punctuation to XPath, a word character to Rust
        (r"^\\w+$", "a$b", True),
        (r"^a.b$", "a\\rb", False),  # XPath's "." leaves out \r
        (r"^\\s$", "\\f", False),  # XPath's \s is space, tab, CR, LF only
        (r"^[\\w]+$", "ab", True),
    ],
)
def test_sh_pattern_reads_xpath_classes_as_xpath_does(
    tmp_path: Path, pattern: str, text: str, matches: bool
) -> None:
    shapes = _on_p(f'sh:pattern "{pattern}"')
    report = _check(tmp_path, shapes, f'ex:a ex:p "{text}" .')["sparql"]
    assert report.conforms is matches, report.text()


@pytest.mark.parametrize(
    ("constraint", "feature"),
    [
        ("sh:node ex:T", "sh:node"),
        ("sh:not [ sh:datatype xsd:string ]", "sh:not"),
        ("sh:or ( [ sh:datatype xsd:string ] )", "sh:or"),
        ("sh:qualifiedValueShape [ sh:datatype xsd:string ]", "qualified value shapes"),
        ('sh:pattern "[a-z-[aeiou]]"', "character class subtraction"),
        ('sh:pattern "(a"', "cannot compile"),
        ('sh:pattern "\\\\bword"', "escape"),
        ("sh:datatype xsd:NCName", "lexical space"),
        ("sh:in ( [] )", "blank node"),
        ("sh:rule [ ]", "sh:rule"),
        ("sh:someFutureParameter 1", "sh:someFutureParameter"),
    ],
)
def test_what_the_compiler_does_not_implement_is_refused_naming_shape_and_feature(
    tmp_path: Path, constraint: str, feature: str
) -> None:
    shapes = (
        "ex:S a sh:NodeShape ; sh:targetNode ex:a ; sh:property ex:P . "
        f"ex:P sh:path ex:p ; {constraint} ."
    )
    with pytest.raises(ShapeCompileError) as e:
        _check(tmp_path, shapes, "ex:a ex:p 1 .")
    assert "http://example.org/P" in str(e.value) and feature in str(e.value)


def test_cli_validate_with_unimplemented_shapes_exits_2_naming_them(tmp_path: Path) -> None:
    (tmp_path / "shapes.ttl").write_text(
        PREFIXES + "ex:S a sh:NodeShape ; sh:targetNode ex:a ; sh:xone ( ex:T ex:U ) ."
    )
    (tmp_path / "data.ttl").write_text(PREFIXES + "ex:a ex:p 1 .")
    args = [
        "validate",
        "--file",
        str(tmp_path / "data.ttl"),
        "--shapes",
        str(tmp_path / "shapes.ttl"),
    ]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, result.output
    assert "http://example.org/S" in result.output and "sh:xone" in result.output
    assert "Traceback" not in result.output
    result = CliRunner().invoke(cli, [*args, "--engine", "pyshacl"])
    assert result.exit_code in (0, 1), result.output  # the reference engine checks it


def test_cli_validate_with_shapes_reports_violations(tmp_path: Path) -> None:
    (tmp_path / "shapes.ttl").write_text(
        PREFIXES + "ex:S sh:targetSubjectsOf ex:p ; sh:property [ sh:path ex:p ; sh:maxCount 1 ] ."
    )
    (tmp_path / "data.ttl").write_text(PREFIXES + "ex:a ex:p 1, 2 . ex:b ex:p 1 .")
    args = [
        "validate",
        "--json",
        "--file",
        str(tmp_path / "data.ttl"),
        "--shapes",
        str(tmp_path / "shapes.ttl"),
    ]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1, result.output
    assert "http://example.org/a" in result.output and "http://example.org/b" not in result.output
