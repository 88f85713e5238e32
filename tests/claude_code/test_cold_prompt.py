"""A prompt with no daemon running (the first session after `init`, after a reboot, `claude -p`
in a script): the hook answers in its own process (hooks/answers.py `context_in_process`) with
the same memories as the warm daemon, loads the model from its first moment, and imports
nothing a read does not need. The real hook in a subprocess, the real MiniLM model, a real
index; the warm answer is the daemon's own `QueryService` over the same store.
Its time is measured in benchmarks/prompt_latency.py --cold, not here."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from local_recall.context.hook_settings import hook_environment
from local_recall.daemon.query_service import QueryService
from local_recall.memory.format import render_memory
from local_recall.memory.model import Memory, content_hash
from local_recall.recall import Recall
from local_recall.settings import Settings
from tests.hook_runs import PATIENT, assert_clean, hook_env, log_text, prompt_input, run_hook
from tests.import_log import ImportLog

pytestmark = pytest.mark.slow

TOPICS = (  # noqa: SIM905 - a word list reads better as one string
    "parser tokenizer cache eviction database migration schema transaction retry backoff "
    "queue worker scheduler timeout socket certificate proxy websocket serializer config "
    "secret token session cookie header middleware router template renderer export upload"
).split()
PROMPTS = (
    "how do we keep two sessions from saving the same memory twice?",
    "what retry backoff does the queue worker use before it gives up?",
    "why does the websocket proxy hang when the certificate is renewed?",
    "how is the parser cache eviction tuned?",
    "Wie lädt der Zeitplaner seine Konfiguration?",  # not ASCII: words split the long way
)


def write_memories(repo: Path, count: int = 60) -> None:
    """`count` varied memories written as files (as a pull brings them), a few of which answer
    PROMPTS, then the index (a cold hook means no daemon, not never indexed)."""
    rng = random.Random(51)
    folder = repo / "local-recall" / "episodic-memory"
    answers = [
        ("Use filelock for cross-process dedup", "Two sessions may save the same memory at once."),
        ("Queue worker retry backoff", "The queue worker retries after 1, 4 and 16 minutes."),
        ("Zeitplaner-Konfiguration", "Der Zeitplaner lädt seine Konfiguration aus config.toml."),
        (
            "ProxyHandler renews TLS",
            "The websocket ProxyHandler reconnects on certificate renewal.",
        ),
    ]
    start = datetime(2025, 1, 1, tzinfo=UTC)
    for i in range(count):
        if i < len(answers):
            subject, body = answers[i]
        else:
            words = rng.sample(TOPICS, 5)
            subject = f"{words[0].capitalize()} meets {words[1]} in the {words[2]}"
            body = f"The {words[3]} depends on the {words[4]}; see {rng.choice(TOPICS)}_{i}."
        memory = Memory(
            id=str(uuid.UUID(int=rng.getrandbits(128), version=4)),
            subject=subject,
            body=body,
            keywords=tuple(rng.sample(TOPICS, 2)),
            applies_to="global",
            occurred_at=start + timedelta(hours=i),
            content_hash=content_hash(body),
            source="test",
        )
        (folder / f"{memory.id}.md").write_text(render_memory(memory), encoding="utf-8")
    Recall.open(settings=Settings(root=repo, environ=hook_env(repo))).sync_index()


def warm_answer(service: QueryService, repo: Path, prompt: str) -> str:
    """The daemon's answer to the hook's own request (daemon/hook_requests.py)."""
    request = {
        "op": "answer",
        "kind": "prompt",
        "agent": "claude_code",
        "prompt": prompt,
        "session_id": f"warm-{uuid.uuid4()}",
        "prompt_id": "",
        "hook_env": hook_environment(hook_env(repo)),
    }
    reply = service.handle(request)
    assert reply["ok"] is True
    return str(reply["text"])


def test_with_no_daemon_the_hook_shows_the_memories_the_daemon_would(
    repo: Path, tmp_path: Path
) -> None:
    write_memories(repo)
    recall = Recall.open(settings=Settings(root=repo, environ=hook_env(repo)))
    recall.sync_index()
    service = QueryService(recall, on_transcript_done=lambda path: None, describe=dict)
    imports = ImportLog(tmp_path / "imports")
    env = imports.env(hook_env(repo, PATIENT))
    for prompt in PROMPTS:
        cold = run_hook(
            "user-prompt-submit", prompt_input(prompt, repo), repo, env=env, timeout=150
        )
        assert cold.returncode == 0 and "Traceback" not in cold.stderr
        warm = warm_answer(service, repo, prompt)
        assert warm  # every prompt here has an answer in the store
        assert cold.context() == warm
        # a read takes no lock and redacts nothing: neither is imported on the way
        imported = imports.take()
        assert "local_recall.recall" in imported  # this process searched
        assert not {m for m in imported if m == "filelock" or m.startswith("filelock.")}
        assert not {m for m in imported if m.startswith("local_recall.redaction")}
        assert "lancedb" not in imported
    assert log_text(repo).count("searching in-process") == len(PROMPTS)


def test_the_same_with_a_store_changed_since_the_index(repo: Path) -> None:
    """A memory file that came after the last sync (a pull, a hand edit) is not in the vector
    cache: neither path re-indexes on a prompt, both find it by its words alike."""
    write_memories(repo)
    recall = Recall.open(settings=Settings(root=repo, environ=hook_env(repo)))
    recall.sync_index()
    late = "The export job uploads with the quince backoff table before it pages on-call."
    memory = Memory(
        id=str(uuid.uuid4()),
        subject="Quince backoff for the export uploads",
        body=late,
        keywords=("export",),
        applies_to="global",
        occurred_at=datetime(2025, 6, 1, tzinfo=UTC),
        content_hash=content_hash(late),
    )
    folder = repo / "local-recall" / "episodic-memory"
    (folder / f"{memory.id}.md").write_text(render_memory(memory), encoding="utf-8")
    service = QueryService(recall, on_transcript_done=lambda path: None, describe=dict)
    recall.searcher.load_memories()  # what the daemon's watcher does first: read the file
    prompt = "which quince backoff table do the export uploads use before paging?"
    ran = run_hook("user-prompt-submit", prompt_input(prompt, repo), repo, env=hook_env(repo))
    assert_clean(ran)
    assert late in ran.context()
    assert ran.context() == warm_answer(service, repo, prompt)


MODEL_PROBE = """
import json, os, sys, threading
from pathlib import Path
from local_recall.context.hook_settings import read_hook_settings
from local_recall.hooks.answers import HookRun, answer_session_start, context_in_process
from local_recall.repo.layout import resolve_layout

