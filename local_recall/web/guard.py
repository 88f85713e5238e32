"""Who may use the viewer: a pure decision over one request's method, path, headers and query
token (app.py applies it to every request). Details and reasons: docs/ui.md#security.

- The server listens on 127.0.0.1 only, and the Host header must name it (a DNS-rebinding page
  on another name is refused).
- Everything but the page and its static files (which hold no data) needs the random token: in
  the `X-Recall-Token` header, or, for reads only, in the `token` query parameter (the event
  stream, which browsers open without custom headers).
- A change (any method but GET/HEAD) needs the header — a cross-site form cannot set one, and no
  CORS preflight is ever answered — a same-origin `Origin` (or `Sec-Fetch-Site`) and a JSON body.
"""

from __future__ import annotations

import hmac
from collections.abc import Collection, Mapping
from dataclasses import dataclass

TOKEN_HEADER = "x-recall-token"  # noqa: S105 - a header name, not a secret
READS = frozenset({"GET", "HEAD"})
PUBLIC_PREFIXES = ("/static/",)
# The page itself is static code like /static/ (no data): the token reaches it in the URL's
# fragment, which a browser never sends (docs/ui.md#security).
PUBLIC_PATHS = frozenset({"/", "/favicon.ico"})

SECURITY_HEADERS: Mapping[str, str] = {
    "content-security-policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
    "cross-origin-resource-policy": "same-origin",
    "cache-control": "no-store",
}


@dataclass(frozen=True, slots=True)
class Refusal:
    status: int  # 401: no token; 403: wrong token, foreign host or origin
    reason: str


def _same(given: str | None, token: str) -> bool:
    return given is not None and hmac.compare_digest(given.encode(), token.encode())


def refuse(  # noqa: PLR0911 - one return per rule reads best
    method: str,
    path: str,
    headers: Mapping[str, str],
    query_token: str | None,
    *,
    token: str,
    hosts: Collection[str],
) -> Refusal | None:
    """None when the request may go on; else why not. `headers` have lower-case names."""
    if headers.get("host", "") not in hosts:
        return Refusal(403, "unknown host")
    if method in READS and (path in PUBLIC_PATHS or path.startswith(PUBLIC_PREFIXES)):
        return None
    header_token = headers.get(TOKEN_HEADER)
    if method in READS:
        given = header_token if header_token is not None else query_token
        if given is None:
            return Refusal(401, "a token is required: open the URL `local-recall ui` printed")
        return None if _same(given, token) else Refusal(403, "wrong token")
    if header_token is None:
        return Refusal(401, f"a change needs the {TOKEN_HEADER} header")
    if not _same(header_token, token):
        return Refusal(403, "wrong token")
    origin = headers.get("origin")
    if origin is not None and origin not in {f"http://{host}" for host in hosts}:
        return Refusal(403, "cross-origin request refused")
    if origin is None and headers.get("sec-fetch-site", "same-origin") != "same-origin":
        return Refusal(403, "cross-site request refused")
    if headers.get("content-type", "").split(";")[0].strip() != "application/json":
        return Refusal(415, "send JSON")
    return None


def allowed_hosts(port: int) -> frozenset[str]:
    return frozenset({f"127.0.0.1:{port}", f"localhost:{port}"})
