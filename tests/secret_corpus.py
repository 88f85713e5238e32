"""Planted secrets and ordinary snippets for redaction tests (data only).

PLANTED: fake but format-valid secrets (right prefixes, lengths and alphabets), each inside a
realistic sentence or config/code context. ORDINARY: text that must come through untouched.

No secret appears literally in this file: prefixes are split ("gh" + "p_") and bodies come from
a seeded RNG at import time, so GitHub push protection and other scanners do not trip on it and
every run sees the same values. The end-to-end corpus test (CLI/MCP/transcript paths) imports
the same lists.
"""

from __future__ import annotations

import base64
import json
import random
import string
from dataclasses import dataclass, field

_rng = random.Random(20240501)

ALNUM = string.ascii_letters + string.digits
UPPER_DIGITS = string.ascii_uppercase + string.digits
LOWER_DIGITS = string.ascii_lowercase + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"


def rand(alphabet: str, n: int) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(n))


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


@dataclass(frozen=True)
class PlantedSecret:
    kind: str  # the Finding.kind redaction must report for it
    secret: str  # the secret value; it must not survive redaction
    text: str  # a realistic context containing it
    fragments: tuple[str, ...] = field(default=())  # further pieces that must all vanish

    def must_vanish(self) -> tuple[str, ...]:
        return (self.secret, *self.fragments)


PLANTED: list[PlantedSecret] = []


def plant(kind: str, secret: str, template: str, *fragments: str) -> str:
    """Record a planted secret; `template` holds `{s}` where the secret goes."""
    text = template.replace("{s}", secret)
    PLANTED.append(PlantedSecret(kind, secret, text, tuple(fragments)))
    return secret


# --- Anthropic -------------------------------------------------------------------------------
SK = "s" + "k-"


def anthropic_key() -> str:
    return SK + "ant-" + "api03-" + rand(B64URL, 93) + "AA"


def anthropic_admin_key() -> str:
    return SK + "ant-" + "admin01-" + rand(B64URL, 93) + "AA"


plant("anthropic-api-key", anthropic_key(), "export ANTHROPIC_API_KEY={s}\n")
plant(
    "anthropic-api-key",
    anthropic_key(),
    "I exported the key ({s}) and the 401 went away, so the old one was revoked.",
)
plant("anthropic-api-key", anthropic_key(), 'client = anthropic.Anthropic(api_key="{s}")\n')
plant("anthropic-api-key", anthropic_key(), '{"env": {"ANTHROPIC_API_KEY": "{s}"}}')
plant("anthropic-admin-key", anthropic_admin_key(), "Admin key for the usage report: {s}")
plant(
    "anthropic-admin-key",
    anthropic_admin_key(),
    "curl https://api.anthropic.com/v1/organizations/usage -H 'x-api-key: {s}'",
)

# --- OpenAI ----------------------------------------------------------------------------------
plant("openai-api-key", SK + "proj-" + rand(B64URL, 156), "OPENAI_API_KEY={s}")
plant(
    "openai-api-key",
    SK + "proj-" + rand(B64URL, 120),
    "The eval harness reads the key from settings.toml: openai_key = '{s}'",
)
plant(
    "openai-api-key",
    SK + rand(ALNUM, 20) + "T3Blbk" + "FJ" + rand(ALNUM, 20),
    'Old notebook still had openai.api_key = "{s}" in cell 3.',
)
plant("openai-api-key", SK + "svcacct-" + rand(B64URL, 100), "service account key: {s}")

# --- GitHub ----------------------------------------------------------------------------------
GH = "g" + "h"
for prefix, template in (
    ("p_", "git remote set-url origin https://x-access-token:{s}@github.com/acme/api.git"),
    ("p_", "GITHUB_TOKEN={s} gh pr create --fill"),
    ("o_", "The OAuth app handed back {s} after the device flow."),
    ("s_", "      GH_TOKEN: {s}"),
    ("u_", "user-to-server token {s} expires in 8 hours"),
    ("r_", "refresh token: {s}"),
):
    plant("github-token", GH + prefix + rand(ALNUM, 36), template)
