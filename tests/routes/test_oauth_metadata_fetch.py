"""A client id that is a URL must not aim the function at private addresses (SSRF): through /oauth/authorize.

The resolver and the fetcher are replaced by fakes that record what they were asked; nothing leaves 127.0.0.1.
The real fetcher is driven only against a server on 127.0.0.1 that the stage lists as an insecure metadata host.
"""

from __future__ import annotations

import json
import secrets
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import pytest

from chalicelib.config import reset_settings
from chalicelib.oauth import clients, fetch
from chalicelib.services import connections as connections_service
from tests.support.oauth_flow import REDIRECT, OAuthFlow
from tests.support.raw_storage import every_item

DOC = "https://tools.example.com/client.json"


def _document(client_id: str) -> bytes:
    return json.dumps({"client_id": client_id, "client_name": "Doc client", "redirect_uris": [REDIRECT]}).encode()


class Fakes:
    def __init__(self) -> None:
        self.answers: dict[str, list[str]] = {}
        self.resolved: list[str] = []
        self.got: list[tuple[str, str, int, str, bool]] = []
        self.connected: list[str] = []
        self.cafiles: list[str] = []

    def resolve(self, host: str, port: int) -> list[str]:
        self.resolved.append(host)
        if host not in self.answers:
            raise OSError("no such name")
        return self.answers[host]

    def get(self, address: str, host: str, port: int, target: str, tls: bool, cafile: str = "") -> bytes | None:
        self.got.append((address, host, port, target, tls))
        self.cafiles.append(cafile)
        return _document(f"https://{host}{target}")


@pytest.fixture
def fakes(monkeypatch: pytest.MonkeyPatch) -> Fakes:
    made = Fakes()
    made.connected = []
    real = socket.create_connection

    def guarded(address: tuple[str, int], *args: Any, **kwargs: Any) -> socket.socket:
        if address[0] != "127.0.0.1":  # nothing in tests leaves 127.0.0.1: an attempt is recorded, never made
            made.connected.append(address[0])
            raise OSError("blocked by the test")
        return real(address, *args, **kwargs)

    monkeypatch.setattr(socket, "create_connection", guarded)
    monkeypatch.setattr(fetch, "resolve", made.resolve)
    monkeypatch.setattr(fetch, "get", made.get)
    connections_service.forget_cache()
    clients.forget_documents()
    return made


@pytest.fixture
def flow(client: Any, issuer: Any) -> OAuthFlow:
    return OAuthFlow(client, issuer)


def _pending(dynamodb: Any) -> int:
    return len([i for i in every_item(dynamodb)["memory-keys"] if i["user_id"]["S"].startswith("oreq#")])


def _refused(flow: OAuthFlow, client_id: str, dynamodb: Any) -> None:
    before = _pending(dynamodb)
    answer = flow.authorize(client_id, secrets.token_urlsafe(40))
    assert answer.status == 400 and answer.body["error"] == "invalid_client", answer.body
    assert "location" not in answer.headers
    assert _pending(dynamodb) == before


def test_a_public_host_is_fetched_at_the_address_that_was_checked(flow: OAuthFlow, fakes: Fakes) -> None:
    fakes.answers["tools.example.com"] = ["93.184.216.34"]
    answer = flow.authorize(DOC, secrets.token_urlsafe(40))
    assert answer.status == 302, answer.body
    assert fakes.got == [("93.184.216.34", "tools.example.com", 443, "/client.json", True)]


@pytest.mark.parametrize(
    "addresses",
    [
        ["169.254.169.254"],
        ["10.0.0.7"],
        ["127.0.0.1"],
        ["172.16.3.4"],
        ["192.168.1.1"],
        ["100.64.0.1"],
        ["0.0.0.0"],
        ["::1"],
        ["fd00::1"],
        ["fe80::1%eth0"],
        ["::ffff:169.254.169.254"],
        ["::ffff:10.0.0.1"],
        ["64:ff9b::a9fe:a9fe"],
        ["2002:a9fe:a9fe::1"],
        ["fd00:ec2::254"],
        ["93.184.216.34", "169.254.169.254"],  # one private answer among public ones is enough
        [],
    ],
)
def test_a_name_resolving_to_a_private_address_is_never_fetched(
    flow: OAuthFlow, fakes: Fakes, dynamodb: Any, addresses: list[str]
) -> None:
    fakes.answers["tools.example.com"] = addresses
    _refused(flow, DOC, dynamodb)
    assert fakes.resolved == ["tools.example.com"] and fakes.got == [] and fakes.connected == []


@pytest.mark.parametrize(
    "client_id",
    [
        "https://169.254.169.254/latest/meta-data",
        "https://2852039166/latest/meta-data",  # 169.254.169.254 in decimal
        "https://0251.0376.0251.0376/x",  # ... in octal
        "https://0xa9fea9fe/x",
        "https://0xa9.0xfe.0xa9.0xfe/x",
        "https://127.1/x",
        "https://[::1]/x",
        "https://[::ffff:a9fe:a9fe]/x",
        "https://localhost/x",
        "https://user@tools.example.com/client.json",
        "http://tools.example.com/client.json",
        "https://unresolvable.example.com/client.json",
    ],
)
def test_addresses_in_any_spelling_and_plain_http_are_refused(
    flow: OAuthFlow, fakes: Fakes, dynamodb: Any, client_id: str
) -> None:
    fakes.answers["localhost"] = ["127.0.0.1"]
    _refused(flow, client_id, dynamodb)
    assert fakes.got == [] and fakes.connected == []


