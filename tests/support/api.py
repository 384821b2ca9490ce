"""A thin driver over chalice.test.Client for user routes: JSON in, (status, body) out."""

from __future__ import annotations

import json
from typing import Any

from local.dev_tokens import DevTokenIssuer


class Api:
    def __init__(self, client: Any, issuer: DevTokenIssuer) -> None:
        self.client = client
        self.issuer = issuer

    def headers(self, user: str | None) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        if user is not None:
            headers["Authorization"] = f"Bearer {self.issuer.mint(user)}"
        return headers

    def call(
        self, method: str, path: str, user: str | None, body: Any = None, raw: str | None = None
    ) -> tuple[int, Any]:
        payload = raw if raw is not None else (json.dumps(body) if body is not None else None)
        response = getattr(self.client.http, method.lower())(path, headers=self.headers(user), body=payload)
        text = response.body.decode() if isinstance(response.body, bytes) else response.body
        return response.status_code, (json.loads(text) if text else None)

    def tagged_get(self, path: str, user: str, etag: str | None = None) -> tuple[int, Any, str]:
        """GET with `If-None-Match: etag` when given: (status, body or None, the answer's ETag or "")."""
        headers = self.headers(user)
        if etag is not None:
            headers["If-None-Match"] = etag
        response = self.client.http.get(path, headers=headers)
        body = json.loads(response.body) if response.body else None
        return response.status_code, body, {k.lower(): v for k, v in response.headers.items()}.get("etag", "")

    # conveniences for the common steps of a story
    def turn_on(self, user: str) -> None:
        status, _ = self.call("PUT", "/v1/memory/settings", user, {"enabled": True})
        assert status == 200

    def add(self, user: str, text: str, **fields: Any) -> dict[str, Any]:
        status, body = self.call("POST", "/v1/memory", user, {"text": text, **fields})
        assert status == 201, body
        return body
