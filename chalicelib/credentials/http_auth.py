"""Credentials carried by HTTP and database URLs (user:password@host) and Authorization headers."""

from __future__ import annotations

import re
from urllib.parse import unquote

from chalicelib.credentials.checks import b64_decode, secret_value, url_password

# --- URLs with a password ---------------------------------------------------------------------
_USERINFO = re.compile(r"//(?P<user>[^\s:/?#@\"'<>\[\]]{0,128}+):(?P<pw>[^\s/?@\"'<>]{1,256}+)@[A-Za-z0-9\[]")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]{0,24}$")
_DB_SCHEMES = frozenset(
    "postgres postgresql postgis mysql mysql2 mysqlx mariadb mongodb redis rediss amqp amqps mssql "
    "sqlserver oracle cockroachdb clickhouse couchdb couchbase neo4j bolt cassandra memcached "
    "snowflake db2 odbc influxdb timescale".split()
)


def find_url_password(text: str, low: str) -> str | None:
    """A URL whose userinfo holds a password: ``database_url`` for database schemes, else ``url_password``."""
    if "://" not in text or "@" not in text:
        return None
    at = text.find("://")
    while at >= 0:  # from each '://', read the userinfo forwards and the scheme backwards
        m = _USERINFO.match(text, at + 1)
        user, pw = (m.group("user"), unquote(m.group("pw"))) if m else ("", "")
        if m and url_password(user, pw) and (user or ":" not in pw):  # cvs://:pserver:anoncvs@host is a method
            scheme = _SCHEME.search(text, max(0, at - 25), at)
            name = scheme.group(0).lower().split("+")[0] if scheme else ""
            return "database_url" if name in _DB_SCHEMES else "url_password"
        at = text.find("://", at + 3)
    return None


# --- Authorization headers --------------------------------------------------------------------
_BEARER = re.compile(
    r"(?i)(?<![a-z])bearer(?:[ \t]{1,4}token)?[ \t]{0,4}[:=]?[ \t]{1,4}([A-Za-z0-9\-._~+/]{8,1024}+=*)"
)
_AUTH = re.compile(
    r"(?i)authorization[\"']?[ \t]{0,4}[:=][ \t]{0,4}[\"']?(?:(basic)|token|apikey)?"
    r"[ \t]{0,4}([A-Za-z0-9\-._~+/]{8,1024}+=*)"
)


_SCHEME_WORD = re.compile(r"[ \t]+[A-Za-z]")  # 'AWS4-HMAC-SHA256 Credential=...': a scheme name, not a token


def find_auth_header(text: str, low: str) -> str | None:
    """A bearer or token value that looks generated, or a basic-auth pair that holds a password."""
    if "bearer" in low:
        for m in _BEARER.finditer(text):
            if secret_value(m.group(1)):
                return "bearer_token"
    if "authorization" in low:
        for m in _AUTH.finditer(text):
            value = m.group(2)
            if m.group(1):
                raw = b64_decode(value, urlsafe=False)
                pair = raw.decode("utf-8", "replace") if raw else ""
                if pair.isprintable() and ":" in pair and url_password(*pair.split(":", 1)):
                    return "basic_auth"
            elif secret_value(value) and not _SCHEME_WORD.match(text, m.end()):
                return "bearer_token"
    return None
