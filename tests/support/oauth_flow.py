"""Drive the OAuth flow through the real routes (chalice's test client): register, authorize, consent, token."""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

HOST = "api.example.org"
BASE = f"http://{HOST}"
RESOURCE = f"{BASE}/mcp"
REDIRECT = "https://claude.ai/api/mcp/auth_callback"


def challenge(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


@dataclass
class Answer:
    status: int
    body: Any
    headers: dict[str, str]


class OAuthFlow:
    def __init__(self, client: Any, issuer: Any) -> None:
        self.client, self.issuer = client, issuer

    def _answer(self, response: Any) -> Answer:
        text = response.body.decode() if isinstance(response.body, bytes) else response.body
        try:
            body = json.loads(text) if text else None
        except ValueError:
            body = text
        return Answer(response.status_code, body, {k.lower(): v for k, v in response.headers.items()})

    def get(self, path: str, user: str | None = None, token: str | None = None) -> Answer:
        headers = {"Host": HOST}
        if user is not None or token is not None:
            headers["Authorization"] = f"Bearer {token or self.issuer.mint(user)}"
        return self._answer(self.client.http.get(path, headers=headers))

    def post_json(self, path: str, body: Any, user: str | None = None) -> Answer:
        headers = {"Host": HOST, "Content-Type": "application/json"}
        if user is not None:
            headers["Authorization"] = f"Bearer {self.issuer.mint(user)}"
        return self._answer(self.client.http.post(path, headers=headers, body=json.dumps(body)))

    def post_form(self, path: str, form: dict[str, str], headers: dict[str, str] | None = None) -> Answer:
        sent = {"Host": HOST, "Content-Type": "application/x-www-form-urlencoded", **(headers or {})}
        return self._answer(self.client.http.post(path, headers=sent, body=urlencode(form)))

    def register(self, redirect: str = REDIRECT, **metadata: Any) -> Answer:
        body = {"redirect_uris": [redirect], "client_name": "Claude", "token_endpoint_auth_method": "none", **metadata}
        return self.post_json("/oauth/register", body)

    def client_id(self, redirect: str = REDIRECT) -> str:
        answer = self.register(redirect)
        assert answer.status == 201, answer.body
        return str(answer.body["client_id"])

    def authorize(self, client_id: str, verifier: str, **extra: str) -> Answer:
        params = {
            "response_type": "code",
            "client_id": client_id,
            "redirect_uri": REDIRECT,
            "code_challenge": challenge(verifier),
            "code_challenge_method": "S256",
            "state": "st-1",
            "resource": RESOURCE,
            **extra,
        }
        return self.get("/oauth/authorize?" + urlencode({k: v for k, v in params.items() if v is not None}))

    def request_id(self, answer: Answer) -> str:
        assert answer.status == 302, answer.body
        location = urlsplit(answer.headers["location"])
        assert f"{location.scheme}://{location.netloc}" == BASE and location.path == "/"
        return parse_qs(location.query)["oauth"][0]

    def decide(self, request_id: str, user: str, **decision: Any) -> Answer:
        body = {"approve": True, "agent": "claude", **decision}
        return self.post_json(f"/v1/oauth/requests/{request_id}", body, user)

    def code(self, client_id: str, verifier: str, user: str = "alice", **decision: Any) -> str:
        request_id = self.request_id(self.authorize(client_id, verifier))
        assert self.get(f"/v1/oauth/requests/{request_id}", user).status == 200
        answer = self.decide(request_id, user, **decision)
        assert answer.status == 200, answer.body
        redirect = urlsplit(answer.body["redirect"])
        query = parse_qs(redirect.query)
        assert redirect._replace(query="").geturl() == REDIRECT and query["state"] == ["st-1"]
        return query["code"][0]

    def exchange(self, client_id: str, code: str, verifier: str, **extra: str) -> Answer:
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": REDIRECT,
            "client_id": client_id,
            "code_verifier": verifier,
            "resource": RESOURCE,
            **extra,
        }
        return self.post_form("/oauth/token", {k: v for k, v in form.items() if v is not None})

    def refresh(self, client_id: str, refresh_token: str, **extra: str) -> Answer:
        form = {"grant_type": "refresh_token", "refresh_token": refresh_token, "client_id": client_id, **extra}
        return self.post_form("/oauth/token", form)

    def tokens(self, user: str = "alice", **decision: Any) -> tuple[str, dict[str, Any]]:
        client_id, verifier = self.client_id(), secrets.token_urlsafe(40)
        answer = self.exchange(client_id, self.code(client_id, verifier, user, **decision), verifier)
        assert answer.status == 200, answer.body
        return client_id, dict(answer.body)

    def mcp(self, token: str | None, method: str = "tools/list", params: Any = None) -> Answer:
        headers = {"Host": HOST, "Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        message = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}}
        return self._answer(self.client.http.post("/mcp", headers=headers, body=json.dumps(message)))