plant(
    "github-token",
    "github" + "_pat_" + rand(ALNUM, 22) + "_" + rand(ALNUM, 59),
    "Fine-grained PAT for the release job: {s} (scoped to acme/api, contents:write).",
)
plant(
    "github-token",
    "github" + "_pat_" + rand(ALNUM, 22) + "_" + rand(ALNUM, 59),
    '{"github": {"token": "{s}"}}',
)

# --- AWS -------------------------------------------------------------------------------------
plant(
    "aws-access-key",
    "AK" + "IA" + rand(UPPER_DIGITS, 16),
    "[default]\naws_access_key_id = {s}\nregion = eu-west-1\n",
)
plant("aws-access-key", "AS" + "IA" + rand(UPPER_DIGITS, 16), "temporary creds: {s} (STS)")
plant(
    "aws-access-key",
    "AK" + "IA" + rand(UPPER_DIGITS, 16),
    "boto3.client('s3', aws_access_key_id='{s}')",
)
AWS_SECRET_1 = rand(B64, 40)
plant(
    "env-assignment",
    AWS_SECRET_1,
    "[default]\naws_access_key_id = AKIA0000000000000000\naws_secret_access_key = {s}\n",
)
plant("env-assignment", rand(B64, 40), "export AWS_SECRET_ACCESS_KEY={s}")
plant("env-assignment", rand(B64, 40), "  AWS_SECRET_ACCESS_KEY: '{s}'")

# --- Private keys ----------------------------------------------------------------------------
DASH5 = "-" * 5


def pem(
    label: str, lines: int, *, escaped: bool = False, end: bool = True
) -> tuple[str, list[str]]:
    """A PEM block and its base64 body lines (every one of them must vanish)."""
    body = [rand(B64, 64) for _ in range(lines)] + [rand(B64, 24) + "=="]
    newline = "\\n" if escaped else "\n"
    parts = [f"{DASH5}BEGIN {label}{DASH5}", *body]
    if end:
        parts.append(f"{DASH5}END {label}{DASH5}")
    return newline.join(parts) + newline, body


for label, context in (
    ("RSA " + "PRIVATE KEY", "Here is the deploy key I generated:\n\n{b}\nUse it for CI only."),
    ("OPENSSH " + "PRIVATE KEY", "~/.ssh/id_ed25519 contents:\n{b}"),
    ("EC " + "PRIVATE KEY", "```\n{b}```\nthat is the signing key for the webhook"),
    ("PRIVATE" + " KEY", "key.pem:\n{b}"),
    ("ENCRYPTED " + "PRIVATE KEY", "The encrypted key is\n{b}and the passphrase is in 1Password."),
):
    _block, _lines = pem(label, 6)
    PLANTED.append(
        PlantedSecret("private-key", _lines[0], context.replace("{b}", _block), tuple(_lines))
    )
_block, _lines = pem("PRIVATE" + " KEY", 8, escaped=True)
PLANTED.append(
    PlantedSecret(
        "private-key",
        _lines[0],
        json.dumps({"type": "service_account", "project_id": "acme-prod"})[:-1]
        + f', "private_key": "{_block}", "client_email": "ci@acme-prod.iam.gserviceaccount.com"}}',
        tuple(_lines),
    )
)
_block, _lines = pem("RSA " + "PRIVATE KEY", 5, end=False)  # truncated paste, no END line
PLANTED.append(
    PlantedSecret(
        "private-key", _lines[0], "The paste got cut off:\n" + _block + "\n", tuple(_lines)
    )
)
_putty_private = tuple(rand(B64, 64) for _ in range(4))
PLANTED.append(
    PlantedSecret(
        "private-key",
        _putty_private[0],
        "PuTTY" + "-User-Key-File-2: ssh-rsa\nEncryption: none\nComment: rsa-key-20240501\n"
        "Public-Lines: 1\n"
        + rand(B64, 64)
        + "\nPrivate-Lines: 4\n"
        + "\n".join(_putty_private)
        + "\nPrivate-MAC: "
        + rand(HEX, 40)
        + "\n",
        _putty_private[1:],
    )
)

# --- JWT -------------------------------------------------------------------------------------


