"""Keys found by their structure or their context rather than a vendor prefix.

PEM/OpenSSH/PGP/PuTTY private keys (also squeezed onto one line with literal \\n, with odd case or
spacing in the header, or a key body without its header), GCP service-account JSON, JWTs, AWS key
pairs, Azure connection strings and shared access signatures.
"""

from __future__ import annotations

import re

from chalicelib.credentials.checks import b64_json_header, is_wordy, looks_random, pathish

# --- private keys -----------------------------------------------------------------------------
# Any case and spacing: '-----begin rsa private key-----', '----- BEGIN PRIVATE  KEY -----'
_PEM_HEAD = re.compile(
    r"(?i)-{3,5}[ \t]{0,3}BEGIN[ \t]{0,3}[A-Z0-9 \t]{0,24}PRIVATE[ \t]{0,3}KEY(?:[ \t]{0,3}BLOCK)?[ \t]{0,3}-{3,5}"
)
# The first bytes of a private key's DER (PKCS#1 and PKCS#8 RSA, SEC1 and PKCS#8 EC, Ed25519,
# encrypted PKCS#8) or of an OpenSSH key, as base64: a key body pasted without its header.
_KEY_BODY = re.compile(
    r"(?<![A-Za-z0-9+/])(?:MII[A-Za-z0-9+/]{3}IBA(?:AK|DANBgkqhkiG9w0BAQEFAASC)|MHcCAQEEI|MIGkAgEBBDA|MIHcAgEBBEI"
    r"|MIG[A-Za-z0-9+/]AgEAMB[A-Za-z0-9+/]GByqGSM49AgEG|MC4CAQAwBQYDK2VwBCIEI|b3BlbnNzaC1rZXktdjE"
    r"|MI[A-Za-z0-9+/]{1,7}(?:GCSqGSIb3DQEFDT|BgkqhkiG9w0BBQ0w))"
)
_KEY_BODY_PIECES = ("IBAA", "IBAD", "CAQ", "AgE", "b3Bl", "GCSqGSIb3DQ", "BgkqhkiG9w0BBQ0w")  # every anchor holds one
_GCP_KEY_ID = re.compile(r"""["']private_key_id["']\s{0,4}:\s{0,4}["']([0-9a-fA-F]{40})["']""")
_GCP_PEM = re.compile(r"""["']private_key["']\s{0,4}:\s{0,4}["']-{5}BEGIN[A-Z ]{0,24}-{5}""")
_PUTTY = re.compile(r"Private-Lines: ?[0-9]{1,3}")
_B64_LINE = re.compile(r"[A-Za-z0-9+/=]{0,128}")


def _pem_body_random(text: str, start: int) -> bool:
    """The lines after a PEM header hold base64 that looks random (not '...' or '<your key>')."""
    window = text[start : start + 700].replace("\\r", "").replace("\\n", "\n")
    body = ""
    for line in window.split("\n"):
        s = line.strip().strip("\"',")
        if not s or (":" in s and not body):  # blank lines; Proc-Type, DEK-Info, Version headers
            continue
        if s.startswith("---"):
            break
        chunk = _B64_LINE.match(s).group(0)  # type: ignore[union-attr]
        body += chunk
        if len(chunk) < len(s) or len(body) >= 64:
            break
    return len(body) >= 40 and looks_random(body[:128], max_run=None)


def find_private_key(text: str, low: str) -> str | None:
    """A private key block (or a GCP service account holding one) whose body is not a placeholder."""
    if "private_key" in text and ("service_account" in text or "gserviceaccount" in text):
        m = _GCP_KEY_ID.search(text)
        if m and looks_random(m.group(1), classes=2):
            return "gcp_service_account"
        m = _GCP_PEM.search(text)
        if m and _pem_body_random(text, m.end()):
            return "gcp_service_account"
    if "private" in low and "begin" in low:
        for m in _PEM_HEAD.finditer(text):
            if _pem_body_random(text, m.end()):
                return "private_key"
    for m in _KEY_BODY.finditer(text) if any(piece in text for piece in _KEY_BODY_PIECES) else ():
        if _pem_body_random(text, m.start()):
            return "private_key"
    m = _PUTTY.search(text) if "PuTTY-User-Key-File-" in text else None
    if m and _pem_body_random(text, m.end()):
        return "private_key"
    return None


