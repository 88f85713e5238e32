"""The one module that imports the `ollama` client (and httpx, its transport): where the Ollama
host comes from, how a client is made, and what its failures mean in our terms.

Both Ollama users — the embedder (search/embedders) and the chat extractor (capture) — get a
client here and turn an exception into an `OllamaFailure`, then into their own error type. The
host is resolved from values passed in (config, then $OLLAMA_HOST of the environment given),
never from the process environment."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal
from urllib.parse import urlsplit

from local_recall.errors import ConfigError, RecallError
from local_recall.text import one_line

DEFAULT_HOST: Final = "http://127.0.0.1:11434"
_DEFAULT_PORT: Final = 11434

FailureKind = Literal["model_missing", "http", "timeout", "unreachable", "transport"]


@dataclass(frozen=True, slots=True)
class OllamaFailure:
    """Why a call failed. `detail` is one line (HTTP body or transport message, ≤ 200 chars)."""

    kind: FailureKind
    detail: str = ""
    status: int | None = None


def normalise_host(value: str) -> str:
    """'127.0.0.1' -> 'http://127.0.0.1:11434'; keeps an explicit scheme, port and path."""
    text = value.strip()
    parts = urlsplit(text if "://" in text else "http://" + text)
    if not parts.hostname:
        raise ConfigError(f"not an Ollama host URL: {value!r}")
    try:
        port = parts.port
    except ValueError as error:
        raise ConfigError(f"not an Ollama host URL: {value!r} ({error})") from None
    netloc = parts.netloc
    if port is None:
        netloc += ":443" if parts.scheme == "https" else f":{_DEFAULT_PORT}"
    return f"{parts.scheme}://{netloc}{parts.path.rstrip('/')}"


def resolve_host(explicit: str | None, environ: Mapping[str, str]) -> str:
    """The argument if given, else $OLLAMA_HOST (as the ollama CLI reads it), else localhost."""
    for candidate in (explicit, environ.get("OLLAMA_HOST")):
        if candidate and candidate.strip():
            return normalise_host(candidate)
    return DEFAULT_HOST


def make_client(host: str, timeout: float, *, unavailable: type[RecallError]) -> Any:
    """An `ollama.Client` (typed Any: the package carries partial annotations). Without the
    package installed, raises `unavailable` with the install hint."""
    try:
        import ollama
    except ImportError:
        raise unavailable("Ollama needs the ollama client; run `pip install ollama`") from None
    return ollama.Client(host=host, timeout=timeout)


def classify_failure(error: Exception) -> OllamaFailure | None:
    """What an exception raised by a client call means; None for anything that is not an
    Ollama or transport failure (a bug: the caller re-raises it)."""
    import httpx
    import ollama

    if isinstance(error, ollama.ResponseError):
        detail = one_line(str(error.error), 200)
        if error.status_code == 404:
            return OllamaFailure("model_missing", detail, 404)
        return OllamaFailure("http", detail, error.status_code)
    if isinstance(error, httpx.TimeoutException):
        return OllamaFailure("timeout")
    if isinstance(error, ConnectionError | httpx.ConnectError):
        return OllamaFailure("unreachable")
    if isinstance(error, httpx.HTTPError | ValueError):  # ValueError: a malformed response
        return OllamaFailure("transport", f"{type(error).__name__}: {one_line(str(error), 200)}")
    return None
