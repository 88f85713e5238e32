# ruff: noqa: E501  (data: one labelled memory per line)
"""Labelled pairs for benchmarks/consolidation.py: the same fact written twice in other words (as
two teammates on two branches would), and hard negatives (same topic, a different fact). Written by
hand for this benchmark, not taken from any test; the thresholds were chosen on them, so read the
figures as a calibration, with the LoCoMo count as the out-of-sample check."""

from __future__ import annotations

POS: list[tuple[tuple[str, str], tuple[str, str]]] = [
    (
        (
            "Use filelock for cross-process dedup",
            "We use the filelock package to serialise memory creation across processes, so two processes never write the same memory twice.",
        ),
        (
            "Memory creation is serialised with filelock",
            "Memory creation across processes is serialised using the filelock package so that the same memory is never written twice by two processes.",
        ),
    ),
    (
        (
            "Tests must not hit the network",
            "The test suite runs offline: any test that opens a network connection fails in CI.",
        ),
        (
            "CI has no network access",
            "In CI the tests run without network access, so a test that connects to the network fails.",
        ),
    ),
    (
        (
            "Config is parsed with tomllib",
            "local-recall reads config.toml with the standard library's tomllib; no third-party TOML parser.",
        ),
        (
            "tomllib parses the config file",
            "The config.toml file is parsed by tomllib from the standard library rather than a third-party TOML package.",
        ),
    ),
    (
        (
            "The prompt hook must answer within 300 ms",
            "UserPromptSubmit waits at most 300 ms for the daemon, then falls back to an in-process search.",
        ),
        (
            "Prompt hook timeout is 300 ms",
            "The UserPromptSubmit hook gives the daemon 300 ms to answer before it searches in process instead.",
        ),
    ),
    (
        (
            "Memory files are written atomically",
            "Every memory file is written to a temp file, fsynced and renamed over the target so a crash never leaves half a file.",
        ),
        (
            "Atomic writes for memory files",
            "Memory files go through a temporary file plus fsync and os.replace, so a crash leaves either the old or the new file.",
        ),
    ),
    (
        (
            "Run mypy in strict mode",
            "The project's type checking is mypy --strict; new code must pass it without ignores.",
        ),
        (
            "mypy strict is required",
            "All code must pass mypy in strict mode; do not add type: ignore comments to new code.",
        ),
    ),
    (
        (
            "LanceDB is imported only in index.py",
            "search/index.py is the single module allowed to import lancedb; everything else goes through MemoryIndex.",
        ),
        (
            "Only index.py may import lancedb",
            "No module other than search/index.py imports lancedb; the rest of the code uses the MemoryIndex class.",
        ),
    ),
    (
        (
            "Database migrations run with alembic",
            "Schema changes are alembic migrations; run alembic upgrade head after pulling.",
        ),
        (
            "Use alembic for schema changes",
            "We change the database schema with alembic migrations; after a pull, run alembic upgrade head.",
        ),
    ),
    (
        (
            "The API rate limit is 100 requests per minute",
            "The public API allows 100 requests per minute per token; more return HTTP 429.",
        ),
        (
            "Rate limit: 100 req/min per token",
            "Each API token may make 100 requests a minute; beyond that the API answers 429 Too Many Requests.",
        ),
    ),
    (
        (
            "Frontend builds with Vite",
            "The web frontend is bundled with Vite; npm run build writes dist/.",
        ),
        (
            "Vite bundles the web UI",
            "We bundle the web UI with Vite: running npm run build produces the dist/ folder.",
        ),
    ),
    (
        (
            "Dates are stored in UTC",
            "All timestamps in the database are UTC; convert to local time only in the UI.",
        ),
        (
            "Store timestamps as UTC",
            "Timestamps are kept in UTC in the database and converted to the user's local time only when displayed.",
        ),
    ),
    (
        (
            "Login uses OAuth with GitHub",
            "Users sign in through GitHub OAuth; there is no password login.",
        ),
        (
            "GitHub OAuth is the only sign-in",
            "There is no password sign-in: users log in with GitHub via OAuth.",
        ),
    ),
    (
        (
            "Use ruff for linting and formatting",
            "ruff check and ruff format replace flake8, isort and black in this repo.",
        ),
        (
            "ruff replaces black and flake8",
            "We lint and format with ruff (ruff check, ruff format) instead of flake8, isort and black.",
        ),
    ),
    (
        (
            "Embedding model is all-MiniLM-L6-v2",
            "Vectors come from all-MiniLM-L6-v2 int8 ONNX, 384 dimensions.",
        ),
        (
            "384-dim MiniLM embeddings",
            "We embed with the int8 ONNX build of all-MiniLM-L6-v2, which gives 384-dimensional vectors.",
        ),
    ),
    (
        (
            "Secrets are redacted before writing",
            "Every memory passes through the redaction step, which replaces API keys and tokens before the file is written.",
        ),
        (
            "Redact secrets before a memory is saved",
            "Before a memory file is written, redaction removes API keys and tokens from its text.",
        ),
    ),
    (
        (
            "The daemon exits when idle",
            "With idle_exit_minutes set, the daemon stops after that long without queries or work.",
        ),
        (
            "Idle daemon shuts down",
            "The daemon shuts itself down after idle_exit_minutes with no queries and no work to do.",
        ),
    ),
    (
        (
            "Docker image is based on python:3.11-slim",
            "The Dockerfile starts FROM python:3.11-slim to keep the image small.",
        ),
        (
            "Base image python:3.11-slim",
            "Our Docker image uses python:3.11-slim as its base to keep it small.",
        ),
    ),
    (
        (
            "Feature flags live in LaunchDarkly",
            "Feature toggles are managed in LaunchDarkly, not in config files.",
        ),
        (
            "LaunchDarkly manages feature toggles",
            "We keep feature flags in LaunchDarkly rather than in configuration files.",
        ),
    ),
    (
        (
            "Payments go through Stripe webhooks",
            "Order status changes only when the Stripe webhook confirms the payment, never on the client redirect.",
        ),
        (
            "Stripe webhook confirms payment",
            "An order is marked paid only after Stripe's webhook confirms it; the client-side redirect is not trusted.",
        ),
    ),
    (
        (
            "Logs rotate at 5 MB",
            "recall.log is rotated when it reaches 5 MB, keeping three old files.",
        ),
        (
            "recall.log rotation",
            "The log file recall.log rotates at 5 MB and three rotated copies are kept.",
        ),
    ),
    (
        (
            "Avoid N+1 queries in the orders view",
            "The orders list must use select_related for customer and items; without it the page ran 300 queries.",
        ),
        (
            "orders view needs select_related",
            "Use select_related on customer and items in the orders list view, otherwise it issues hundreds of queries (N+1).",
        ),
    ),
    (
        (
            "Branch names follow type/ticket",
            "Branches are named feature/ABC-123 or fix/ABC-123 after the Jira ticket.",
        ),
        (
            "Name branches after the Jira ticket",
            "Name your branch type/TICKET, e.g. fix/ABC-123 or feature/ABC-123.",
        ),
    ),
    (
        (
            "Cache invalidation on product update",
            "Updating a product must delete its Redis cache key product:<id>, otherwise stale prices show.",
        ),
        (
            "Delete product:<id> from Redis on update",
            "When a product changes, remove the Redis key product:<id>; otherwise old prices are served from the cache.",
        ),
    ),
    (
        (
            "The CLI is built with click",
            "Commands are click commands registered on the cli group in cli/app.py.",
        ),
        (
            "click powers the command line",
            "The command line uses click: each command is registered on the group defined in cli/app.py.",
        ),
    ),
    (
        (
            "Pin numpy below 2",
            "numpy must stay below 2.0 because onnxruntime 1.16 breaks with numpy 2.",
        ),
        (
            "numpy<2 because of onnxruntime",
            "We pin numpy<2.0: onnxruntime 1.16 fails with numpy 2.x.",
        ),
    ),
]
NEG: list[tuple[tuple[str, str], tuple[str, str]]] = [
    (
        (
            "Use filelock for cross-process dedup",
            "We use the filelock package to serialise memory creation across processes, so two processes never write the same memory twice.",
        ),
        (
            "filelock timeout is 5 seconds",
            "Taking the store lock waits at most 5 seconds, then the write fails with a StorageError.",
        ),
    ),
    (
        (
            "Tests must not hit the network",
            "The test suite runs offline: any test that opens a network connection fails in CI.",
        ),
        (
            "Tests use a fake Anthropic server",
            "End-to-end tests run the real claude CLI against tests/fake_anthropic.py instead of the real API.",
        ),
    ),
    (
        (
            "Config is parsed with tomllib",
            "local-recall reads config.toml with the standard library's tomllib; no third-party TOML parser.",
        ),
        (
            "Unknown config keys are errors",
            "An unknown key in config.toml is a ConfigError naming the key, not a warning.",
        ),
    ),
    (
        (
            "The prompt hook must answer within 300 ms",
            "UserPromptSubmit waits at most 300 ms for the daemon, then falls back to an in-process search.",
        ),
        (
            "SessionStart hook injects an index",
            "The SessionStart hook injects a compact index of memories: date, id and subject, within 1000 tokens.",
        ),
    ),
    (
        (
            "Memory files are written atomically",
            "Every memory file is written to a temp file, fsynced and renamed over the target so a crash never leaves half a file.",
        ),
        (
            "Memory files are markdown with YAML",
            "Each memory is a markdown file with YAML frontmatter holding its id, subject and keywords.",
        ),
    ),
    (
        (
            "Run mypy in strict mode",
            "The project's type checking is mypy --strict; new code must pass it without ignores.",
        ),
        (
            "Run pytest on the files you touch",
            "Never run the whole test suite; run the test files that cover your change.",
        ),
    ),
    (
        (
            "LanceDB is imported only in index.py",
            "search/index.py is the single module allowed to import lancedb; everything else goes through MemoryIndex.",
        ),
        (
            "The index is rebuilt when the embedder changes",
            "A different embedder or model dimension makes sync rebuild the whole LanceDB index.",
        ),
    ),
    (
        (
            "Database migrations run with alembic",
            "Schema changes are alembic migrations; run alembic upgrade head after pulling.",
        ),
        (
            "Never edit a migration after merge",
            "Once a migration is merged to main, add a new migration instead of editing the old one.",
        ),
    ),
    (
        (
            "The API rate limit is 100 requests per minute",
            "The public API allows 100 requests per minute per token; more return HTTP 429.",
        ),
        (
            "The API rate limit is 1000 requests per minute",
            "The internal API allows 1000 requests per minute per service; more return HTTP 429.",
        ),
    ),
    (
        (
            "Frontend builds with Vite",
            "The web frontend is bundled with Vite; npm run build writes dist/.",
        ),
        (
            "Frontend tests run with Vitest",
            "Unit tests of the web frontend run with Vitest: npm run test.",
        ),
    ),
    (
        (
            "Dates are stored in UTC",
            "All timestamps in the database are UTC; convert to local time only in the UI.",
        ),
        (
            "Dates are shown in ISO format",
            "The UI shows dates as YYYY-MM-DD regardless of the user's locale.",
        ),
    ),
    (
        (
            "Login uses OAuth with GitHub",
            "Users sign in through GitHub OAuth; there is no password login.",
        ),
        (
            "Sessions expire after 30 days",
            "A login session cookie is valid for 30 days, then the user signs in again.",
        ),
    ),
    (
        (
            "Use ruff for linting and formatting",
            "ruff check and ruff format replace flake8, isort and black in this repo.",
        ),
        (
            "Line length is 100",
            "The project's maximum line length is 100 characters, enforced by ruff.",
        ),
    ),
    (
        (
            "Embedding model is all-MiniLM-L6-v2",
            "Vectors come from all-MiniLM-L6-v2 int8 ONNX, 384 dimensions.",
        ),
        (
            "Ollama can replace the embedded model",
            "Set embedder.provider = ollama to embed with an Ollama model instead of MiniLM.",
        ),
    ),
    (
        (
            "Secrets are redacted before writing",
            "Every memory passes through the redaction step, which replaces API keys and tokens before the file is written.",
        ),
        (
            "Private spans are dropped",
            "Text inside <private> tags is removed from a memory before it is saved.",
        ),
    ),
    (
        (
            "The daemon exits when idle",
            "With idle_exit_minutes set, the daemon stops after that long without queries or work.",
        ),
        (
            "The daemon runs a full pass every 5 minutes",
            "Besides watching folders, the daemon runs a full pipeline pass every 300 seconds.",
        ),
    ),
    (
        (
            "Docker image is based on python:3.11-slim",
            "The Dockerfile starts FROM python:3.11-slim to keep the image small.",
        ),
        (
            "Docker image runs as non-root",
            "The container runs as user app (uid 1000), never as root.",
        ),
    ),
    (
        (
            "Feature flags live in LaunchDarkly",
            "Feature toggles are managed in LaunchDarkly, not in config files.",
        ),
        (
            "Remove flags after rollout",
            "A feature flag is deleted from the code within two weeks after the feature reaches 100 %.",
        ),
    ),
    (
        (
            "Payments go through Stripe webhooks",
            "Order status changes only when the Stripe webhook confirms the payment, never on the client redirect.",
        ),
        (
            "Refunds are issued from the admin",
            "Refunds are created from the admin panel, which calls Stripe's refund API.",
        ),
    ),
    (
        (
            "Logs rotate at 5 MB",
            "recall.log is rotated when it reaches 5 MB, keeping three old files.",
        ),
        (
            "Log level is INFO by default",
            "recall.log is written at INFO level unless log.level is set in the config.",
        ),
    ),
    (
        (
            "Avoid N+1 queries in the orders view",
            "The orders list must use select_related for customer and items; without it the page ran 300 queries.",
        ),
        (
            "Orders view is paginated by 50",
            "The orders list shows 50 orders per page; the page size is not configurable.",
        ),
    ),
    (
        (
            "Branch names follow type/ticket",
            "Branches are named feature/ABC-123 or fix/ABC-123 after the Jira ticket.",
        ),
        (
            "Squash merge to main",
            "Pull requests are squash-merged into main; the PR title becomes the commit message.",
        ),
    ),
    (
        (
            "Cache invalidation on product update",
            "Updating a product must delete its Redis cache key product:<id>, otherwise stale prices show.",
        ),
        ("Redis cache TTL is one hour", "Product entries in Redis expire after 3600 seconds."),
    ),
    (
        (
            "The CLI is built with click",
            "Commands are click commands registered on the cli group in cli/app.py.",
        ),
        (
            "CLI errors are one line",
            "A failing CLI command prints one error line on stderr and exits 1.",
        ),
    ),
    (
        (
            "Pin numpy below 2",
            "numpy must stay below 2.0 because onnxruntime 1.16 breaks with numpy 2.",
        ),
        (
            "Pin lancedb to 0.40",
            "lancedb is pinned to 0.40 because 0.41 changed the full-text query API.",
        ),
    ),
]

