"""The OAuth discovery documents: RFC 8414 authorization server metadata and RFC 9728 protected resource metadata."""

from __future__ import annotations

from typing import Any

from chalicelib.oauth.clients import AUTH_METHODS


def metadata(base: str) -> dict[str, Any]:
    """RFC 8414 authorization server metadata (served also where OpenID clients look: docs/oauth.md)."""
    return {
        "issuer": base,
        "authorization_endpoint": f"{base}/oauth/authorize",
        "token_endpoint": f"{base}/oauth/token",
        "registration_endpoint": f"{base}/oauth/register",
        "revocation_endpoint": f"{base}/oauth/revoke",
        "revocation_endpoint_auth_methods_supported": list(AUTH_METHODS),
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": list(AUTH_METHODS),
        "client_id_metadata_document_supported": True,
        "authorization_response_iss_parameter_supported": True,
        "scopes_supported": [],
        "service_documentation": f"{base}/",
    }


def resource_metadata(base: str) -> dict[str, Any]:
    """RFC 9728 protected resource metadata of `/mcp`: this service is its authorization server."""
    return {
        "resource": f"{base}/mcp",
        "authorization_servers": [base],
        "bearer_methods_supported": ["header"],
        "resource_name": "Personal memory",
        "resource_documentation": f"{base}/",
    }
