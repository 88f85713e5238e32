"""Vendor token formats and the phrasings people write them in (data only).

FORMATS: one generator per vendor format, each making a realistic random token of the shape
the vendor issues (prefix, length, alphabet; from the vendors' docs and the gitleaks,
Betterleaks and TruffleHog rule definitions). PHRASINGS: the ways such a token stands in a
memory, a note or a transcript: prose ("I used {v} yesterday", in brackets, quotes, backticks,
at the start of a line, before punctuation) and code (assignment, env, JSON, YAML, URL, header,
command line). Every phrasing names no vendor and no secret-named key, so what catches the
token is its own shape.

Like secret_corpus.py, no token is written here: prefixes are split and bodies come from a
seeded RNG, so scanners do not trip on this file and every run sees the same tokens.
"""

from __future__ import annotations

import base64
import json
import random
import string
from collections.abc import Callable
from dataclasses import dataclass

from tests.secret_corpus import ALNUM, B64, B64URL, HEX, LOWER_DIGITS, UPPER_DIGITS

BECH32 = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"
BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


@dataclass(frozen=True)
class VendorFormat:
    name: str  # vendor and token type, e.g. "New Relic user API key"
    make: Callable[[random.Random], str]  # a fresh random token of this format
    weak: bool = False  # a prefix ordinary text also has (`s.`, `00`, `pat`, `secret_`)
    once_kept: bool = False  # one of the 19 formats once stored verbatim from prose


