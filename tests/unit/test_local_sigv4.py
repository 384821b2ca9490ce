"""The local SigV4 gate accepts what botocore-signing clients send and refuses everything else."""

from __future__ import annotations

import hashlib
import json
import stat
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import requests
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from local.sigv4 import (
    LocalPrincipal,
    SignatureRejected,
    generate_principals,
    read_credentials,
    verify_request,
    write_credentials,
)

BASE = "http://127.0.0.1:8000"
BODY = json.dumps({"events": [{"id": "e1", "type": "memory.propose"}]}).encode()


@dataclass
class Wire:
    """A request as the local server receives it."""

    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: bytes


@pytest.fixture(scope="module")
def principals() -> dict[str, LocalPrincipal]:
    return generate_principals()


def sign(
    principal: LocalPrincipal,
    method: str,
    url: str,
    body: bytes = b"",
    headers: Mapping[str, str] | None = None,
    *,
    service: str = "execute-api",
    region: str = "us-east-1",
    token: str | None = None,
    signer_class: type[SigV4Auth] = SigV4Auth,
) -> Wire:
    """Sign the way a botocore-based client does, then add the Host header its HTTP stack sends."""
    request = AWSRequest(method=method, url=url, data=body, headers=dict(headers or {}))
    credentials = Credentials(principal.access_key_id, principal.secret_access_key, token)
    signer_class(credentials, service, region).add_auth(request)
    parts = urlsplit(url)
    sent = dict(request.headers.items())
    sent["Host"] = parts.netloc
    return Wire(method, parts.path, parts.query, sent, body)


def check(wire: Wire, principals: Mapping[str, LocalPrincipal], **kwargs: Any) -> str:
    return verify_request(wire.method, wire.path, wire.query, wire.headers, wire.body, principals, **kwargs)


def reason_for(wire: Wire, principals: Mapping[str, LocalPrincipal], **kwargs: Any) -> str:
    with pytest.raises(SignatureRejected) as caught:
        check(wire, principals, **kwargs)
    return caught.value.reason


def test_signed_post_with_body_returns_the_signers_arn(
    principals: dict[str, LocalPrincipal],
) -> None:
    wire = sign(
        principals["worker"],
        "POST",
        f"{BASE}/v1/sessions/s1/events",
        BODY,
        {"Content-Type": "application/json"},
    )
    assert check(wire, principals) == principals["worker"].arn


def test_signed_get_with_query_returns_the_signers_arn(
    principals: dict[str, LocalPrincipal],
) -> None:
    wire = sign(principals["operator"], "GET", f"{BASE}/v1/operator/memory?user_id=alice")
    assert check(wire, principals) == principals["operator"].arn


def test_percent_encoded_and_unsorted_query_verifies(principals: dict[str, LocalPrincipal]) -> None:
    wire = sign(
        principals["operator"],
        "DELETE",
        f"{BASE}/v1/operator/memory/m%201?user_id=al%40ice&b=2&a=1",
    )
    assert check(wire, principals) == principals["operator"].arn


def test_header_names_are_case_insensitive(principals: dict[str, LocalPrincipal]) -> None:
    wire = sign(principals["host"], "GET", f"{BASE}/v1/sessions/s1/memory")
    wire.headers = {name.upper(): value for name, value in wire.headers.items()}
    assert check(wire, principals) == principals["host"].arn


def test_unsigned_extra_headers_do_not_matter(principals: dict[str, LocalPrincipal]) -> None:
    wire = sign(principals["host"], "GET", f"{BASE}/v1/sessions/s1/memory")
    wire.headers["User-Agent"] = "python-requests/2.32.5"
    wire.headers["Accept"] = "*/*"
    assert check(wire, principals) == principals["host"].arn


def test_each_role_gets_its_own_arn(principals: dict[str, LocalPrincipal]) -> None:
    arns = {check(sign(p, "GET", f"{BASE}/v1/x"), principals) for p in principals.values()}
    assert arns == {p.arn for p in principals.values()}
    assert len(arns) == 3


