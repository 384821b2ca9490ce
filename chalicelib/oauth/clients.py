"""OAuth clients as Authlib sees them: registered (RFC 7591) or named by a metadata document's URL, redirect URIs exact.

Two ways a client is known:
- **Dynamic Client Registration**: `POST /oauth/register` stores its metadata (storage/oauth.py); its id is random.
- **Client ID Metadata Document**: the client id is an https URL serving its metadata (`client_id` equal to that
  URL, `redirect_uris`, `client_name`); fetched when the client shows up, cached here for `DOCUMENT_SECONDS`.
  It is a public client (`token_endpoint_auth_method: none`). Plain http only for the stage's
  `insecure_metadata_hosts` (the local tests' 127.0.0.1).
Either way every redirect URI must be https on a host of the stage's `redirect_hosts`, or a loopback address
(RFC 8252) when the stage lists it; no fragment, no user info. A person's browser is only ever sent to one of
these, compared exactly.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from authlib.oauth2.rfc6749 import ClientMixin

from chalicelib.config import OAuthSettings
from chalicelib.oauth import fetch, names

AUTH_METHODS = ("none", "client_secret_post", "client_secret_basic")
GRANT_TYPES = ("authorization_code", "refresh_token")
DOCUMENT_SECONDS = 300
REFUSED_SECONDS = 60  # a document that could not be fetched or used is not asked for again for a minute
MAX_REDIRECT_URIS = 10
MAX_NAME_CHARACTERS = names.MAX_NAME_CHARACTERS
LOOPBACK = {"127.0.0.1", "localhost", "[::1]"}

_lock = threading.Lock()
_documents: dict[str, tuple[float, OAuthClient | None]] = {}  # per container; None: refused
clock = time.monotonic


class ClientRefused(ValueError):
    """Client metadata that cannot be accepted; the message names the field, never echoes a value."""


@dataclass(frozen=True)
class OAuthClient(ClientMixin):
    client_id: str
    name: str
    uri: str | None
    redirect_uris: tuple[str, ...]
    auth_method: str = "none"
    secret_mac: str | None = None  # HMAC of the client secret under the service key (confidential clients)
    secret_key: bytes = b""

    def get_client_id(self) -> str:
        return self.client_id

    def get_default_redirect_uri(self) -> None:
        return None  # every authorization request names its redirect URI (OAuth 2.1)

    def get_allowed_scope(self, scope: str | None) -> str:
        return ""  # one resource, one kind of access: the connection's (scopes are not used)

    def check_redirect_uri(self, redirect_uri: str) -> bool:
        return redirect_uri in self.redirect_uris  # exact, as registered

    def check_client_secret(self, client_secret: str) -> bool:
        if self.secret_mac is None:
            return False
        return hmac.compare_digest(self.secret_mac, secret_mac(self.secret_key, client_secret))

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        return method == self.auth_method

    def check_response_type(self, response_type: str) -> bool:
        return response_type == "code"

    def check_grant_type(self, grant_type: str) -> bool:
        return grant_type in GRANT_TYPES


def secret_mac(key: bytes, secret: str) -> str:
    import hashlib

    return hmac.new(key, b"oauth-client-secret\0" + secret.encode(), hashlib.sha256).hexdigest()


def is_document_id(client_id: str) -> bool:
    return client_id.startswith(("https://", "http://"))


def check_redirect_uris(value: Any, settings: OAuthSettings) -> tuple[str, ...]:
    if not isinstance(value, list) or not 1 <= len(value) <= MAX_REDIRECT_URIS:
        raise ClientRefused(f"redirect_uris must list 1 to {MAX_REDIRECT_URIS} URIs.")
    for uri in value:
        if not isinstance(uri, str) or len(uri) > 512 or not _allowed_redirect(uri, settings):
            raise ClientRefused("Each redirect URI must be https on an allowed host, or a loopback address.")
    return tuple(value)


def _allowed_redirect(uri: str, settings: OAuthSettings) -> bool:
    if not _url_characters(uri):
        return False
    parts = urlsplit(uri)
    if parts.fragment or "#" in uri or parts.username or parts.password or not parts.hostname:
        return False
    host = parts.hostname if ":" not in parts.hostname else f"[{parts.hostname}]"
    if host in LOOPBACK:  # RFC 8252: a native client listens on a port of the loopback interface (exact here too)
        return parts.scheme in ("http", "https") and host in settings.redirect_hosts
    try:
        ipaddress.ip_address(parts.hostname)
        return False  # no other address: a client names its host
    except ValueError:
        pass
    return parts.scheme == "https" and host in settings.redirect_hosts


def _name(metadata: Mapping[str, Any], fallback: str) -> str:
    name = metadata.get("client_name")
    if name is None:
        return fallback
    if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME_CHARACTERS or not name.isprintable():
        raise ClientRefused(f"client_name must be printable text of at most {MAX_NAME_CHARACTERS} characters.")
    if names.quoted(name) or names.stacked(name):
        raise ClientRefused("client_name may hold no quotation marks and no more than three marks on a letter.")
    return name.strip()


def _named(name: str, redirect_uris: tuple[str, ...], settings: OAuthSettings) -> str:
    """A name the stage keeps for a known web client only on that client's hosts (oauth/names.py)."""
    if name and not names.may_use(name, redirect_uris, settings.reserved_names):
        raise ClientRefused("client_name is kept for a known client: it may be used only on that client's own hosts.")
    return name