def _r(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _grafana_cloud(rng: random.Random) -> str:
    claims = {"o": _r(rng, string.digits, 6), "n": f"stack-{_r(rng, string.digits, 6)}-hm-read"}
    claims["k"] = _r(rng, ALNUM, 24)
    return "gl" + "c_" + _b64(json.dumps(claims, separators=(",", ":")).encode())


def _sentry_org(rng: random.Random) -> str:
    claims = {
        "iat": rng.randint(1_700_000_000, 1_800_000_000),
        "url": "https://sentry.io",
        "region_url": "https://us.sentry.io",
        "org": "acme-" + _r(rng, LOWER_DIGITS, 4),
    }
    body = _b64(json.dumps(claims, separators=(",", ":")).encode()).rstrip("=")
    return "sntr" + "ys_" + body + "_" + _r(rng, B64, 43)


def _jwt(rng: random.Random) -> str:
    def part(value: object) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()

    claims = {"sub": _r(rng, string.digits, 8), "iat": rng.randint(1_700_000_000, 1_800_000_000)}
    return f"{part({'alg': 'HS256', 'typ': 'JWT'})}.{part(claims)}.{_r(rng, B64URL, 43)}"


def _f(
    name: str, make: Callable[[random.Random], str], *, weak: bool = False, kept: bool = False
) -> VendorFormat:
    return VendorFormat(name, make, weak, kept)


FORMATS: tuple[VendorFormat, ...] = (
    # --- the 19 formats once stored verbatim from prose ----------------------------------------
    _f("HashiCorp Vault service token", lambda g: "hv" + "s.CAES" + _r(g, B64URL, 91), kept=True),
    _f("HashiCorp Vault legacy token", lambda g: "s." + _r(g, ALNUM, 24), weak=True, kept=True),
    _f("DigitalOcean PAT", lambda g: "dop" + "_v1_" + _r(g, HEX, 64), kept=True),
    _f("Grafana service account token",
       lambda g: "gl" + "sa_" + _r(g, ALNUM, 32) + "_" + _r(g, HEX, 8), kept=True),
    _f("Grafana Cloud token", _grafana_cloud, kept=True),
    _f("Atlassian API token",
       lambda g: "ATA" + "TT3xFfGF0" + _r(g, B64URL, 170) + "=" + _r(g, "0123456789ABCDEF", 8),
       kept=True),
    _f("Postman API key",
       lambda g: "PM" + "AK-" + _r(g, HEX, 24) + "-" + _r(g, HEX, 34), kept=True),
    _f("Pulumi access token", lambda g: "pu" + "l-" + _r(g, HEX, 40), kept=True),
    _f("Sentry organization token", _sentry_org, kept=True),
    _f("Notion integration secret (legacy)",
       lambda g: "sec" + "ret_" + _r(g, ALNUM, 43), weak=True, kept=True),
    _f("Airtable personal access token",
       lambda g: "pa" + "t" + _r(g, ALNUM, 14) + "." + _r(g, HEX, 64), weak=True, kept=True),
    _f("Supabase management token", lambda g: "sb" + "p_" + _r(g, HEX, 40), kept=True),
    _f("New Relic user API key", lambda g: "NR" + "AK-" + _r(g, UPPER_DIGITS, 27), kept=True),
    _f("Heroku API key", lambda g: "HR" + "KU-AA" + _r(g, B64URL, 58), kept=True),
    _f("fly.io token", lambda g: "fo" + "1_" + _r(g, B64URL, 43), kept=True),
    _f("Databricks token", lambda g: "da" + "pi" + _r(g, HEX, 32), kept=True),
    _f("PlanetScale service token", lambda g: "pscale" + "_tkn_" + _r(g, B64URL, 43), kept=True),
    _f("Okta API token", lambda g: "0" + "0" + _r(g, B64URL, 40), weak=True, kept=True),
    _f("Google OAuth refresh token", lambda g: "1/" + "/0" + _r(g, B64URL, 99), kept=True),
    # --- the same two vendors as people paste them: other lengths, other heads -----------------
    _f("Heroku API key, another length",
       lambda g: "HR" + "KU-" + _r(g, B64URL, g.choice((30, 44, 57, 59, 64, 80)))),
    _f("Google OAuth refresh token, any head",
       lambda g: "1/" + "/" + _r(g, ALNUM + "_-", g.choice((31, 36, 60, 103, 180)))),
    # --- formats the rules knew before they were adapted to prose ------------------------------
    _f("Anthropic API key", lambda g: "sk" + "-ant-api03-" + _r(g, B64URL, 93) + "AA"),
    _f("Anthropic admin key", lambda g: "sk" + "-ant-admin01-" + _r(g, B64URL, 93) + "AA"),
    _f("OpenAI project key",
       lambda g: "sk" + "-proj-" + _r(g, B64URL, 74) + "T3Blbk" + "FJ" + _r(g, B64URL, 74)),
    _f("GitHub classic PAT", lambda g: "gh" + "p_" + _r(g, ALNUM, 36)),
    _f("GitHub fine-grained PAT",
       lambda g: "github" + "_pat_" + _r(g, ALNUM, 22) + "_" + _r(g, ALNUM, 59)),
    _f("GitHub OAuth token", lambda g: "gh" + "o_" + _r(g, ALNUM, 36)),
    _f("GitLab PAT", lambda g: "gl" + "pat-" + _r(g, ALNUM + "-_", 20)),
    _f("AWS access key id", lambda g: "AK" + "IA" + _r(g, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)),
    _f("Google API key", lambda g: "AI" + "za" + _r(g, B64URL, 35)),
    _f("Google OAuth access token", lambda g: "ya" + "29." + _r(g, B64URL, 150)),
    _f("Google OAuth client secret", lambda g: "GOC" + "SPX-" + _r(g, B64URL, 28)),
    _f("Slack bot token",
       lambda g: "xo" + "xb-" + _r(g, string.digits, 12) + "-" + _r(g, string.digits, 13)
       + "-" + _r(g, ALNUM, 24)),
    _f("Stripe secret key", lambda g: "sk" + "_live_" + _r(g, ALNUM, 99)),
    _f("Stripe webhook secret", lambda g: "wh" + "sec_" + _r(g, ALNUM, 32)),
    _f("npm token", lambda g: "np" + "m_" + _r(g, ALNUM, 36)),
    _f("Hugging Face token", lambda g: "h" + "f_" + _r(g, string.ascii_letters, 34)),
    _f("SendGrid API key", lambda g: "S" + "G." + _r(g, B64URL, 22) + "." + _r(g, B64URL, 43)),
    _f("Shopify access token", lambda g: "shp" + "at_" + _r(g, HEX, 32)),
    _f("Mailgun API key", lambda g: "ke" + "y-" + _r(g, HEX, 32)),
    _f("Linear API key", lambda g: "lin" + "_api_" + _r(g, ALNUM, 40)),
    _f("age secret key", lambda g: "AGE-" + "SECRET-KEY-1" + _r(g, BECH32, 58)),
    _f("PyPI upload token", lambda g: "py" + "pi-AgEIcHlwaS5vcmc" + _r(g, B64URL, 120)),
    _f("Doppler personal token", lambda g: "dp" + ".pt." + _r(g, ALNUM, 43)),
    _f("HashiCorp Vault batch token", lambda g: "hv" + "b.AAAAAQ" + _r(g, B64URL, 140)),
    _f("DigitalOcean OAuth token", lambda g: "doo" + "_v1_" + _r(g, HEX, 64)),
    _f("Sentry user token", lambda g: "sntr" + "yu_" + _r(g, HEX, 64)),
    _f("Sentry organization token, other payload",
       lambda g: "sntr" + "ys_" + _r(g, B64, 90) + "_" + _r(g, B64, 43)),
    _f("Notion API token",
       lambda g: "nt" + "n_" + _r(g, string.digits, 11) + _r(g, ALNUM, 35)),
    _f("Supabase secret key", lambda g: "sb" + "_secret_" + _r(g, B64URL, 31)),
    _f("New Relic insert key", lambda g: "NR" + "II-" + _r(g, UPPER_DIGITS + "-", 32)),
    _f("New Relic browser key", lambda g: "NR" + "JS-" + _r(g, HEX, 19)),
    _f("PlanetScale password", lambda g: "pscale" + "_pw_" + _r(g, B64URL, 43)),
    _f("JSON Web Token", _jwt),
    _f("Dynatrace API token",
       lambda g: "dt0" + "c01." + _r(g, UPPER_DIGITS, 24) + "." + _r(g, UPPER_DIGITS, 64)),
    _f("Terraform Cloud token",
       lambda g: _r(g, ALNUM, 14) + ".atlas" + "v1." + _r(g, ALNUM, 67)),
    _f("Docker Hub PAT", lambda g: "dckr" + "_pat_" + _r(g, B64URL, 27)),
    _f("Groq API key", lambda g: "gs" + "k_" + _r(g, ALNUM, 52)),
    _f("Perplexity API key", lambda g: "ppl" + "x-" + _r(g, ALNUM, 48)),
    _f("Replicate API token", lambda g: "r" + "8_" + _r(g, ALNUM, 37)),
    _f("Cloudflare user token", lambda g: "cf" + "ut_" + _r(g, ALNUM, 40) + _r(g, HEX, 8)),
    _f("Figma PAT", lambda g: "fi" + "gd_" + _r(g, B64URL, 40)),
    _f("Render API key", lambda g: "rn" + "d_" + _r(g, ALNUM, 28)),
    _f("Vercel PAT", lambda g: "vc" + "p_" + _r(g, B64URL, 56)),
    _f("xAI API key", lambda g: "xa" + "i-" + _r(g, ALNUM, 80)),
    _f("Square OAuth secret", lambda g: "sq0" + "csp-" + _r(g, B64URL, 43)),
    _f("Azure AD client secret",
       lambda g: _r(g, ALNUM, 3) + _r(g, string.digits, 1) + "Q" + "~" + _r(g, ALNUM + "_~.-", 34)),
    _f("Resend API key",
       lambda g: "r" + "e_" + _r(g, BASE58, 8) + "_" + _r(g, BASE58, 24)),
    _f("Twilio API key", lambda g: "S" + "K" + _r(g, HEX, 32), weak=True),
)  # fmt: skip


@dataclass(frozen=True)
class Phrasing:
    name: str
    template: str  # `{v}` is where the token goes
    code: bool = False


PHRASINGS: tuple[Phrasing, ...] = (
    # prose, where the formats above were found
    Phrasing("prose", "I used {v} yesterday for the deploy."),
    Phrasing("after a colon", "the token: {v}"),
    Phrasing("parentheses", "The new one ({v}) works since Monday."),
    Phrasing("backticks", "Set it to `{v}` in the runner."),
    Phrasing("double quotes", 'She pasted "{v}" into the chat.'),
    # where else a token stands in prose
    Phrasing("start of line", "{v} is what the nightly job uses now."),
    Phrasing("before a full stop", "We rotated it to {v}."),
    Phrasing("before a comma", "Try {v}, then the old one."),
    Phrasing("before a question mark", "Was it {v}?"),
    Phrasing("before an exclamation mark", "Finally {v}!"),
    Phrasing("before a semicolon", "Use {v}; the other is revoked."),
    Phrasing("square brackets", "Keys seen: [{v}] and nothing else."),
    Phrasing("angle brackets", "Reply from the bot: <{v}>"),
    Phrasing("single quotes", "Then run it with '{v}' as the argument."),
    Phrasing("bold", "Remember **{v}** for later."),
    Phrasing("list item", "- {v}\n- rotate on Friday\n"),
    Phrasing("table cell", "| prod | {v} | eu-west-1 |"),
    Phrasing("own line", "Here it is:\n\n{v}\n\nkeep it safe"),
    # code
    Phrasing("assignment", 'client = Client("{v}", timeout=30)', code=True),
    Phrasing("env line", "APP_SETTING={v}\nDEBUG=1\n", code=True),
    Phrasing("JSON", '{"value": "{v}", "region": "eu"}', code=True),
    Phrasing("YAML", "service:\n  value: {v}\n  region: eu\n", code=True),
    Phrasing("URL query", "https://api.example.com/v1/items?page=2&value={v}&sort=asc", code=True),
    Phrasing("URL path", "curl https://hooks.example.com/run/{v}/start", code=True),
    Phrasing("header", "X-Service: {v}", code=True),
    Phrasing("command line", "deploy --with {v} --region eu", code=True),
    Phrasing("JSON-escaped line", '"content": "cat out.txt\\n{v}\\nDEBUG=1"', code=True),
)


@dataclass(frozen=True)
class Placed:
    """One token of a format in one phrasing."""

    format: VendorFormat
    phrasing: Phrasing
    token: str
    text: str


def placed(seed: int = 23) -> list[Placed]:
    """Every format in every phrasing, each with a fresh token (seeded: stable across runs)."""
    rng = random.Random(seed)
    return [
        Placed(fmt, phrasing, token, phrasing.template.replace("{v}", token))
        for fmt in FORMATS
        for phrasing in PHRASINGS
        for token in [fmt.make(rng)]
    ]


def sample(seed: int = 23) -> list[Placed]:
    """One placement per format, the phrasing rotating: what the end-to-end paths carry."""
    every = placed(seed)
    count = len(PHRASINGS)
    return [every[n * count + n % count] for n in range(len(FORMATS))]