def test_tampered_body_is_refused(principals: dict[str, LocalPrincipal]) -> None:
    wire = sign(principals["worker"], "POST", f"{BASE}/v1/sessions/s1/events", BODY)
    wire.body = BODY.replace(b"e1", b"e2")
    assert reason_for(wire, principals) == "mismatch"


def test_body_swapped_under_a_signed_content_hash_is_refused(
    principals: dict[str, LocalPrincipal],
) -> None:
    digest = hashlib.sha256(BODY).hexdigest()
    wire = sign(
        principals["worker"],
        "POST",
        f"{BASE}/v1/sessions/s1/events",
        BODY,
        {"X-Amz-Content-SHA256": digest},
    )
    assert check(wire, principals) == principals["worker"].arn
    wire.body = b"{}"
    assert reason_for(wire, principals) == "mismatch"


def test_tampered_path_is_refused(principals: dict[str, LocalPrincipal]) -> None:
    wire = sign(principals["operator"], "GET", f"{BASE}/v1/operator/memory?user_id=alice")
    wire.path = "/v1/operator/memory/m1"
    assert reason_for(wire, principals) == "mismatch"


def test_tampered_query_is_refused(principals: dict[str, LocalPrincipal]) -> None:
    wire = sign(principals["operator"], "GET", f"{BASE}/v1/operator/memory?user_id=alice")
    wire.query = "user_id=bob"
    assert reason_for(wire, principals) == "mismatch"


def test_tampered_method_is_refused(principals: dict[str, LocalPrincipal]) -> None:
    wire = sign(principals["operator"], "GET", f"{BASE}/v1/operator/memory?user_id=alice")
    wire.method = "DELETE"
    assert reason_for(wire, principals) == "mismatch"


def test_wrong_secret_is_refused(principals: dict[str, LocalPrincipal]) -> None:
    real = principals["host"]
    forged = LocalPrincipal(real.access_key_id, "x" * 40, real.arn)
    wire = sign(forged, "GET", f"{BASE}/v1/sessions/s1/memory")
    assert reason_for(wire, principals) == "mismatch"


def test_unknown_key_id_is_refused(principals: dict[str, LocalPrincipal]) -> None:
    stranger = generate_principals()["host"]
    wire = sign(stranger, "GET", f"{BASE}/v1/sessions/s1/memory")
    assert reason_for(wire, principals) == "unknown_key"


def test_missing_authorization_is_refused(principals: dict[str, LocalPrincipal]) -> None:
    wire = sign(principals["host"], "GET", f"{BASE}/v1/sessions/s1/memory")
    del wire.headers["Authorization"]
    assert reason_for(wire, principals) == "missing"


def test_garbled_authorization_is_refused(principals: dict[str, LocalPrincipal]) -> None:
    wire = sign(principals["host"], "GET", f"{BASE}/v1/sessions/s1/memory")
    for garbled in (
        "Bearer abc",
        "AWS4-HMAC-SHA256 Credential=x",
        wire.headers["Authorization"][:-3],
    ):
        wire.headers["Authorization"] = garbled
        assert reason_for(wire, principals) == "malformed"


def test_wrong_service_is_refused(principals: dict[str, LocalPrincipal]) -> None:
    wire = sign(principals["host"], "GET", f"{BASE}/v1/sessions/s1/memory", service="lambda")
    assert reason_for(wire, principals) == "wrong_scope"


def test_wrong_region_is_refused(principals: dict[str, LocalPrincipal]) -> None:
    wire = sign(principals["host"], "GET", f"{BASE}/v1/sessions/s1/memory", region="eu-west-1")
    assert reason_for(wire, principals) == "wrong_scope"


def test_scope_date_other_than_the_request_date_is_refused(
    principals: dict[str, LocalPrincipal],
) -> None:
    wire = sign(principals["host"], "GET", f"{BASE}/v1/sessions/s1/memory")
    amz_date = wire.headers["X-Amz-Date"]
    other_day = (datetime.strptime(amz_date[:8], "%Y%m%d") - timedelta(days=1)).strftime("%Y%m%d")
    wire.headers["Authorization"] = wire.headers["Authorization"].replace(f"/{amz_date[:8]}/", f"/{other_day}/")
    assert reason_for(wire, principals) == "wrong_scope"