def _uri(metadata: Mapping[str, Any]) -> str | None:
    uri = metadata.get("client_uri")
    if uri is None:
        return None
    if not isinstance(uri, str) or len(uri) > 512 or not _url_characters(uri) or urlsplit(uri).scheme != "https":
        raise ClientRefused("client_uri must be an https URL.")
    if not urlsplit(uri).hostname:
        raise ClientRefused("client_uri must be an https URL.")
    return uri


def _url_characters(uri: str) -> bool:
    """Only what a URL is written with (RFC 3986, ASCII: a host in another script is its IDNA form): no space, quote
    or bracket, so a URL shown on the consent screen ("It gives its site as …") cannot go on as a sentence."""
    return (
        uri.isascii() and not any(c in uri for c in ' "<>\\^`{|}') and all(ord(c) > 0x20 and c != "\x7f" for c in uri)
    )


def registered(client_id: str, metadata: Mapping[str, Any], key: bytes, settings: OAuthSettings) -> OAuthClient | None:
    """A client stored by Dynamic Client Registration, checked again as registration checks it (a stored row is
    hostile: one altered to add a redirect URI, or a name with bidi controls, is not believed); None if it fails.
    The stage's redirect hosts of today apply: removing a host stops the clients registered with it."""
    method = metadata.get("token_endpoint_auth_method", "none")
    try:
        redirect_uris = check_redirect_uris(metadata.get("redirect_uris"), settings)
        name, uri = _named(_name(metadata, client_id), redirect_uris, settings), _uri(metadata)
    except ClientRefused:
        return None
    if method not in AUTH_METHODS:
        return None
    return OAuthClient(
        client_id=client_id,
        name=name,
        uri=uri,
        redirect_uris=redirect_uris,
        auth_method=method,
        secret_mac=metadata.get("secret_mac") if isinstance(metadata.get("secret_mac"), str) else None,
        secret_key=key,
    )


def registration_metadata(body: Mapping[str, Any], settings: OAuthSettings) -> dict[str, Any]:
    """What a registration stores, checked beyond RFC 7591's shapes (Authlib's claims): this server's rules."""
    method = body.get("token_endpoint_auth_method", "client_secret_basic")
    if method not in AUTH_METHODS:
        raise ClientRefused("token_endpoint_auth_method must be none, client_secret_post or client_secret_basic.")
    grants = body.get("grant_types", ["authorization_code"])
    if not isinstance(grants, list) or not set(grants) <= set(GRANT_TYPES):
        raise ClientRefused("grant_types may hold authorization_code and refresh_token only.")
    if body.get("response_types", ["code"]) != ["code"]:
        raise ClientRefused("response_types must be code.")
    redirect_uris = check_redirect_uris(body.get("redirect_uris"), settings)
    metadata: dict[str, Any] = {
        "redirect_uris": list(redirect_uris),
        "token_endpoint_auth_method": method,
        "grant_types": list(GRANT_TYPES),
        "response_types": ["code"],
        "client_name": _named(_name(body, ""), redirect_uris, settings),
    }
    uri = _uri(body)
    if uri:
        metadata["client_uri"] = uri
    if not metadata["client_name"]:
        metadata.pop("client_name")
    return metadata


def from_document(client_id: str, settings: OAuthSettings) -> OAuthClient | None:
    """The client a metadata document URL names, fetched (or cached); None when it cannot be used.

    A refusal is remembered too, for `REFUSED_SECONDS` in this container: a repeated authorize naming the same
    failing URL makes no second outbound fetch (each could hold the function for up to 5 s)."""
    now = clock()
    with _lock:
        cached = _documents.get(client_id)
    if cached is not None and now - cached[0] <= (DOCUMENT_SECONDS if cached[1] is not None else REFUSED_SECONDS):
        return cached[1]
    parts = urlsplit(client_id)
    insecure = parts.scheme == "http" and parts.hostname in settings.insecure_metadata_hosts
    if len(client_id) > 512 or not (parts.scheme == "https" or insecure) or parts.fragment or parts.username:
        return None
    if not parts.path or parts.path == "/" or not client_id.isascii():
        return None
    client = _fetched_client(client_id, parts.hostname or client_id, settings)
    with _lock:
        if len(_documents) > 500:
            _documents.clear()
        _documents[client_id] = (now, client)
    return client


def _fetched_client(client_id: str, host: str, settings: OAuthSettings) -> OAuthClient | None:
    try:
        document = _fetch(client_id, settings)
        if not isinstance(document, dict) or document.get("client_id") != client_id:
            return None
        if document.get("token_endpoint_auth_method", "none") != "none":
            return None
        redirect_uris = check_redirect_uris(document.get("redirect_uris"), settings)
        return OAuthClient(
            client_id=client_id,
            name=_named(_name(document, host), redirect_uris, settings),
            uri=_uri(document),
            redirect_uris=redirect_uris,
        )
    except (ClientRefused, OSError, ValueError):  # FetchRefused is a ValueError
        return None


def _fetch(url: str, settings: OAuthSettings) -> Any:
    """GET the document (chalicelib/oauth/fetch.py: public addresses only, no redirects, 5 s, 16 KiB)."""
    data = fetch.document(url, settings.insecure_metadata_hosts, settings.metadata_ca_file)
    return None if data is None else json.loads(data)


def forget_documents() -> None:
    """Tests: start with no cached document."""
    with _lock:
        _documents.clear()
