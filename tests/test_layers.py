"""guards: the import layers of src/rewardkit: top-down, no cycles.

The package's imports read top-down: a declared layer table, no cycles.

Walks every module of ``src/rewardkit`` with :mod:`ast` (module-level imports, imports
inside functions and ``TYPE_CHECKING`` blocks alike: each is a dependency) and fails on
an import that points up the table, sideways into another part of the same layer, or
round a cycle. A new module must be placed in :data:`LAYERS`; the failure says where.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = "rewardkit"

# (part, rank, module prefixes): a module belongs to the part with its longest matching
# prefix. A module may import a lower rank, or its own part; nothing else.
LAYERS: tuple[tuple[str, int, tuple[str, ...]], ...] = (
    # The leaves: errors and helpers that import nothing of rewardkit.
    ("errors", 0, ("rewardkit.errors", "rewardkit._system", "rewardkit._closing")),
    # How the small dataclasses that cross to the workers a row at a time pickle.
    ("pickling", 0, ("rewardkit._pickling",)),
    # Fair sharing of slots between requesters (the pool's workers, the sandbox's runs).
    ("fair", 0, ("rewardkit._fair",)),
    ("types", 1, ("rewardkit.types",)),
    # The table of serving engines' flags: the config refuses from it, the launcher builds
    # command lines from it.
    ("engines", 1, ("rewardkit.engines",)),
    ("config", 2, ("rewardkit.config",)),
    # Helpers with no knowledge of scoring: HTTP, user code, row conversions.
    ("http", 3, ("rewardkit.http",)),
    # The connection and body guards both servers run behind.
    ("http guard", 3, ("rewardkit.http_guard",)),
    ("loopwatch", 3, ("rewardkit._loopwatch",)),
    ("custom", 3, ("rewardkit.custom",)),
    ("trainer_rows", 3, ("rewardkit.trainer_rows",)),
    ("groups", 3, ("rewardkit.groups",)),
    ("summary", 3, ("rewardkit.summary",)),
    ("kl", 3, ("rewardkit.kl",)),
    ("balancer", 4, ("rewardkit.balancer",)),
    # Batch-level aggregation of the components (group normalisation, TRL's scaling).
    ("aggregate", 4, ("rewardkit.aggregate",)),
    # The interfaces and leaf infrastructure the components share.
    ("verifier interface", 5, ("rewardkit.verifiers.base",)),
    # The code sandbox: verifiers run code in it; it knows nothing of who calls it.
    ("sandbox", 5, ("rewardkit.sandbox",)),
    ("pool health", 5, ("rewardkit.execution.health",)),
    ("ray helpers", 6, ("rewardkit.execution._ray",)),
    # Reward shaping (format, overlong, scaling): wraps the verifier interface, used by
    # the registry, the token placement and the engine.
    ("shaping", 6, ("rewardkit.shaping",)),
    # The components: they do not import each other.
    ("verifiers", 7, ("rewardkit.verifiers",)),
    ("models", 7, ("rewardkit.models",)),
    # The pool and Ray actors that run verifiers by reference, importing none.
    ("execution", 7, ("rewardkit.execution",)),
    ("tokens", 8, ("rewardkit.tokens",)),
    ("wiring", 9, ("rewardkit.wiring",)),
    # Scoring: the engine and its parts (outcomes, guard, spread tasks, the functions its
    # workers run, which call verifiers: execution runs them without knowing any).
    ("scoring", 10, ("rewardkit.scoring",)),
    ("loop", 11, ("rewardkit.loop",)),
    ("client", 11, ("rewardkit.client",)),
    # Row files: read and written by runs and reports, never by scoring itself.
    ("files", 12, ("rewardkit.io",)),
    # The report: the builder, the plain data it fills and the HTML page that renders that
    # data (imported lazily by the builder: matplotlib is optional) are one part.
    ("report", 13, ("rewardkit.report", "rewardkit.report_data", "rewardkit.report_html")),
    ("package", 14, ("rewardkit",)),
    ("scoring_run", 14, ("rewardkit.scoring_run",)),
    # The front ends: trainer adapters and the server share code only from below.
    ("integrations", 15, ("rewardkit.integrations",)),
    ("server", 15, ("rewardkit.server",)),
    # `rewardkit audit`: rewrites rows and scores them through a RewardLoop.
    ("audit", 15, ("rewardkit.audit",)),
    ("cli", 16, ("rewardkit.cli",)),
)

# Imports that close a cycle inside one part, each with why it is there (none today).
ALLOWED_CYCLES: set[frozenset[str]] = set()


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted((SRC / PACKAGE).rglob("*.py")):
        parts = path.relative_to(SRC).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


MODULES = _modules()


def _imports(name: str, path: Path) -> Iterator[tuple[str, int]]:
    """(imported rewardkit module, line) for every import statement anywhere in the file."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}".rstrip(".")
            # `from pkg import sub` depends on the submodule when sub is one
            targets = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base
                for alias in node.names
            ]
        else:
            continue
        for target in targets:
            while target and target not in MODULES:  # `import a.b.c` of an attribute path
                target = target.rpartition(".")[0]
            if target.startswith(PACKAGE) and target != name:
                yield target, node.lineno


