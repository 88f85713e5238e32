"""The import rules of docs/ARCHITECTURE.md, checked on the source tree with `ast`.

Every `import`/`from … import` counts, including the lazy ones inside functions: a lazy import
still makes the lower layer depend on the upper one.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "local_recall"

# Low to high. A module may import its own layer's package and any lower layer, never a higher
# one. Packages sharing a rank are siblings that must not import each other.
LAYERS: dict[str, int] = {
    "errors": 0,
    "text": 0,  # untrusted text on one line: shown, logged and written everywhere
    "repo": 1,
    "redaction": 1,
    "memory": 2,
    "learning": 2,  # what sessions did with the memories shown: read by search, capture, context
    "search": 3,
    "capture": 3,
    "lifecycle": 3,
    "settings": 4,
    "org": 4,  # publishes to and searches the org index: over search, under the facade
    "ollama_client": 1,
    "recall": 5,
    "context": 6,  # what an agent is shown: served by the daemon, called by every hook
    # adapters: they translate protocols and may use each other along ADAPTER_IMPORTS only
    # (the CLI starts the daemon, hooks ask it over its socket), but nothing below imports them.
    "doctor": 7,  # checks the Claude Code install too, so it sits beside the adapters
    "logs": 7,
    "cli": 7,
    "hooks": 7,  # the hook runtime every agent's hooks share
    "claude_code": 7,
    "mcp_server": 7,  # the MCP tools every agent calls
    "agents": 7,  # what init writes for the other agents: pure plans, one file executor
    "codex": 7,  # other agents' hooks and project configuration (docs/agents.md)
    "gemini": 7,
    "copilot": 7,
    "daemon": 7,
    "web": 7,  # the browser viewer (served by the daemon, started by the CLI)
    "__main__": 7,
}
ADAPTERS = frozenset(name for name, rank in LAYERS.items() if rank == 7)

# The only adapter -> adapter arrows, lazy imports included. One direction each: an arrow back
# (the daemon importing a hook's module, say) fails test_adapters_import_each_other_as_allowed,
# and a cycle in this table fails test_adapter_arrows_have_no_cycle.
ADAPTER_IMPORTS: dict[str, frozenset[str]] = {
    # `local-recall hook [--agent …]` skips click
    "__main__": frozenset({"cli", "claude_code", "codex", "gemini", "copilot"}),
    # init (Claude Code and --agent), daemon start, doctor, `mcp` serves, `ui` hands the
    # viewer's token to the browser through web.launcher's private page
    "cli": frozenset(
        {
            "agents",
            "claude_code",
            "codex",
            "copilot",
            "daemon",
            "doctor",
            "gemini",
            "logs",
            "mcp_server",
            "web",
        }
    ),
    "doctor": frozenset({"claude_code", "logs"}),  # inspects the Claude Code install
    "claude_code": frozenset({"hooks"}),  # its hooks: the shared answers
    "mcp_server": frozenset({"daemon", "logs"}),  # a save's settle: is a daemon watching?
    # each agent: the shared agent-hook runtime, the shared install-plan helpers
    "codex": frozenset({"agents", "hooks"}),
    "gemini": frozenset({"agents", "hooks"}),
    "copilot": frozenset({"agents", "hooks"}),
    "agents": frozenset(),
    "hooks": frozenset({"daemon", "logs"}),  # ask the daemon over its socket, start it
    "daemon": frozenset({"web"}),  # serves the browser viewer
    "web": frozenset(),
    "logs": frozenset(),
}

# Frameworks are imported in one place each.
FRAMEWORK_HOMES: dict[str, frozenset[str]] = {
    "lancedb": frozenset(
        {
            "search.index.lance_import",
            "search.index.tables",
            "search.index.queries",
            "search.index.shared",
        }
    ),
    "click": frozenset(
        {
            "cli.main",
            "cli.app",
            "cli.daemon",
            "cli.memories",
            "cli.search",
            "cli.setup",
            "cli.sync",
            "cli.lifecycle",
            "cli.review",
            "cli.ui",
            "cli.org",
            "cli.why",
        }
    ),
    "mcp": frozenset({"mcp_server.server"}),
    "watchdog": frozenset({"daemon.runtime", "daemon.watches"}),
    "rich": frozenset({"cli.main", "cli.progress", "cli.search", "cli.sync"}),
    "onnxruntime": frozenset({"search.embedders.minilm"}),
    "ollama": frozenset({"ollama_client"}),
    "httpx": frozenset({"ollama_client"}),
    "starlette": frozenset({"web.app"}),
    "uvicorn": frozenset({"web.server"}),
    "markdown_it": frozenset({"web.render"}),
    "tomlkit": frozenset({"codex.install_plan"}),
}

# Modules that only decide: they may import only each other and the standard library.
PURE = frozenset(
    {
        "text",
        "search.index.plan",
        "capture.pipeline_plan",
        "context.envelope",
        "repo.received_env",
        "context.notes",
        "context.prompt",
        "context.prompt_lines",
        "context.selection",
        "context.session",
        "context.duplicates",
        "context.prompt_text",
        "claude_code.hooks.payload",
        "claude_code.install.plan",
        "claude_code.hooks.gate",
        "claude_code.hooks.guard",
        "memory.model",
        "memory.dispute",
        "memory.timestamps",
        "memory.id_prefix",
        "memory.scope_moves",
        "memory.select",
        "memory.life",
        "memory.likeness",
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
        "mcp_server.shapes",
        "lifecycle.staleness",
        "lifecycle.ranking",
        "lifecycle.consolidation",
        "web.guard",
        "org.plan",
        "learning.outcomes",
        "learning.track",
        "learning.calibration",
        "learning.shown",
        "learning.signals",
        "capture.extraction.verdicts",
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


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _layer(m) in ADAPTERS))
def test_adapters_import_each_other_as_allowed(module: str) -> None:
    own = _layer(module)
    problems = []
    for name in _imports(MODULES[module], module):
        target = _internal(name)
        if target is None or _layer(target) not in ADAPTERS or _layer(target) == own:
            continue
        if _layer(target) not in ADAPTER_IMPORTS[own]:
            problems.append(f"{module} imports {target} (not in ADAPTER_IMPORTS[{own!r}])")
    assert not problems, "\n".join(sorted(set(problems)))


def test_adapter_arrows_have_no_cycle() -> None:
    assert set(ADAPTER_IMPORTS) == ADAPTERS
    done: set[str] = set()

    def visit(name: str, path: tuple[str, ...]) -> None:
        assert name not in path, f"adapter import cycle: {' -> '.join((*path, name))}"
        if name not in done:
            for target in ADAPTER_IMPORTS[name]:
                visit(target, (*path, name))
            done.add(name)

    for name in sorted(ADAPTER_IMPORTS):
        visit(name, ())


def _arrows() -> dict[str, set[str]]:
    """Top-level part -> the other top-level parts it imports."""
    arrows: dict[str, set[str]] = {}
    for module, path in MODULES.items():
        for name in _imports(path, module):
            target = _internal(name)
            if target is None or target.split(".")[0] not in LAYERS:
                continue
            if _layer(target) != _layer(module):
                arrows.setdefault(_layer(module), set()).add(_layer(target))
    return arrows


def test_adapter_arrows_are_all_used() -> None:
    """ADAPTER_IMPORTS says what is, not what might be: an arrow nobody uses is removed."""
    arrows = _arrows()
    unused = sorted(
        f"{a} -> {b}"
        for a, targets in ADAPTER_IMPORTS.items()
        for b in targets
        if b not in arrows.get(a, set())
    )
    assert not unused, unused


def test_no_top_level_part_imports_one_that_imports_it_back() -> None:
    arrows = _arrows()
    both_ways = sorted(
        f"{a} <-> {b}"
        for a, targets in arrows.items()
        for b in targets
        if a < b and a in arrows.get(b, set())
    )
    assert not both_ways, both_ways


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


MAX_CLASS_LINES = 250


@pytest.mark.parametrize("module", sorted(MODULES))
def test_classes_stay_small(module: str) -> None:
    """A class that grows past ~250 lines is doing several jobs: split it on a seam."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    big = [
        f"{module}.{node.name}: {node.end_lineno - node.lineno + 1} lines"
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef)
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > MAX_CLASS_LINES
    ]
    assert not big, big


def test_settings_take_no_defaults_from_the_store_or_the_searcher() -> None:
    """The seam sits below what it configures: its defaults come from small modules."""
    imported = {_internal(name) for name in _imports(MODULES["settings"], "settings")}
    assert not {m for m in imported if m and m.startswith(("memory.store", "search.searcher"))}


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


# A file's stat key is made in one place (repo/files.py: `stat_key`, `key_of`): one order of
# (inode, mtime_ns, size) everywhere.
STAT_KEY_HOMES = frozenset({"repo.files"})


def test_one_stat_key() -> None:
    key = re.compile(r"^.*st_ino.*st_mtime_ns.*$|^.*st_mtime_ns.*st_ino.*$", re.MULTILINE)
    makers = [
        module
        for module, path in MODULES.items()
        if key.search(path.read_text(encoding="utf-8")) and module not in STAT_KEY_HOMES
    ]
    assert not makers, f"use repo.files.stat_key / key_of: {makers}"
