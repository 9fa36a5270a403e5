"""The layout shows the architecture (DESIGN.md §2): one folder per job under finkg/tasks/,
no job folder importing another, no import circle anywhere in finkg (a package's
`__init__` counts: importing `a.b.c` runs `a.b`), no module over 400 lines. Imports are
read with `ast` (`import x`, `from x import y`, relative imports, and imports inside
functions or `if TYPE_CHECKING:` blocks alike), so nothing is imported."""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[1]
JOBS = ("impact", "movement", "qa", "recommend")
MAX_LINES = 400


def modules(root: Path, package: str = "finkg") -> dict[str, Path]:
    """Every module under `root/package` by dotted name (a package by its own name)."""
    found = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def imported(name: str, path: Path) -> set[str]:
    """The dotted names a module imports; `from a import b` yields `a` and `a.b` (b may be a
    module), a relative import is resolved against the module's package."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - (node.level - 1)])
                source = f"{base}.{node.module}" if node.module else base
            else:
                source = node.module or ""
            names.add(source)
            names.update(f"{source}.{alias.name}" for alias in node.names if alias.name != "*")
    return names


def job_of(name: str, package: str = "finkg") -> str | None:
    parts = name.split(".")
    if len(parts) >= 3 and parts[:2] == [package, "tasks"] and parts[2] in JOBS:
        return parts[2]
    return None


def cross_job_imports(root: Path, package: str = "finkg") -> list[str]:
    """`module -> imported` for every import from one job's folder into another's."""
    bad = []
    for name, path in modules(root, package).items():
        job = job_of(name, package)
        if job is None:
            continue
        for target in sorted(imported(name, path)):
            other = job_of(target, package)
            if other is not None and other != job:
                bad.append(f"{name} -> {target}")
    return bad


def import_circles(
    root: Path, package: str = "finkg", within: str | None = None
) -> list[list[str]]:
    """The import circles (strongly connected modules) among the modules under `within`
    (default: the whole package). Importing `a.b.c` imports the packages `a.b` and `a` too,
    unless the importer is inside them (a package is initialised before its modules)."""
    found = modules(root, package)
    prefix = within or package
    inside = {n: p for n, p in found.items() if n == prefix or n.startswith(prefix + ".")}
    graph = nx.DiGraph()
    graph.add_nodes_from(inside)
    for name, path in inside.items():
        for target in imported(name, path):
            parts = target.split(".")
            for i in range(1, len(parts) + 1):
                step = ".".join(parts[:i])
                if step in inside and step != name and not name.startswith(step + "."):
                    graph.add_edge(name, step)
    return sorted(sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1)


def job_cycles(root: Path, job: str, package: str = "finkg") -> list[list[str]]:
    """The import circles among the modules of one job folder."""
    return import_circles(root, package, f"{package}.tasks.{job}")


def long_modules(root: Path, package: str = "finkg") -> list[str]:
    return [
        f"{path.relative_to(root)}: {n} lines"
        for path in modules(root, package).values()
        if (n := len(path.read_text().splitlines())) > MAX_LINES
    ]


def test_each_job_has_its_folder() -> None:
    tasks = ROOT / "finkg" / "tasks"
    folders = {p.parent.name for p in tasks.glob("*/__init__.py")}
    assert folders == set(JOBS)
    assert (tasks / "records.py").is_file()  # shared by the jobs, so beside their folders


def test_no_job_folder_imports_another() -> None:
    assert cross_job_imports(ROOT) == []


@pytest.mark.parametrize("job", JOBS)
def test_no_import_circle_inside_a_job_folder(job: str) -> None:
    assert job_cycles(ROOT, job) == []


def test_no_import_circle_in_finkg() -> None:
    assert import_circles(ROOT) == []


def test_no_import_circle_in_the_benchmarks() -> None:
    assert import_circles(ROOT, "benchmarks") == []


def private_imports(root: Path, package: str) -> list[str]:
    """`module: name` for each private name (`_x`) imported from another module, and each
    `sys.path` edit: a benchmark uses finkg and its siblings through what they publish."""
    bad = []
    for name, path in modules(root, package).items():
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.ImportFrom):
                bad += [f"{name}: {a.name}" for a in node.names if a.name.startswith("_")]
            elif isinstance(node, ast.Attribute) and ast.unparse(node).startswith("sys.path."):
                bad.append(f"{name}: {ast.unparse(node)}")
    return sorted(bad)


def test_benchmarks_are_a_package_that_uses_public_names() -> None:
    assert (ROOT / "benchmarks" / "__init__.py").is_file()
    assert private_imports(ROOT, "benchmarks") == []


def test_no_module_over_400_lines() -> None:
    """A ceiling, not a target: a module holds one idea, and one past 400 lines holds two."""
    assert long_modules(ROOT) == []
    assert long_modules(ROOT, "benchmarks") == []


def test_the_checks_catch_what_they_are_for(tmp_path: Path) -> None:
    """A planted tree: each kind of import that breaks a rule is caught."""
    tasks = tmp_path / "pkg" / "tasks"
    files = {
        "pkg/__init__.py": "",
        "pkg/tasks/__init__.py": "",
        "pkg/tasks/records.py": "",
        "pkg/tasks/impact/__init__.py": "",
        "pkg/tasks/impact/a.py": "import pkg.tasks.qa.b\n",
        "pkg/tasks/impact/c.py": "def f():\n    from ...tasks.movement import d\n",
        "pkg/tasks/impact/e.py": "from pkg.tasks import recommend, records\n",
        "pkg/tasks/impact/ok.py": "from pkg.tasks.records import x\nfrom . import a\n",
        "pkg/tasks/qa/__init__.py": "",
        "pkg/tasks/qa/b.py": "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from pkg.tasks.qa.c import X\n",
        "pkg/tasks/qa/c.py": "from .b import Y\n",
        "pkg/tasks/movement/__init__.py": "",
        "pkg/tasks/movement/d.py": "",
        "pkg/tasks/recommend/__init__.py": "",
        "pkg/long.py": "x = 1\n" * (MAX_LINES + 1),
        # a circle through a package's __init__: ing -> ing.prices -> der -> ing (ing.core)
        "pkg/ing/__init__.py": "from pkg.ing import core, prices\n",
        "pkg/ing/core.py": "",
        "pkg/ing/prices.py": "def f():\n    from pkg import der\n",
        "pkg/der/__init__.py": "from pkg.ing.core import Item\n",
        "pkg/bench.py": "import sys\nsys.path.insert(0, '.')\nfrom pkg.ing.core import _x\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    assert tasks.is_dir()
    assert cross_job_imports(tmp_path, "pkg") == [
        "pkg.tasks.impact.a -> pkg.tasks.qa.b",
        "pkg.tasks.impact.c -> pkg.tasks.movement",
        "pkg.tasks.impact.c -> pkg.tasks.movement.d",
        "pkg.tasks.impact.e -> pkg.tasks.recommend",
    ]
    assert job_cycles(tmp_path, "qa", "pkg") == [["pkg.tasks.qa.b", "pkg.tasks.qa.c"]]
    assert job_cycles(tmp_path, "impact", "pkg") == []
    assert import_circles(tmp_path, "pkg") == [
        ["pkg.der", "pkg.ing", "pkg.ing.prices"],
        ["pkg.tasks.qa.b", "pkg.tasks.qa.c"],
    ]
    assert private_imports(tmp_path, "pkg") == ["pkg.bench: _x", "pkg.bench: sys.path.insert"]
    assert long_modules(tmp_path, "pkg") == [f"pkg/long.py: {MAX_LINES + 1} lines"]
