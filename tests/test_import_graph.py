"""The library's import graph (from the ast of every module): no cycle, and no upward arrow from the layers below
(genomics, reasoners' weights) to the layers above (reasoners, study, cli)."""

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "fgpo_lib"


def module_name(path: Path) -> str:
    parts = path.relative_to(PKG.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports() -> dict[str, set[str]]:
    """``module -> the fgpo_lib modules it imports`` (at any depth of its body, function-level imports included)."""
    mods = {module_name(p): p for p in PKG.rglob("*.py")}
    graph = {}
    for name, path in mods.items():
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        deps = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
                target = ".".join([*base, *([node.module] if node.module else [])])
                for alias in node.names:
                    full = f"{target}.{alias.name}"
                    deps.add(full if full in mods else target)
            elif isinstance(node, ast.Import):
                deps |= {a.name for a in node.names}
        graph[name] = {d for d in deps if d in mods and d != name}
    return graph


def test_no_import_cycle():
    graph = imports()
    state: dict[str, int] = {}

    def visit(node, stack):
        state[node] = 1
        for dep in graph[node]:
            if state.get(dep) == 1:
                raise AssertionError("import cycle: " + " -> ".join([*stack[stack.index(dep):], dep]))
            if dep not in state:
                visit(dep, [*stack, dep])
        state[node] = 2

    for node in graph:
        if node not in state:
            visit(node, [node])


def test_lower_layers_do_not_import_upper_ones():
    graph = imports()
    upward = [(m, d) for m, deps in graph.items() for d in deps
              if (m.startswith("fgpo_lib.genomics") and d.startswith(("fgpo_lib.reasoners", "fgpo_lib.study", "fgpo_lib.cli")))
              or (m.startswith("fgpo_lib.study") and d == "fgpo_lib.cli")]
    assert not upward, upward