# --- JWTs -------------------------------------------------------------------------------------
_JWT = re.compile(
    r"eyJ(?<![A-Za-z0-9_\-]eyJ)(?P<h>[A-Za-z0-9_\-]{6,2048}+)\.[A-Za-z0-9_\-]{2,4096}+\."
    r"(?P<s>[A-Za-z0-9_\-]{16,2048}+)(?![A-Za-z0-9_\-])"
)


def find_jwt(text: str, low: str) -> str | None:
    """Three base64url parts whose first decodes to a JSON header naming an algorithm."""
    for m in _JWT.finditer(text):
        if b64_json_header("eyJ" + m.group("h")) and looks_random(m.group("s"), max_run=None):
            return "jwt"
    return None


# --- AWS --------------------------------------------------------------------------------------
_AWS_ID = re.compile(r"(?:AKIA|ASIA|ABIA|ACCA)(?<![A-Za-z0-9]....)(?P<b>[A-Z2-7]{16})(?![A-Za-z0-9])")
# Maximal base64 runs (a charset-led regex keeps sre's fast scan); exactly 40 long is the candidate.
_B64_RUN = re.compile(r"[A-Za-z0-9/+]{40,}+")
_AWS_CONTEXT = re.compile(r"(?<![a-z])aws|secret_?access_?key|secret access key|amazon")


def _aws_context(low: str, start: int = 0, end: int | None = None) -> bool:
    window = low[start:end]
    return ("aws" in window or "secret" in window or "amazon" in window) and bool(_AWS_CONTEXT.search(window))


def _aws_secret_like(s: str) -> bool:
    return not pathish(s) and looks_random(s, classes=3) and not is_wordy(s)


def _inside_pem(text: str, at: int) -> bool:
    begin = text.rfind("-----BEGIN", 0, at)
    return begin >= 0 and text.rfind("-----END", 0, at) < begin


def find_aws_key(text: str, low: str) -> str | None:
    """An AWS access key id, or a 40-character secret access key near AWS words or a key id."""
    key_id = any(looks_random(m.group("b"), classes=1) for m in _AWS_ID.finditer(text))
    if key_id or _aws_context(low):
        for m in _B64_RUN.finditer(text):
            a, b = m.span()
            # AWS secrets are standard base64: 40 characters of a base64url, dotted or padded string are not one.
            if b - a != 40 or (a and text[a - 1] in "_-.") or text[b : b + 1] in ("=", "_", "-"):
                continue
            near = key_id or _aws_context(low, max(0, a - 200), b + 100)
            if near and _aws_secret_like(m.group(0)) and not _inside_pem(text, a):
                return "aws_secret_access_key"
    return "aws_access_key_id" if key_id else None


# --- Azure ------------------------------------------------------------------------------------
_AZURE = re.compile(r"(?i)(?:accountkey|sharedaccesskey)\s{0,3}=\s{0,3}([A-Za-z0-9+/]{20,200}+)={0,2}")


# A shared access signature: the `sig` HMAC (base64, usually URL-encoded) beside the SAS fields.
_SAS_SIG = re.compile(r"(?<![A-Za-z0-9_\-])sig=(?P<s>(?:[A-Za-z0-9+/]|%2[BbFf]){30,120}+)(?:%3[Dd]|=){0,2}")
_SAS_FIELDS = re.compile(r"(?<![a-z])(?:sv|se|sp|spr|srt|ss|sr|st|skoid)=")


def find_azure_key(text: str, low: str) -> str | None:
    """An Azure storage or Service Bus connection string's account or shared access key, or a SAS token."""
    if "accountkey" in low or "sharedaccesskey" in low:
        for m in _AZURE.finditer(text):
            if looks_random(m.group(1), max_run=None):
                return "azure_connection_string"
    if "sig=" in text and _SAS_FIELDS.search(low):
        for m in _SAS_SIG.finditer(text):
            sig = m.group("s").replace("%2B", "+").replace("%2b", "+").replace("%2F", "/").replace("%2f", "/")
            if len(sig) >= 40 and looks_random(sig, max_run=None):
                return "azure_sas_token"
    return None