class _Local(BaseHTTPRequestHandler):
    routes: dict[str, tuple[int, dict[str, str], bytes]] = {}
    hits: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self.hits.append(self.path)
        status, headers, body = self.routes.get(self.path, (404, {}, b""))
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def local(monkeypatch: pytest.MonkeyPatch, client: Any) -> Iterator[str]:
    server = HTTPServer(("127.0.0.1", 0), _Local)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("OAUTH_INSECURE_METADATA_HOSTS", "127.0.0.1")
    reset_settings()
    connections_service.forget_cache()
    clients.forget_documents()
    _Local.hits.clear()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()
    reset_settings()


def test_the_stage_listed_local_host_is_fetched_and_a_redirect_is_never_followed(
    flow: OAuthFlow, local: str, dynamodb: Any
) -> None:
    good, moved, big = f"{local}/good.json", f"{local}/moved.json", f"{local}/big.json"
    _Local.routes = {
        "/good.json": (200, {"Content-Type": "application/json"}, _document(good)),
        "/moved.json": (302, {"Location": "http://169.254.169.254/latest/meta-data"}, b""),
        "/big.json": (200, {}, _document(big)[:-1] + b', "x": "' + b"a" * 20_000 + b'"}'),
    }
    assert flow.authorize(good, secrets.token_urlsafe(40)).status == 302
    _refused(flow, moved, dynamodb)
    _refused(flow, big, dynamodb)
    assert _Local.hits == ["/good.json", "/moved.json", "/big.json"]


def test_a_refused_document_is_not_fetched_again_for_a_minute(
    flow: OAuthFlow, fakes: Fakes, dynamodb: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = [1000.0]
    monkeypatch.setattr(clients, "clock", lambda: now[0], raising=False)
    fakes.answers["tools.example.com"] = ["93.184.216.34"]
    monkeypatch.setattr(fakes, "get", lambda *args: (fakes.got.append(args), None)[1])  # a 404, say
    monkeypatch.setattr(fetch, "get", fakes.get)
    for _ in range(3):
        _refused(flow, DOC, dynamodb)
    assert len(fakes.got) == 1 and fakes.resolved == ["tools.example.com"]  # one outbound fetch for three asks
    fakes.answers["other.example.com"] = ["93.184.216.34"]
    _refused(flow, "https://other.example.com/client.json", dynamodb)  # another URL is its own question
    assert len(fakes.got) == 2
    now[0] += 61
    _refused(flow, DOC, dynamodb)  # a minute later it is asked again
    assert len(fakes.got) == 3


def _certificate(tmp_path: Any) -> tuple[str, str]:
    """A self-signed certificate for 127.0.0.1 (cryptography), as PEM files: (certificate, key)."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return str(cert_file), str(key_file)


@pytest.fixture
def local_https(monkeypatch: pytest.MonkeyPatch, client: Any, tmp_path: Any) -> Iterator[tuple[str, str]]:
    import ssl

    cert_file, key_file = _certificate(tmp_path)
    server = HTTPServer(("127.0.0.1", 0), _Local)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_file, key_file)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("OAUTH_INSECURE_METADATA_HOSTS", "127.0.0.1")
    reset_settings()
    connections_service.forget_cache()
    clients.forget_documents()
    _Local.hits.clear()
    yield f"https://127.0.0.1:{server.server_port}", cert_file
    server.shutdown()
    server.server_close()
    reset_settings()


def test_a_local_https_document_is_fetched_only_trusting_the_stages_ca_file(
    flow: OAuthFlow, local_https: tuple[str, str], dynamodb: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    base, cert_file = local_https
    good = f"{base}/good.json"
    _Local.routes = {"/good.json": (200, {"Content-Type": "application/json"}, _document(good))}
    _refused(flow, good, dynamodb)  # the test's certificate is nobody's CA: refused
    monkeypatch.setenv("OAUTH_METADATA_CA_FILE", cert_file)
    reset_settings()
    clients.forget_documents()
    assert flow.authorize(good, secrets.token_urlsafe(40)).status == 302
    assert _Local.hits == ["/good.json"]  # the first TLS handshake failed before any request


def test_the_ca_file_is_never_trusted_for_a_public_host(
    flow: OAuthFlow, fakes: Fakes, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OAUTH_INSECURE_METADATA_HOSTS", "127.0.0.1")
    monkeypatch.setenv("OAUTH_METADATA_CA_FILE", "/tmp/some-ca.pem")
    reset_settings()
    try:
        fakes.answers["tools.example.com"] = ["93.184.216.34"]
        assert flow.authorize(DOC, secrets.token_urlsafe(40)).status == 302
        assert fakes.cafiles == [""]  # the system's CAs
    finally:
        reset_settings()