def jwt() -> str:
    header = b64url(b'{"alg":"HS256","typ":"JWT"}')
    claims = {"sub": rand(string.digits, 10), "iat": 1714567890, "exp": 1714571490}
    return f"{header}.{b64url(json.dumps(claims).encode())}.{rand(B64URL, 43)}"


plant("jwt", jwt(), "curl -H 'Authorization: Bearer {s}' https://api.acme.dev/v2/me")
plant("jwt", jwt(), "document.cookie shows session={s}; Path=/; HttpOnly")
plant("jwt", jwt(), "The failing request carried {s} and the server rejected the exp claim.")

# --- Passwords in URLs -----------------------------------------------------------------------
for secret, template in (
    (rand(ALNUM, 18), "DATABASE_URL=postgres://app:{s}@db.internal:5432/app"),
    (rand(ALNUM, 16), "celery broker is amqp://worker:{s}@rabbit.internal:5672//"),
    (rand(ALNUM, 12), "REDIS_URL=redis://:{s}@cache.internal:6379/0"),
    (
        rand(ALNUM, 10) + "@" + rand(ALNUM, 6),
        "engine = create_engine('mysql://root:{s}@localhost/shop')",
    ),
    (rand(ALNUM, 20), "Cloned with https://deploy:{s}@git.acme.dev/platform/infra.git"),
):
    plant("password-in-url", secret, template)

# --- Assignments (.env, YAML, JSON, code, headers) -------------------------------------------
for secret, template in (
    (rand(ALNUM, 24), "DB_PASSWORD={s}\nDB_HOST=localhost\n"),
    (rand(ALNUM + "!@#%^*", 20), 'SECRET_KEY="{s}"'),
    (rand(ALNUM, 32), "export JWT_SECRET={s}"),
    (rand(ALNUM, 40), "client_id: web-frontend\nclient_secret: {s}\n"),
    (rand(ALNUM, 16) + "!", '{"username": "svc-report", "password": "{s}"}'),
    (rand(ALNUM, 22), 'password = "{s}"  # TODO move to vault'),
    (rand(ALNUM, 18), "SMTP_PASS={s}"),
    (rand(ALNUM, 20), "services:\n  db:\n    environment:\n      - POSTGRES_PASSWORD={s}\n"),
    (rand(ALNUM, 28), "spring.datasource.password={s}"),
    (rand(ALNUM, 32), '[api]\napi_key = "{s}"\n'),
    (rand(HEX, 32), "X-Api-Key: {s}"),
    (rand(ALNUM, 30), "https://api.weather.example/v1/forecast?city=Oslo&api_key={s}&units=metric"),
    (rand(ALNUM, 24), "SESSION_SECRET: {s}"),
    (base64.b64encode(rand(ALNUM, 18).encode()).decode(), "data:\n  password: {s}\n"),
    (rand(ALNUM, 26), "const config = { apiKey: '{s}', region: 'eu' };"),
    (rand(ALNUM, 21), "DefaultEndpointsProtocol=https;AccountName=acmelogs;Password={s};"),
):
    plant("env-assignment", secret, template)

plant("secret-flag", rand(ALNUM, 16), "mysql -u root --password={s} shop < dump.sql")
plant(
    "secret-flag",
    rand(ALNUM, 20) + "9",
    "docker login registry.acme.dev --username ci --password {s}",
)
plant("secret-flag", rand(ALNUM, 30) + "7", "vault login --token {s}")

