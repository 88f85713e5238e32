"""Candidate (b) of issue 21, as a benchmark stand-in: the smallest Python command hook.

    <python> -S -I benchmarks/prompt_latency_client.py   (stdin: Claude Code's hook input)

No site-packages (-S), no environment (-I), json and socket only: reads the prompt, asks the
repository's daemon for its search over the unix socket (the path in state/daemon.socket) and
prints the hits as hook context. It renders less carefully than the real hook (no budget, no
pointers) — it exists to measure what the interpreter's start-up alone costs a prompt, which is
why it was not adopted (docs/hooks.md).
"""

import json
import os
import socket
import sys

data = json.loads(sys.stdin.buffer.read(1 << 20) or b"{}")
root = os.environ.get("CLAUDE_PROJECT_DIR") or data.get("cwd") or "."
prompt = (data.get("prompt") or "")[:2000]
try:
    with open(os.path.join(root, "local-recall", "state", "daemon.socket")) as pointer:
        path = pointer.read().strip()
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    client.settimeout(0.3)
    client.connect(path)
    request = {"op": "search", "query": prompt, "limit": 10, "min_score": 0.5, "with_body": True}
    client.sendall(json.dumps(request).encode() + b"\n")
    reply = b""
    while not reply.endswith(b"\n"):
        chunk = client.recv(65536)
        if not chunk:
            break
        reply += chunk
    hits = json.loads(reply).get("hits") or []
    if hits:
        notes = "\n\n".join(f"{h.get('subject')}\n{h.get('body')}" for h in hits[:5])
        context = f"<local-recall-context>\n{notes[:8000]}\n</local-recall-context>"
        output = {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit"}}
        output["hookSpecificOutput"]["additionalContext"] = context
        os.write(1, json.dumps(output).encode())
except (OSError, ValueError):
    pass
os._exit(0)
