"""A validation report: whether the data conforms, and each violation found."""

from __future__ import annotations

from dataclasses import dataclass, field

FSH = "https://w3id.org/finkg/shapes#"


@dataclass(frozen=True)
class Violation:
    focus: str
    shape: str
    message: str
    path: str | None = None
    value: str | None = None
    severity: str = "Violation"


@dataclass(frozen=True)
class Report:
    conforms: bool
    violations: list[Violation] = field(default_factory=list)
    triples: int = 0

    def text(self, *, limit: int = 50) -> str:
        """A readable report: one block per violation (focus node, path, message)."""
        if self.conforms:
            return f"conforms: {self.triples} triples checked against the shapes"
        lines = [f"{len(self.violations)} violation(s) in {self.triples} triples:"]
        for v in self.violations[:limit]:
            lines.append(f"- {v.severity} of {_short(v.shape)}")
            lines.append(f"  focus node: {v.focus}")
            if v.path:
                lines.append(f"  path: {v.path}")
            if v.value is not None:
                lines.append(f"  value: {v.value}")
            lines.append(f"  message: {v.message}")
        if len(self.violations) > limit:
            lines.append(f"... and {len(self.violations) - limit} more")
        return "\n".join(lines)


def _short(iri: str) -> str:
    return "fsh:" + iri[len(FSH) :] if iri.startswith(FSH) else iri
