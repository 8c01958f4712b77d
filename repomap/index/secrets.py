"""Credentials kept out of the index: redaction of text elements, and files never indexed.

The index is served to agents, so a hard-coded credential in a string literal or comment is
replaced by `[REDACTED]` in `content` (its location is kept), and likewise in the symbols
table's `signature` (`API_KEY = "…"` headers) and `doc` (docstrings, doc comments). Detected:
- well-known key formats: AWS access key ids, GitHub tokens, GitLab tokens, Slack tokens and
  webhooks, Stripe live/test secret keys, Google API keys, OpenAI/Anthropic-style `sk-` keys,
  npm and PyPI tokens, JSON Web Tokens;
- PEM private key blocks (`-----BEGIN … PRIVATE KEY-----` … `-----END … PRIVATE KEY-----`);
- high-entropy strings assigned to a name that says it is secret (`password`, `passwd`,
  `secret`, `token`, `api_key`, `apikey`, `access_key`, `private_key`, `credentials`, `auth`),
  e.g. `DB_PASSWORD = "hX9!kq2Lr0pZ"` — the value must be 8+ characters with no spaces and look
  random (Shannon entropy ≥ 3.0 bits per character), so `password = "password"` or prose stays.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable

REDACTED = "[REDACTED]"

_KEY_FORMATS = re.compile(
    "|".join(
        (
            r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b",  # AWS access key id
            r"\bgh[pousr]_[A-Za-z0-9]{36,255}\b",  # GitHub tokens
            r"\bgithub_pat_[A-Za-z0-9_]{22,255}\b",
            r"\bglpat-[A-Za-z0-9_\-]{20,}\b",  # GitLab
            r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b",  # Slack tokens
            r"https://hooks\.slack\.com/services/[A-Za-z0-9/]{20,}",
            r"\b[sr]k_(?:live|test)_[A-Za-z0-9]{16,}\b",  # Stripe
            r"\bAIza[0-9A-Za-z_\-]{35}\b",  # Google API key
            r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_\-]{32,}\b",  # OpenAI / Anthropic style
            r"\bnpm_[A-Za-z0-9]{36}\b",
            r"\bpypi-[A-Za-z0-9_\-]{50,}\b",
            r"\beyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}\b",  # JWT
        )
    )
)
_PRIVATE_KEY = re.compile(
    r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\Z)",
    re.S,
)
# The names a secret is assigned to, each under the lower-case letters it starts with (for
# _could_name_secret's quick test): one table, so the pattern and the test cannot drift apart.
_NAMES_BY_START = {
    "passw": r"passw(?:or)?d",
    "pwd": "pwd",
    "secret": "secret",
    "token": "token",
    "api": r"api[_-]?key",
    "access": r"access[_-]?key",
    "private": r"private[_-]?key",
    "credential": r"credentials?",
    "auth": "auth",
}
_SECRET_NAME = re.compile(
    rf"(?i)(?:{'|'.join(_NAMES_BY_START.values())})"
    r"[\w\-]*['\"]?(?:\s*:\s*[\w\[\].,|&<> ]+?)?\s*(?::=|=>|[:=])\s*[rbuRBUL8]{0,2}['\"]?$"
)
_QUICK = re.compile(
    r"AKIA|ASIA|AGPA|AIDA|AROA|gh[pousr]_|github_pat_|glpat-|xox|hooks\.slack|k_live_|k_test_|AIza|sk-|npm_|pypi-|eyJ|PRIVATE KEY"
)


def entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


def looks_random(value: str) -> bool:
    return len(value) >= 8 and not any(c.isspace() for c in value) and entropy(value) >= 3.0


def redact(content: str, line_text: str | None = None) -> str:
    """`content` with credentials replaced; `line_text` is the source line a literal starts on."""
    if _QUICK.search(content):
        content = _PRIVATE_KEY.sub(REDACTED, content)
        content = _KEY_FORMATS.sub(REDACTED, content)
    if line_text is not None and could_be_assigned_secret(content):
        at = line_text.find(content[:40])
        before = line_text[:at] if at >= 0 else line_text
        tail = before[-80:].rstrip()
        if _could_name_secret(tail) and _SECRET_NAME.search(tail) and looks_random(content):
            return REDACTED
    return content


def could_hold_key(text: str) -> bool:
    """False only when redact(text) with no source line gives `text` back: no key format or
    private key block can start in it. None of them holds a line break, so one search over
    many texts joined by newlines answers for each of them."""
    return _QUICK.search(text) is not None


def _could_name_secret(text: str) -> bool:
    """False only when _SECRET_NAME cannot match in `text`: ASCII text holding none of the
    names in any case (a few substring tests, where the pattern's case-insensitive search at
    each position cost ~0.1 s of Django's 47k candidate literals). Other text always could:
    `(?i)` also matches characters that fold to these letters."""
    if not text.isascii():
        return True
    lowered = text.lower()
    return any(start in lowered for start in _NAMES_BY_START)


def redact_header(header: str, hidden: Iterable[str] = ()) -> str:
    """A symbol's signature with credentials replaced: key formats, and `hidden`, the literals
    redacted in the same file, which a constant's `NAME = "value"` header repeats (cut short
    at its length limit too: from the value's first 8 characters on)."""
    clean = redact(header)
    # In one order whatever order they come in (a set's order changes with the hash seed, and
    # two values can share their first 8 characters): longest first, then by text.
    for value in sorted(hidden, key=lambda value: (-len(value), value)):
        if value in clean:
            clean = clean.replace(value, REDACTED)
            continue
        at = clean.find(value[:8])
        if at >= 0:
            clean = clean[:at] + REDACTED + clean[at + len(value) :]
    return clean


def could_be_assigned_secret(content: str) -> bool:
    """Cheap pre-check: only such literals are worth reading their source line for."""
    return 8 <= len(content) <= 512 and " " not in content and "\n" not in content


# Files whose whole purpose is to hold secrets; discovery never hands them to an indexer.
_SECRET_FILE = re.compile(
    r"(?:^|/)(?:\.env(?:\..*)?|\.envrc|\.netrc|\.pgpass|\.npmrc|\.pypirc|id_(?:rsa|dsa|ecdsa|ed25519)"
    r"|.*\.(?:pem|key|p12|pfx|jks|keystore|asc|gpg)|credentials(?:\.json)?|secrets?\.(?:json|ya?ml|toml))$"
)


def is_secret_file(rel_path: str) -> bool:
    """True for `.env`, key files and credential stores, which are never indexed or served."""
    return bool(_SECRET_FILE.search(rel_path))