# --- Google, Slack, Stripe, npm, Hugging Face ------------------------------------------------
plant("google-api-key", "AI" + "za" + rand(B64URL, 35), "Maps key in index.html: {s}")
plant("google-api-key", "AI" + "za" + rand(B64URL, 35), "GOOGLE_API_KEY={s}")
plant("google-oauth-token", "ya" + "29." + rand(B64URL, 120), "access token from gcloud: {s}")
plant("google-client-secret", "GOC" + "SPX-" + rand(B64URL, 28), '"client_secret": "{s}"')
XOX = "x" + "ox"
plant(
    "slack-token",
    XOX + "b-" + rand(string.digits, 12) + "-" + rand(string.digits, 13) + "-" + rand(ALNUM, 24),
    "SLACK_BOT_TOKEN={s}",
)
plant(
    "slack-token",
    XOX
    + "p-"
    + rand(string.digits, 12)
    + "-"
    + rand(string.digits, 12)
    + "-"
    + rand(string.digits, 13)
    + "-"
    + rand(HEX, 32),
    "my user token is {s}, don't share it",
)
plant(
    "slack-token",
    "x" + "app-1-A" + rand(UPPER_DIGITS, 10) + "-" + rand(string.digits, 13) + "-" + rand(HEX, 64),
    "Socket mode app token: {s}",
)
plant(
    "slack-webhook",
    "T" + rand(UPPER_DIGITS, 8) + "/B" + rand(UPPER_DIGITS, 10) + "/" + rand(ALNUM, 24),
    "Alerts post to https://hooks.slack.com/services/{s}",
)
plant(
    "slack-webhook",
    "T" + rand(UPPER_DIGITS, 10) + "/B" + rand(UPPER_DIGITS, 11) + "/" + rand(ALNUM, 24),
    'webhook_url = "https://hooks.slack.com/services/{s}"',
)
plant("stripe-key", "sk" + "_live_" + rand(ALNUM, 99), "STRIPE_SECRET_KEY={s}")
plant("stripe-key", "rk" + "_live_" + rand(ALNUM, 24), "restricted key for the reporting job: {s}")
plant("stripe-key", "sk" + "_test_" + rand(ALNUM, 24), "stripe.api_key = '{s}'")
plant("stripe-key", "wh" + "sec_" + rand(ALNUM, 32), "STRIPE_WEBHOOK_SECRET={s}")
plant("npm-token", "np" + "m_" + rand(ALNUM, 36), "NPM_TOKEN={s} npm publish")
plant("npm-token", "np" + "m_" + rand(ALNUM, 36), "//registry.npmjs.org/:_authToken={s}\n")
plant("huggingface-token", "h" + "f_" + rand(ALNUM, 34), "huggingface-cli login --token {s}")

# --- Headers -----------------------------------------------------------------------------------
plant(
    "bearer-token",
    rand(ALNUM, 40),
    "requests.get(url, headers={'Authorization': 'Bearer {s}'})",
)
plant("bearer-token", rand(B64URL, 64), "Authorization: Bearer {s}")
plant(
    "basic-auth",
    base64.b64encode(f"deploy:{rand(ALNUM, 16)}".encode()).decode(),
    "curl -H 'Authorization: Basic {s}' https://ci.acme.dev/api/json",
)

# --- Kinds detect-secrets knows ----------------------------------------------------------------
plant("sendgrid-key", "S" + "G." + rand(B64URL, 22) + "." + rand(B64URL, 43), "SENDGRID_KEY is {s}")
plant("twilio-key", "S" + "K" + rand(HEX, 32), "Twilio API key {s} belongs to the notify service")
plant("gitlab-token", "gl" + "pat-" + rand(B64URL, 20), "GitLab token: {s}")
plant(
    "pypi-token",
    "py" + "pi-" + "AgEIcHlwaS5vcmc" + rand(B64URL, 120),
    "[pypi]\n  username = __token__\n  password = {s}\n",
)
plant(
    "telegram-bot-token",
    rand(string.digits, 10) + ":" + "AA" + rand(B64URL, 33),
    "The bot answers with token {s} configured in BotFather.",
)
plant(
    "discord-bot-token",
    "M" + rand(B64URL, 23) + "." + rand(B64URL, 6) + "." + rand(B64URL, 27),
    "discord bot token {s}",
)
plant("mailchimp-key", rand(HEX, 32) + "-us12", "Mailchimp: {s}")
plant("square-oauth-secret", "sq0" + "csp-" + rand(B64URL, 43), "square secret {s}")
plant(
    "azure-storage-key",
    rand(B64, 86) + "==",
    "DefaultEndpointsProtocol=https;AccountName=acmelogs;AccountKey={s};"
    "EndpointSuffix=core.windows.net",
)
plant("artifactory-token", "AK" + "Cp" + rand(ALNUM, 69), "artifactory key: {s} for the mirror")