Graph = dict[str, list[tuple[str, int]]]
GRAPH: Graph = {name: sorted(set(_imports(name, path))) for name, path in MODULES.items()}


def _part(module: str) -> tuple[str, int]:
    best: tuple[int, str, int] | None = None
    for part, rank, prefixes in LAYERS:
        for prefix in prefixes:
            if module == prefix or module.startswith(prefix + "."):
                if best is None or len(prefix) > best[0]:
                    best = (len(prefix), part, rank)
    assert best is not None, f"{module} is in no layer: add it to LAYERS in {__file__}"
    return best[1], best[2]


def test_every_module_has_a_layer() -> None:
    for module in MODULES:
        _part(module)


def _violations(graph: Graph) -> list[str]:
    wrong = []
    for module, imports in graph.items():
        part, rank = _part(module)
        for target, line in imports:
            target_part, target_rank = _part(target)
            if target_rank < rank or target_part == part:
                continue
            way = "up" if target_rank > rank else "sideways"
            wrong.append(
                f"{module}:{line} ({part}, {rank}) imports {target} "
                f"({target_part}, {target_rank}): {way}"
            )
    return wrong


def test_imports_point_down() -> None:
    wrong = _violations(GRAPH)
    assert not wrong, "imports against the layer table:\n" + "\n".join(wrong)


def _cycles(graph: Graph) -> list[frozenset[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in graph:
        if root in index:
            continue
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        work = [(root, iter(graph[root]))]
        while work:
            node, edges = work[-1]
            for target, _ in edges:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(graph.get(target, []))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(frozenset(component))
    return found


def test_no_import_cycles() -> None:
    cycles = [sorted(c) for c in _cycles(GRAPH) if c not in ALLOWED_CYCLES]
    assert not cycles, f"import cycles: {cycles}"


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        # Facts the walk must get right, or the two tests above prove nothing.
        ("rewardkit.scoring.engine", "rewardkit.wiring"),  # module level
        ("rewardkit.wiring", "rewardkit.models.replicas"),  # inside a function
        ("rewardkit.report", "rewardkit.report_html"),  # `from rewardkit import report_html`
        ("rewardkit.models.judge", "rewardkit.errors"),
        ("rewardkit.verifiers.code", "rewardkit.sandbox.core"),  # lazy, one level deeper
        ("rewardkit.verifiers.registry", "rewardkit.shaping.scaled"),
    ],
)
def test_the_walk_sees_every_kind_of_import(source: str, expected: str) -> None:
    assert expected in {target for target, _ in GRAPH[source]}


# What the checks must catch, each the shape of a real layering fault.
BAD_IMPORTS = [
    ("rewardkit.execution.pool", "rewardkit.verifiers.math", "sideways"),  # pool preloads
    ("rewardkit.execution.ray_pool", "rewardkit.models.replicas", "sideways"),
    ("rewardkit.scoring.engine", "rewardkit.io", "up"),  # the engine reading files for BadRow
    ("rewardkit.server.app", "rewardkit.integrations.openrlhf", "sideways"),  # an adapter
    ("rewardkit.verifiers.math", "rewardkit.scoring.engine", "up"),
    # The sandbox and shaping sit below their users, and the components stay apart.
    ("rewardkit.sandbox.core", "rewardkit.verifiers.code", "up"),
    ("rewardkit.shaping.scaled", "rewardkit.verifiers.registry", "up"),
    ("rewardkit.execution.pool", "rewardkit.verifiers.code", "sideways"),
    ("rewardkit.sandbox.server", "rewardkit.execution.health", "sideways"),
    ("rewardkit.execution.pool", "rewardkit.scoring.tasks", "up"),  # the pool knows no task
]


@pytest.mark.parametrize(("source", "target", "way"), BAD_IMPORTS)
def test_the_checker_rejects(source: str, target: str, way: str) -> None:
    (found,) = _violations({source: [(target, 1)]})
    assert found.endswith(way)


def test_execution_imports_no_verifier() -> None:
    """The pool runs scoring's task functions by reference; it never imports a verifier."""
    wrong = [
        f"{module}:{line} imports {target}"
        for module, imports in GRAPH.items()
        if module.startswith("rewardkit.execution")
        for target, line in imports
        if target.startswith("rewardkit.verifiers")
    ]
    assert not wrong, wrong


def test_the_checker_finds_a_cycle() -> None:
    graph: Graph = {
        "rewardkit.a": [("rewardkit.b", 1)],
        "rewardkit.b": [("rewardkit.c", 1)],
        "rewardkit.c": [("rewardkit.a", 1), ("rewardkit.d", 1)],
        "rewardkit.d": [],
    }
    assert _cycles(graph) == [frozenset({"rewardkit.a", "rewardkit.b", "rewardkit.c"})]
