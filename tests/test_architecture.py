"""The import rules of docs/ARCHITECTURE.md, checked on the source tree with `ast`.

Every `import`/`from … import` counts, including the lazy ones inside functions: a lazy import
still makes the lower layer depend on the upper one.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "local_recall"

# Low to high. A module may import its own layer's package and any lower layer, never a higher
# one. Packages sharing a rank are siblings that must not import each other.
LAYERS: dict[str, int] = {
    "errors": 0,
    "repo": 1,
    "redaction": 1,
    "memory": 2,
    "search": 3,
    "capture": 3,
    "lifecycle": 3,
    "settings": 4,
    "ollama_client": 1,
    "recall": 5,
    # adapters: they translate protocols and may use each other (the CLI starts the daemon,
    # hooks ask it over its socket), but nothing below imports them.
    "doctor": 6,  # checks the Claude Code install too, so it sits beside the adapters
    "logs": 6,
    "cli": 6,
    "claude_code": 6,
    "daemon": 6,
    "web": 6,  # the browser viewer (served by the daemon, started by the CLI)
    "__main__": 6,
}
ADAPTERS = frozenset(name for name, rank in LAYERS.items() if rank == 6)

# Frameworks are imported in one place each.
FRAMEWORK_HOMES: dict[str, frozenset[str]] = {
    "lancedb": frozenset({"search.index"}),
    "click": frozenset(
        {
            "cli",
            "cli.app",
            "cli.daemon",
            "cli.memories",
            "cli.search",
            "cli.setup",
            "cli.sync",
            "cli.lifecycle",
            "cli.review",
            "cli.ui",
            "cli.why",
        }
    ),
    "mcp": frozenset({"claude_code.mcp_server"}),
    "watchdog": frozenset({"daemon.runtime", "daemon.watches"}),
    "rich": frozenset({"cli", "cli.progress", "cli.search", "cli.sync"}),
    "onnxruntime": frozenset({"search.embedders.minilm"}),
    "ollama": frozenset({"ollama_client"}),
    "httpx": frozenset({"ollama_client"}),
    "starlette": frozenset({"web.app"}),
    "uvicorn": frozenset({"web.server"}),
    "markdown_it": frozenset({"web.render"}),
}

# Modules that only decide: they may import only each other and the standard library.
PURE = frozenset(
    {
        "search.index_plan",
        "capture.pipeline_plan",
        "claude_code.hook_context",
        "claude_code.hook_input",
        "claude_code.install_plan",
        "memory.model",
        "search.text_terms",
        "search.limits",
        "search.scoring",
        "search.relevance",
        "search.query_intent",
        "search.decision",
        "search.background_probes",
        "search.explain",
        "search.fuzzy",
        "search.query",
        "capture.progress",
        "capture.transcripts.model",
        "capture.transcripts.project_dirs",
        "capture.transcripts.condense",
        "capture.extraction.prompt",
        "daemon.schedule",
        "claude_code.mcp_shapes",
        "lifecycle.staleness",
        "lifecycle.ranking",
        "lifecycle.consolidation",
        "web.guard",
    }
)
PURE_ALLOWED = frozenset({"errors", "memory.model", *PURE})


def _modules() -> Iterator[tuple[str, Path]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if parts:
            yield ".".join(parts), path


def _imports(path: Path, module: str) -> Iterator[str]:
    """Full dotted names imported by a module, relative imports resolved."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module.split(".")[:-1] if path.name != "__init__.py" else module.split(".")
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                parts = ["local_recall", *base, *(node.module or "").split(".")]
                name = ".".join(parts).rstrip(".")
            else:
                name = node.module or ""
            yield name
            for alias in node.names:
                yield f"{name}.{alias.name}"


def _internal(name: str) -> str | None:
    if name == "local_recall" or not name.startswith("local_recall."):
        return None
    return name.removeprefix("local_recall.")


def _layer(module: str) -> str:
    return module.split(".", maxsplit=1)[0]


MODULES = dict(_modules())


def test_every_top_level_module_has_a_layer() -> None:
    unknown = {_layer(m) for m in MODULES} - set(LAYERS)
    assert not unknown, f"give these a layer in LAYERS (and in docs/ARCHITECTURE.md): {unknown}"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_point_down(module: str) -> None:
    own = _layer(module)
    problems = []
    for name in _imports(MODULES[module], module):
        target = _internal(name)
        if target is None or target.split(".")[0] not in LAYERS:
            continue
        other = _layer(target)
        if other == own or own in ADAPTERS:
            continue
        if LAYERS[other] >= LAYERS[own]:
            problems.append(f"{module} imports {target} (layer {other} is not below {own})")
    assert not problems, "\n".join(sorted(set(problems)))


@pytest.mark.parametrize("module", sorted(MODULES))
def test_frameworks_are_imported_in_one_place(module: str) -> None:
    problems = []
    for name in _imports(MODULES[module], module):
        top = name.split(".")[0]
        if top in FRAMEWORK_HOMES and module not in FRAMEWORK_HOMES[top]:
            problems.append(f"{module} imports {name}")
    assert not problems, "\n".join(sorted(set(problems)))


@pytest.mark.parametrize("module", sorted(PURE))
def test_pure_modules_import_no_io(module: str) -> None:
    assert module in MODULES, f"{module} is listed as pure but does not exist"
    problems = []
    for name in _imports(MODULES[module], module):
        target = _internal(name)
        if target is None:
            continue
        if not any(target == ok or target.startswith(ok + ".") for ok in PURE_ALLOWED):
            problems.append(f"{module} (pure) imports {target}")
    assert not problems, "\n".join(sorted(set(problems)))


@pytest.mark.parametrize("module", sorted(MODULES))
def test_modules_stay_small(module: str) -> None:
    """~400 lines; a longer module says why at its top (`Longer than 400 lines: <why>`)."""
    text = MODULES[module].read_text(encoding="utf-8")
    lines = text.count("\n")
    if lines > 420:
        assert "Longer than 400 lines:" in text[:3000], f"{module}: {lines} lines, no reason given"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_library_neither_prints_nor_configures_logging(module: str) -> None:
    if _layer(module) in ADAPTERS:
        return
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    problems = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id == "print":
                problems.append(f"{module}:{node.lineno} print()")
            if isinstance(func, ast.Attribute) and func.attr in {"basicConfig", "addHandler"}:
                problems.append(f"{module}:{node.lineno} {func.attr}()")
    assert not problems, "\n".join(problems)
