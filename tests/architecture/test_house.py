"""The house rules that import-linter cannot state: no import circles, short parameter
lists, modules of one job, and a docstring on every module (docs/architecture.md)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("engine", "ui", "cli")
MAX_PARAMETERS = 12
MAX_LINES = 500
ONE_PIECE = "one piece"  # the phrase a long module's docstring uses to say why it is one


def _modules() -> Iterator[Path]:
    for package in PACKAGES:
        yield from sorted((ROOT / package).rglob("*.py"))
    yield ROOT / "main.py"


def _strongly_connected(graph: grimp.ImportGraph, modules: set[str]) -> list[list[str]]:
    """Import circles: the strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(start: str) -> None:
        # iterative, so a deep import chain cannot hit the recursion limit
        work = [(start, iter(sorted(graph.find_modules_directly_imported_by(start) & modules)))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    imported = graph.find_modules_directly_imported_by(child) & modules
                    work.append((child, iter(sorted(imported))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    circles.append(sorted(component))

    for module in sorted(modules):
        if module not in index:
            visit(module)
    return circles


def test_no_import_circle_in_engine_ui_or_cli():
    graph = grimp.build_graph(*PACKAGES)
    modules = {m for m in graph.modules if m.split(".")[0] in PACKAGES}
    assert _strongly_connected(graph, modules) == []


def test_the_circle_finder_finds_a_circle():
    graph = grimp.ImportGraph()
    for name in ("a", "a.x", "a.y", "a.z"):
        graph.add_module(name)
    graph.add_import(importer="a.x", imported="a.y")
    graph.add_import(importer="a.y", imported="a.x")
    graph.add_import(importer="a.z", imported="a.x")
    assert _strongly_connected(graph, {"a.x", "a.y", "a.z"}) == [["a.x", "a.y"]]


def _parameters(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    a = node.args
    names = [*a.posonlyargs, *a.args, *a.kwonlyargs]
    count = len(names) + (a.vararg is not None) + (a.kwarg is not None)
    return count - (1 if names and names[0].arg in ("self", "cls") else 0)


def _public_functions(tree: ast.Module) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node
        elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    yield item


@pytest.mark.parametrize("path", list(_modules()), ids=lambda p: str(p.relative_to(ROOT)))
def test_module_shape(path: Path):
    text = path.read_text(encoding="utf-8")
    tree = ast.parse(text)
    docstring = ast.get_docstring(tree)
    assert docstring, "every module says what it is for and why in a docstring"
    lines = len(text.splitlines())
    assert lines <= MAX_LINES or ONE_PIECE in docstring.lower(), (
        f"{lines} lines: split it by job, or say in the docstring why it is {ONE_PIECE}"
    )
    long = [
        f"{f.name} ({_parameters(f)})"
        for f in _public_functions(tree)
        if not f.name.startswith("_") and _parameters(f) > MAX_PARAMETERS
    ]
    assert long == [], f"more than {MAX_PARAMETERS} parameters: group them"
