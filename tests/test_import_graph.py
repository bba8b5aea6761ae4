"""The library's import graph (from the ast of every module, function-level imports included): no cycle, and every
module imports only from its own layer or the layers below it, in the declared order :data:`LAYERS` (bottom first).
A module in no layer fails too, so a new module is placed on purpose."""

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


#: the layers, bottom first: each a name and the modules (or packages, with every module in them) it holds
LAYERS = [
    ("foundation", ["_version", "_lazy", "errors", "markers", "user_code", "paths", "validation", "jsonl", "llama_build", "splits", "subsets", "stats",
                    "selector_rule"]),
    ("data", ["files", "table", "rewards", "metrics", "weights", "selector_folder", "outputs", "examples", "oracle", "table_info", "table_analyses",
              "policy", "features", "crossfit"]),
    ("optimizers", ["algos", "train_config", "train", "batched", "compare", "frontier", "selector", "calibrate"]),
    ("environments", ["genomics", "reasoners", "agent"]),
    ("precompute", ["precompute", "verify", "crossbuild", "plan", "scaling_estimators", "scaling", "ondemand"]),
    ("language-model policy", ["lm_policy"]),
    ("chapters", ["study"]),
    ("commands", ["commands", "pipeline", "runs"]),
    ("command line", ["cli", ""]),  # "": the package itself (fgpo_lib/__init__.py)
]


def layer_of(module: str) -> int:
    """The index in :data:`LAYERS` of ``module`` (a dotted name under fgpo_lib): the layer of its longest prefix."""
    rest = module.removeprefix("fgpo_lib").removeprefix(".")
    best = None
    for i, (_, members) in enumerate(LAYERS):
        for m in members:
            if rest == m or (m and rest.startswith(m + ".")):
                if best is None or len(m) > best[1]:
                    best = (i, len(m))
    assert best is not None, f"{module} is in no layer of tests/test_import_graph.py:LAYERS; place it"
    return best[0]


def test_every_import_goes_to_the_same_layer_or_below():
    graph = imports()
    upward = [f"{m} ({LAYERS[layer_of(m)][0]}) imports {d} ({LAYERS[layer_of(d)][0]})" for m, deps in graph.items() for d in deps if layer_of(d) > layer_of(m)]
    assert not upward, "imports from a higher layer:\n" + "\n".join(sorted(upward))


def test_the_language_model_library_imports_nothing_of_the_chapters():
    graph = imports()
    assert not [(m, d) for m, deps in graph.items() if m.startswith("fgpo_lib.lm_policy") for d in deps if d.startswith("fgpo_lib.study")]


def test_a_layering_violation_is_found():
    """The check itself: an import from a chapter module into the table layer is reported."""
    assert layer_of("fgpo_lib.study.lm_runs") > layer_of("fgpo_lib.table")
    assert layer_of("fgpo_lib.lm_policy.fgpo_arm") > layer_of("fgpo_lib.algos.tpo")