root, event = Path(sys.argv[1]), sys.argv[2]
environ = dict(os.environ)
run = HookRun("claude_code", event, root, environ,
              read_hook_settings(resolve_layout(root, environ), environ))
if event == "SessionStart":  # the index listed with no daemon: nothing to embed
    answer_session_start(run, "startup", "s-1")
else:
    context = context_in_process(run)  # nothing searched yet
for thread in threading.enumerate():
    if thread.name == "local-recall-model":
        thread.join(60)
print(json.dumps({"onnxruntime": "onnxruntime" in sys.modules}))
"""


@pytest.mark.parametrize(
    ("event", "indexed", "loaded"),
    [
        ("UserPromptSubmit", True, True),
        ("UserPromptSubmit", False, False),
        ("SessionStart", True, False),
    ],
)
def test_the_cold_path_loads_the_model_from_its_start(
    repo: Path, event: str, indexed: bool, loaded: bool
) -> None:
    """The model loads in a thread from the moment the hook knows no daemon answered a prompt,
    beside the library's imports and the catalog's read, rather than after them; without a
    vector cache (never indexed) no query is embedded, and SessionStart only lists: neither
    loads it."""
    if indexed:
        write_memories(repo, count=8)
    done = subprocess.run(
        [sys.executable, "-c", MODEL_PROBE, str(repo), event],
        capture_output=True,
        text=True,
        cwd=repo,
        env=hook_env(repo),
        timeout=150,
        check=True,
    )
    assert json.loads(done.stdout) == {"onnxruntime": loaded}