plant(
    "mongodb-connection-string",  # Betterleaks' rule; only the password is redacted
    rand(ALNUM, 14),
    "mongosh 'mongodb+srv://admin:{s}@cluster0.ab1cd.mongodb.net/prod'",
)

# --- Formats that reached memory files before Betterleaks' rules, in prose -------------------
plant(
    "shopify-access-token",
    "shp" + "at_" + rand(HEX, 32),
    "The Shopify admin token {s} came from the custom app we set up for the storefront.",
)
plant(
    "mailgun-key",
    "ke" + "y-" + rand(HEX, 32),
    "Mailgun still uses the legacy {s} for the transactional domain, rotate it later.",
)
plant(
    "vault-service-token",
    "hv" + "s." + rand(B64URL, 94),
    "I logged in to Vault with {s} and read the database role from there.",
)
plant(
    "digitalocean-pat",
    "dop" + "_v1_" + rand(HEX, 64),
    "doctl auth init worked once I pasted {s} as the access token.",
)
plant(
    "age-secret-key",
    "AGE-" + "SECRET-KEY-1" + rand("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58),
    "The sops recipients file is fine; the identity I decrypt with is {s} on my laptop.",
)
plant(
    "linear-api-key",
    "lin" + "_api_" + rand(ALNUM, 40),
    "For the Linear sync I created a personal key, {s}, with read access only.",
)
plant(
    "grafana-service-account-token",
    "gl" + "sa_" + rand(ALNUM, 32) + "_" + rand(HEX, 8),
    "Grafana's service account for dashboards-as-code uses {s} since Tuesday.",
)
plant(
    "password-in-prose",
    "hunter2-" + rand(ALNUM, 6),
    "Quick note to self: my password is {s} until the rotation on Monday.",
)
plant(
    "password-in-prose",
    rand(ALNUM, 10) + "!9",
    "The root password for db-prod-1 was {s} and it is written nowhere else.",
)
plant(
    "secret-in-prose",
    rand(ALNUM, 28) + "7",
    "The webhook token is {s}, keep it out of the repo.",
)

SECRETS: list[str] = [p.secret for p in PLANTED]
KINDS: frozenset[str] = frozenset(p.kind for p in PLANTED)

# ---------------------------------------------------------------------------------------------
# Ordinary text that must not be redacted.

_sha = [rand(HEX, 40) for _ in range(3)]
_sha256 = [rand(HEX, 64) for _ in range(3)]
_uuid = [
    "3f2b8c1e-9a4d-4e7f-8b6a-2c1d0e9f8a7b",
    "0c9a5d3e-1b2f-4a8c-9e7d-6f5a4b3c2d1e",
]

# What a rule for a weak vendor prefix (`s.`, `00`, `secret_`, `pat`, `1//0`) could
# take by mistake, and the hashes, ids, blobs, package names and versions around them.
LOOK_ALIKES: list[str] = [
    # `s.` + 24: member access and names
    "s.AcceptanceTimeoutSeconds = 30",
    "self.s.makeKubeConfigController(args)",
    "parts = s.split(); s.strip(); s.encode('utf-8')",
    "s.getElementsByClassName1234 returns a list",
    "see s.THISSTRINGISALLUPPERCASE and s.thisstringisalllowercase",
    # `00` + 40: numbers, hashes, zero runs, timestamps
    "00000000",
    "0000000000000000000000000000000000000000000000",
    "git diff 00a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4..HEAD",
    "00112233445566778899aabbccddeeff0011223344556677",
    "00:00:00.000000 and 00-00-0000 are placeholders",
    "0x00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff",
    "00_thousand_separated_long_python_literal_value_x",
    # `secret_` + 43: identifiers
    "secret_key_base = Rails.application.credentials.secret_key_base",
    "secret_ThisIsAVeryLongCamelCaseIdentifierNameHere",
    "secret_sauce_recipe_for_the_weekend_barbecue_party",
    "def secret_manager_client_for_project_and_region_default(): ...",
    # `pat`: words and identifiers
    "pat_matches = [p for p in patterns if p.match(path)]",
    "patternMatcherFactory.compile(pattern).matches(path)",
    "path.join(patterns_dir, 'pat.txt')",
    # `1//0` and friends: floor division, URLs, comments
    "x = 1//0  # raises ZeroDivisionError",
    "half = total_items//2 + 1//2",
    "file:///tmp/a//b and http://1//0",
    "ratio = 1//0.5 if flag else 1//03",
    # hashes, UUIDs, base64 blobs, package names, versions
    "ec2f6a4b9d1e0c7f8a3b5d2e1f0a9b8c7d6e5f4a",
    "3f2b8c1e-9a4d-4e7f-8b6a-2c1d0e9f8a7b",
    "aGVsbG8gd29ybGQgdGhpcyBpcyBhIGxvbmcgYmFzZTY0IGJsb2IgZm9yIHRlc3Rz",
    "npm install @types/node pat-utils secret-sauce fo1-client sbp-tools",
    "pip install dapi-client==1.0.0 pulumi-aws>=6 hvac==2.1.0",
    "Released v1.2.3-rc.1+build.00a1b2 on 2026-11-25",
]

ORDINARY: list[str] = [
    # hashes, ids
    f"commit {_sha[0]}\nAuthor: Dana <dana@example.com>\n\n    fix flaky retry test",
    f"git revert {_sha[1]} && git push",
    f"Bisect says the regression is in {_sha[2][:12]}.",
    f"sha256sum dist/app.tar.gz -> {_sha256[0]}",
    f"image: python:3.11-slim@sha256:{_sha256[1]}",
    f"--hash=sha256:{_sha256[2]}",
    f"memory id {_uuid[0]} superseded {_uuid[1]}",
    f'{{"id": "{_uuid[0]}", "session_id": "{_uuid[1]}", "token_count": 1834}}',
    "0x7ffee4b5c9a8 is the address in the segfault trace",
    "md5 of the fixture is 9e107d9d372bb6826bd81d3542a419d6",
    # lockfiles and checksums
    '"integrity": "sha512-v2kDEe57lecTulaDIuNTPy3Ry4gLGJ6Z1O3vE1krgXZNrsQ+LFTGHVxVjcXPs17Lhb'
    'ZVGedAJv8XZ1tvj5FvSg=="',
    '"resolved": "https://registry.npmjs.org/lodash/-/lodash-4.17.21.tgz"',
    "golang.org/x/net v0.17.0 h1:pVaXccu2ozPjCXewfr1S2xPsPkxy+yqNvsXIv7HsYwk=",
    'checksum = "a1d21d8fcb4b3b4e2f6f3a5d8e0c7b9a1f2e3d4c5b6a7980f1e2d3c4b5a69788"',
    "pip install requests==2.32.3 --require-hashes",
    # base64 fixtures and public material
    'assert base64.b64encode(b"hello world") == b"aGVsbG8gd29ybGQ="',
    "fixture = 'TWFueSBoYW5kcyBtYWtlIGxpZ2h0IHdvcmsu'",
    '<img src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4'
    '2mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==">',
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl dana@laptop",
    DASH5
    + "BEGIN CERTIFICATE"
    + DASH5
    + "\nMIIBszCCAVmgAwIBAgIUQ6N3Kv0sZl8yGm2bZ9dTvP4q7wQwCgYIKoZIzj0EAwIw\n"
    + DASH5
    + "END CERTIFICATE"
    + DASH5,
    DASH5
    + "BEGIN PUBLIC KEY"
    + DASH5
    + "\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEoBUyo8CQAFPeYPvv78ylh5MwFZjT\n"
    + DASH5
    + "END PUBLIC KEY"
    + DASH5,
    "grep -r 'BEGIN RSA PRIVATE KEY' . found nothing, good",
    # versions, paths, URLs without credentials
    "Upgraded to 1.2.3-beta.4+build.567 and Python 3.11.9",
    "Keys live in ~/.ssh/id_ed25519 and ~/.aws/credentials, never in the repo.",
    r"C:\Users\dana\AppData\Local\Temp\pytest-of-dana\pytest-12",
    "/home/dana/src/acme/api/tests/test_tokens.py::test_refresh_rotates",
    "See https://github.com/acme/api/pull/1234#issuecomment-1987654321",
    "git clone git@github.com:acme/api.git && cd api",
    "ssh://git@github.com/acme/infra.git",
    "DATABASE_URL=postgres://localhost:5432/app_test",
    "curl http://[::1]:8080/healthz",
    "https://user@example.com/login has no password in it",
    "[docs](https://example.com/oauth?response_type=code&token_type=bearer)",
    # code that names secrets without containing one
    "password = getpass()",
    'PASSWORD = os.environ["DB_PASSWORD"]',
    "token = None",
    "api_key = settings.ANTHROPIC_API_KEY",
    "client = Anthropic(api_key=api_key)",
    'if token == "":\n    raise MissingToken()',
    "def login(username: str, password: str) -> Session:",
    "    password: SecretStr",
    "    token: str | None = None",
    "response = client.messages.create(model=model, max_tokens=4096)",
    "TOKEN_LIMIT = 8000",
    "TOKEN_TTL_SECONDS=3600",
    'secret_name = "prod/db/credentials"',
    "password_hash = bcrypt.hashpw(password.encode(), bcrypt.gensalt())",
    "public_key = load_pem_public_key(pem_bytes)",
    'cache_key = f"user:{user_id}:token"',
    "primary_key=True, sort_key=lambda row: row.created_at",
    '"tokenizer": "cl100k_base", "input_tokens": 1200, "output_tokens": 310',
    "SSH_AUTH_SOCK=/tmp/ssh-XXXXk2a/agent.4242",
    "authorization = request.headers.get('Authorization')",
    # placeholders
    "API_KEY=<your-key>",
    "ANTHROPIC_API_KEY=xxx",
    "PASSWORD=changeme",
    "TOKEN=${TOKEN}",
    "export OPENAI_API_KEY=$OPENAI_API_KEY",
    'password: "********"',
    '"apiKey": "YOUR_API_KEY_HERE"',
    "Set ANTHROPIC_API_KEY=sk-ant-api03-... before running the evals.",
    "AWS docs use AKIAIOSFODNN7EXAMPLE as the sample access key id.",
    "token: ${{ secrets.GITHUB_TOKEN }}",
    'curl -H "Authorization: Bearer $GITHUB_TOKEN" https://api.github.com/user',
    "Send it as `Authorization: Bearer <token>` on every call.",
    "secretKeyRef:\n  name: db-credentials\n  key: password",
    # prose about secrets
    "The token expires after 3600 seconds; refresh it with the refresh token endpoint.",
    "Rotate the API key monthly and keep it in the vault.",
    "Password: must be at least 12 characters long.",
    "the token: we rotate it every Monday",
    "Use a bearer token in the Authorization header.",
    "use --password to pass it interactively",
    "The password is stored in the vault, never in the repository.",
    "My password is too short for the new policy.",
    "The key is to keep each memory small and specific.",
    "The token is expired, so the CLI asks to log in again.",
    "Your API key is shown once on the settings page; copy it then.",
    "The password was reset yesterday by the on-call engineer.",
    "password: see the team vault entry 'db-prod'",
    "The secret is that nothing here is secret: sha and uuid only.",
    # identifiers, colours, numbers, misc
    "ThisIsAVeryLongIdentifierNameForTestingPurposes123 = make_fixture()",
    "def test_redaction_keeps_surrounding_words_for_env_assignment() -> None:",
    "MLKEM768X25519PrivateKey = rust_openssl.hpke.MLKEM768X25519PrivateKey",
    ".btn-primary { color: #1f2937; background: #FF5733; border-color: rgba(0, 0, 0, 0.5); }",
    "Deployed at 2024-05-01T12:34:56Z (epoch 1714567890), p99 latency 212 ms",
    "Servers 10.0.0.12 and 8.8.8.8 answered; port 5432 was closed.",
    "author: Dana Scully\nauth_method: oauth\nkeyboard_layout: us",
    "| metric | value |\n|---|---|\n| tokens/s | 512 |\n| cache hit | 93% |",
    "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor.",
    "We decided to store memories as markdown with YAML frontmatter so reviews stay readable.",
    "base64url-encoded state is fine here: state=af0ifjsldkj",
    *LOOK_ALIKES,
]


def e2e_rule_samples(every: int = 4) -> list[PlantedSecret]:
    """Samples of the vendored rules for the end-to-end tests (tests/safety/test_corpus.py):
    every `every`-th rule once, its form rotating through FORMS, so that each form goes
    through the real pipeline. Every rule in all four forms is checked on `redact` itself
    (tests/redaction/test_redaction.py)."""
    from tests.secret_rule_samples import FORMS, RULE_SAMPLES

    rules = sorted({s.rule for s in RULE_SAMPLES})
    chosen: list[PlantedSecret] = []
    for n, rule in enumerate(rules[::every]):
        forms = [s for s in RULE_SAMPLES if s.rule == rule]
        sample = next((s for s in forms if s.form == FORMS[n % len(FORMS)]), forms[0])
        chosen.append(PlantedSecret(sample.kind, sample.secret, sample.text))
    return chosen


def e2e_vendor_samples() -> list[PlantedSecret]:
    """One placement of every vendor format of tests/vendor_tokens.py, the phrasing
    rotating, for the end-to-end tests; every format in every phrasing is checked on
    `redact_for_storage` itself (tests/redaction/test_vendor_tokens.py)."""
    import re

    from tests.vendor_tokens import sample

    return [
        PlantedSecret(re.sub(r"[^a-z0-9]+", "-", p.format.name.lower()).strip("-"), p.token, p.text)
        for p in sample()
    ]


# Common words that all-MiniLM-L6-v2's tokenizer keeps whole: 32 tokens for thirty of them,
# where thirty made-up words took ~105. Every memory holding them is embedded (whole text, a
# passage, the paraphrase check's draft) at ~1,000-2,000 tokens a second on 2 shared cores:
# the made-up words were over half of what the MCP and transcript tests embedded. None of
# these looks like a credential (tests/safety/test_corpus.py plants them next to secrets).
_OWN_WORDS_TEXT = """
    apple autumn badger bamboo banana barley basket beacon beaver bishop blanket bottle
    breeze bridge bronze bubble bucket butter cabin cactus camel candle canyon carbon carpet
    carrot castle cattle cellar cherry chimney circus cliff clover cobalt coffee comet
    copper cotton crater cricket crystal dagger daisy desert dolphin donkey dragon eagle
    falcon feather fiddle forest fossil fountain garden garlic ginger glacier goblin granite
    guitar hammer harbor harvest hazel helmet hermit honey hornet island ivory jacket jaguar
    jungle kettle kitten ladder lagoon lantern lemon leopard lizard lobster magnet mango
    maple marble meadow mirror monkey mountain mustard needle nickel oak ocean olive onion
    orange orchard orchid otter oyster paddle palace panther parrot peach pepper pigeon
    pillow pirate planet plum pony potato pumpkin puppet rabbit raven ribbon river robin
    rocket saddle salmon scarf shadow sheep shovel silver sketch sparrow spider sponge
    squirrel statue stone summer sunset swan tablet temple thistle thunder tiger timber
    tomato tower trumpet turkey turtle valley velvet violin walnut wagon whale whistle
    willow window winter wizard wolf yellow zebra anchor arrow bakery barrel beetle blossom
    bonnet boulder buffalo cabbage canoe cedar chapel cheese chestnut cinnamon cloak coral
    cradle crane crown cushion dune fern ferry flute fox frost gravel hedge heron hill iris
    jelly lake lotus lynx marsh meteor mint moose moss moth mule orbit owl panda peanut pear
    penguin pine poppy quartz quilt reef rhino sage seal shell slate snail spruce straw
    sugar toad trout vine violet wheat wren
"""
_OWN_WORDS = tuple(_OWN_WORDS_TEXT.split())


def unlike_the_others(n: int) -> str:
    """Thirty words of its own for the n-th planted memory (picked from 237: two memories share
    about four). Once redacted, memories that differ only by their secret read as one fact, and
    the write path keeps one of them (memory/likeness.py); these words keep every
    secret's memory its own, so each one's redaction is exercised on the way to disk."""
    pick = random.Random(f"unlike-{n}")
    # enough to outweigh a shared template ("$ cat .env ... API_KEY=[REDACTED:…] DEBUG=1")
    return " ".join(pick.choice(_OWN_WORDS) for _ in range(30))