# A memory the extractor wrote beside a hand-written one it was shown, stating that
# fact again with a detail of its own (an example command, the version it happened to run). Same
# fact: the first four; the rest state another fact on the same topic (a correction of a figure,
# another command of the same tool) and must stay two. Written for write_dedup.py, after such a
# pair was reported; the bodies of that pair are reconstructed (only the subjects were given).
RESTATED: list[tuple[tuple[str, str], tuple[str, str]]] = [
    (
        (
            "Tests run through tox with the uv-venv-lock-runner",
            "tox is configured in pyproject.toml ([tool.tox]) and builds each environment from uv.lock with the uv-venv-lock-runner. `tox -e py3.13` runs one interpreter; plain `tox` runs them all.",
        ),
        (
            "Jinja's test suite runs with pytest; tox -e py3.12 for one interpreter",
            "The tests live in tests/ and run with pytest. tox runs the suite on every supported Python (uv-venv-lock-runner); use `tox -e py3.12` to run a single interpreter.",
        ),
    ),
    (
        (
            "Tests run through tox with the uv-venv-lock-runner",
            "The tox environments come from uv.lock (runner = uv-venv-lock-runner); run the suite for Python 3.13 only with tox -e py3.13.",
        ),
        (
            "Run the tests with tox; one interpreter with tox -e py3.12",
            "Run the test suite with tox, which installs from the uv lock file through the uv-venv-lock-runner; on Python 3.12 alone: tox -e py3.12.",
        ),
    ),
    (
        (
            "Lint with pre-commit",
            "Style checks are pre-commit hooks (ruff, ruff-format); run pre-commit run --all-files before pushing.",
        ),
        (
            "ruff runs through pre-commit; tox -e style checks everything",
            "Linting and formatting are ruff hooks in .pre-commit-config.yaml (ruff v0.6.9); tox -e style runs pre-commit run --all-files on the whole tree.",
        ),
    ),
    (
        (
            "Build the docs with tox -e docs",
            "The documentation is built by Sphinx through tox: tox -e docs writes docs/_build/html.",
        ),
        (
            "Sphinx docs: tox -e docs (Sphinx 8.1, pallets-sphinx-themes)",
            "Documentation builds with Sphinx via the tox docs environment (tox -e docs); the HTML lands in docs/_build/html.",
        ),
    ),
]
RESTATED_DISTINCT: list[tuple[tuple[str, str], tuple[str, str]]] = [
    (
        (
            "The API rate limit is 100 requests per minute",
            "The API allows 100 requests per minute per token; more return HTTP 429.",
        ),
        (
            "The API rate limit is 1000 requests per minute",
            "The API allows 1000 requests per minute per token; more return HTTP 429.",
        ),
    ),
    (
        (
            "Session tokens expire after 15 minutes",
            "An access token is valid for 15 minutes; the client refreshes it with the refresh token.",
        ),
        (
            "Session tokens expire after 60 minutes",
            "An access token is valid for 60 minutes; the client refreshes it with the refresh token.",
        ),
    ),
    (
        (
            "The project requires Python 3.9 or newer",
            "requires-python in pyproject.toml is >=3.9; do not use syntax newer than Python 3.9.",
        ),
        (
            "The project requires Python 3.12 or newer",
            "requires-python in pyproject.toml is >=3.12; syntax of Python 3.12 is fine.",
        ),
    ),
    (
        (
            "Tests run through tox with the uv-venv-lock-runner",
            "tox is configured in pyproject.toml ([tool.tox]) and builds each environment from uv.lock with the uv-venv-lock-runner. `tox -e py3.13` runs one interpreter; plain `tox` runs them all.",
        ),
        (
            "Type checks run through tox -e typing",
            "mypy and pyright run in the tox typing environment (tox -e typing), not in the test environments.",
        ),
    ),
    (
        (
            "Tests run through tox with the uv-venv-lock-runner",
            "tox is configured in pyproject.toml ([tool.tox]) and builds each environment from uv.lock with the uv-venv-lock-runner. `tox -e py3.13` runs one interpreter; plain `tox` runs them all.",
        ),
        (
            "Update the lock file with uv lock --upgrade",
            "After changing dependencies in pyproject.toml run uv lock --upgrade and commit uv.lock; tox reads it through the uv-venv-lock-runner.",
        ),
    ),
    (
        (
            "Run the tests with pytest -n auto",
            "pytest-xdist is installed: pytest -n auto spreads the suite over every core.",
        ),
        (
            "Run one test with pytest -k",
            "pytest -k NAME runs only the tests whose name matches, e.g. pytest -k test_filters.",
        ),
    ),
]
