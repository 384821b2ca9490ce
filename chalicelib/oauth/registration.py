"""RFC 7591 Dynamic Client Registration through Authlib: open (any caller), this server's rules on top (oauth/clients.py).

Its own module: Authlib's registration claims load joserfc's key classes, which only this route needs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from authlib.oauth2.rfc7591 import ClientRegistrationEndpoint, InvalidClientMetadataError, InvalidRedirectURIError

from chalicelib.bootstrap import Stores
from chalicelib.clock import instant
from chalicelib.config import Settings
from chalicelib.models import DAY_SECONDS
from chalicelib.oauth import clients

CLIENT_SECONDS = 365 * DAY_SECONDS  # a registered client lives as long as the longest connection


class Registration(ClientRegistrationEndpoint):
    def __init__(
        self,
        server: Any,
        stores: Stores,
        settings: Settings,
        server_metadata: dict[str, Any],
        store: Callable[[str, dict[str, Any], int], bool],
    ) -> None:
        super().__init__(server)
        self.stores, self.settings, self.server_metadata, self.store = stores, settings, server_metadata, store
        self.saved: dict[str, Any] = {}

    def authenticate_token(self, request: Any) -> bool:
        return True

    def get_server_metadata(self) -> dict[str, Any]:
        return self.server_metadata

    def save_client(self, client_info: dict[str, Any], client_metadata: dict[str, Any], request: Any) -> dict[str, Any]:
        try:
            stored = clients.registration_metadata(request.payload.data, self.settings.oauth)
        except clients.ClientRefused as exc:
            uris = "redirect" in str(exc)
            raise (InvalidRedirectURIError if uris else InvalidClientMetadataError)(str(exc)) from exc
        if stored["token_endpoint_auth_method"] != "none":
            stored["secret_mac"] = clients.secret_mac(self.stores.connection_key.get(), client_info["client_secret"])
        expires = instant(self.stores.clock).epoch + CLIENT_SECONDS
        if not self.store(client_info["client_id"], stored, expires):  # services/oauth.py: the repository's put
            raise RuntimeError("a client id repeated")
        self.saved = stored
        return stored