def _signed_at(wire: Wire) -> datetime:
    return datetime.strptime(wire.headers["X-Amz-Date"], "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)


def test_request_signed_16_minutes_ago_is_stale(principals: dict[str, LocalPrincipal]) -> None:
    wire = sign(principals["host"], "GET", f"{BASE}/v1/sessions/s1/memory")
    later = _signed_at(wire) + timedelta(minutes=16)
    assert reason_for(wire, principals, now=later) == "stale"


def test_request_dated_16_minutes_ahead_is_stale(principals: dict[str, LocalPrincipal]) -> None:
    wire = sign(principals["host"], "GET", f"{BASE}/v1/sessions/s1/memory")
    earlier = _signed_at(wire) - timedelta(minutes=16)
    assert reason_for(wire, principals, now=earlier) == "stale"


def test_request_within_15_minutes_either_way_verifies(
    principals: dict[str, LocalPrincipal],
) -> None:
    wire = sign(principals["host"], "GET", f"{BASE}/v1/sessions/s1/memory")
    for offset in (timedelta(minutes=15), timedelta(minutes=-15)):
        assert check(wire, principals, now=_signed_at(wire) + offset) == principals["host"].arn


class _NoHostSigner(SigV4Auth):
    """A signer that (validly) leaves the Host header out of its signature."""

    def headers_to_sign(self, request: AWSRequest) -> Any:
        headers = super().headers_to_sign(request)
        del headers["host"]
        return headers


def test_signature_that_does_not_cover_host_is_refused(
    principals: dict[str, LocalPrincipal],
) -> None:
    wire = sign(principals["host"], "GET", f"{BASE}/v1/sessions/s1/memory", signer_class=_NoHostSigner)
    assert "host" not in wire.headers["Authorization"].split("SignedHeaders=")[1].split(",")[0]
    assert reason_for(wire, principals) == "unsigned_header"


def test_signed_session_token_verifies(principals: dict[str, LocalPrincipal]) -> None:
    wire = sign(principals["worker"], "GET", f"{BASE}/v1/sessions/s1/events", token="session-tok")
    assert "x-amz-security-token" in wire.headers["Authorization"]
    assert check(wire, principals) == principals["worker"].arn


def test_unsigned_session_token_is_refused(principals: dict[str, LocalPrincipal]) -> None:
    wire = sign(principals["worker"], "GET", f"{BASE}/v1/sessions/s1/events")
    wire.headers["X-Amz-Security-Token"] = "slipped-in"
    assert reason_for(wire, principals) == "unsigned_header"


def test_expected_host_must_match_the_signed_host(principals: dict[str, LocalPrincipal]) -> None:
    wire = sign(principals["host"], "GET", f"{BASE}/v1/sessions/s1/memory")
    assert check(wire, principals, host="127.0.0.1:8000") == principals["host"].arn
    assert reason_for(wire, principals, host="127.0.0.1:9000") == "wrong_host"


def test_refusal_reason_never_carries_request_content(
    principals: dict[str, LocalPrincipal],
) -> None:
    wire = sign(principals["worker"], "POST", f"{BASE}/v1/sessions/s1/events", BODY)
    wire.body = b'{"text": "my bank pin is 4321"}'
    with pytest.raises(SignatureRejected) as caught:
        check(wire, principals)
    assert str(caught.value) == "mismatch"
    assert caught.value.args == ("mismatch",)


# --- what `requests` actually puts on the wire ------------------------------------------------


def _requests_wire(principal: LocalPrincipal, method: str, url: str, body: bytes) -> Wire:
    """Sign with botocore, prepare with requests, and add the Host header http.client adds."""
    signed = AWSRequest(method=method, url=url, data=body, headers={"Content-Type": "application/json"})
    SigV4Auth(
        Credentials(principal.access_key_id, principal.secret_access_key),
        "execute-api",
        "us-east-1",
    ).add_auth(signed)
    prepared = requests.Request(method, url, data=body, headers=dict(signed.headers.items())).prepare()
    parts = urlsplit(prepared.url or "")
    headers = dict(prepared.headers)
    headers["Host"] = parts.netloc
    return Wire(method, parts.path, parts.query, headers, body)


def test_requests_client_at_port_8000_verifies(principals: dict[str, LocalPrincipal]) -> None:
    wire = _requests_wire(principals["operator"], "DELETE", f"{BASE}/v1/operator/memory?user_id=alice", b"")
    assert wire.headers["Host"] == "127.0.0.1:8000"
    assert check(wire, principals, host="127.0.0.1:8000") == principals["operator"].arn


class _Capture(BaseHTTPRequestHandler):
    seen: list[Wire] = []

    def _capture(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        path, _, query = self.path.partition("?")
        _Capture.seen.append(Wire(self.command, path, query, dict(self.headers.items()), body))
        self.send_response(204)
        self.end_headers()

    do_GET = do_POST = do_DELETE = _capture

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def capture_server() -> Iterator[str]:
    _Capture.seen = []
    server = HTTPServer(("127.0.0.1", 0), _Capture)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(
    ("role", "method", "path", "body"),
    [
        ("worker", "POST", "/v1/sessions/s-1/events", BODY),
        ("operator", "GET", "/v1/operator/memory?user_id=alice", b""),
        ("operator", "DELETE", "/v1/operator/memory/m1?user_id=al%20ice", b""),
    ],
)
def test_request_sent_over_http_by_requests_verifies(
    principals: dict[str, LocalPrincipal],
    capture_server: str,
    role: str,
    method: str,
    path: str,
    body: bytes,
) -> None:
    url = capture_server + path
    signed = AWSRequest(
        method=method,
        url=url,
        data=body,
        headers={"Content-Type": "application/json"} if body else {},
    )
    SigV4Auth(
        Credentials(principals[role].access_key_id, principals[role].secret_access_key),
        "execute-api",
        "us-east-1",
    ).add_auth(signed)
    response = requests.request(method, url, data=body or None, headers=dict(signed.headers.items()), timeout=5)
    assert response.status_code == 204
    (wire,) = _Capture.seen
    assert wire.headers["Host"] == urlsplit(capture_server).netloc
    assert check(wire, principals, host=urlsplit(capture_server).netloc) == principals[role].arn


# --- local credentials ------------------------------------------------------------------------


def test_generated_principals_look_like_aws_keys() -> None:
    principals = generate_principals("123456789012")
    assert set(principals) == {"host", "worker", "operator"}
    for role, p in principals.items():
        assert p.access_key_id.startswith("AKIA") and len(p.access_key_id) == 20
        assert p.access_key_id[4:].isalnum() and p.access_key_id[4:].upper() == p.access_key_id[4:]
        assert len(p.secret_access_key) == 40
        assert p.arn == f"arn:aws:iam::123456789012:role/personal-memory-local-{role}"
    assert len({p.access_key_id for p in principals.values()}) == 3
    assert generate_principals()["host"].secret_access_key != principals["host"].secret_access_key


def test_credentials_round_trip_in_an_owner_only_file(tmp_path: Path) -> None:
    principals = generate_principals()
    target = tmp_path / ".local" / "credentials.json"
    write_credentials(target, principals)
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert read_credentials(target) == principals
    document = json.loads(target.read_text())
    assert set(document["host"]) == {"access_key_id", "secret_access_key", "arn"}
    assert list(target.parent.iterdir()) == [target]


def test_rewriting_credentials_keeps_the_file_owner_only(tmp_path: Path) -> None:
    target = tmp_path / "credentials.json"
    target.write_text("{}")
    target.chmod(0o644)
    write_credentials(target, generate_principals())
    assert stat.S_IMODE(target.stat().st_mode) == 0o600


def test_credentials_file_of_another_shape_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "credentials.json"
    target.write_text(json.dumps({"host": {"access_key_id": "AKIA"}}))
    with pytest.raises(ValueError):
        read_credentials(target)
