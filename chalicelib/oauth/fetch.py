"""Fetching a Client ID Metadata Document without letting a client id aim the function at private addresses (SSRF).

A client id is a URL anyone chooses, and the function runs inside AWS: `169.254.169.254` (instance metadata),
the VPC's `10/8`, loopback, link-local, unique-local IPv6 and every other non-global address are refused, however
they are spelled (decimal or octal IPv4, IPv4-mapped/6to4/NAT64 IPv6) or whatever DNS name resolves there. The
host is resolved once, every address it gives is checked, and the connection goes to a checked address (the name
only in TLS's SNI and certificate check, and the Host header), so a DNS answer cannot change between the check
and the connection. No redirect is followed (one is a refusal), the answer is read to `MAX_BYTES` at most and
the whole fetch has `SECONDS`. Hosts of the stage's `insecure_metadata_hosts` (only the local stack's
`127.0.0.1`, for its tests) may be loopback and are fetched over plain http, or over https trusting the stage's
`metadata_ca_file` (the local tests' own certificate) instead of the system's CAs.
"""

from __future__ import annotations

import ipaddress
import socket
import ssl
import time
from collections.abc import Callable
from urllib.parse import urlsplit

SECONDS = 5.0
MAX_BYTES = 16_384
_NAT64 = ipaddress.ip_network("64:ff9b::/96")

Resolver = Callable[[str, int], list[str]]
Getter = Callable[[str, str, int, str, bool, str], bytes | None]


class FetchRefused(ValueError):
    """The document cannot be fetched from there; never says more than that."""


def public(address: str) -> bool:
    """True only for a global unicast address, including what an IPv6 address embeds of IPv4."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = ip.ipv4_mapped or ip.sixtofour or (ip.teredo[1] if ip.teredo else None)
        if embedded is None and ip in _NAT64:
            embedded = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        if embedded is not None and not public(str(embedded)):
            return False
    return ip.is_global and not (ip.is_multicast or ip.is_reserved or ip.is_private or ip.is_loopback)


def _resolve(host: str, port: int) -> list[str]:
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


def _get(address: str, host: str, port: int, target: str, tls: bool, cafile: str) -> bytes | None:
    """GET `target` from `address` (the checked one) naming `host`; the body when 200, None otherwise.
    `cafile`: the only CA trusted for this fetch ("" for the system's)."""
    deadline = time.monotonic() + SECONDS
    sock = socket.create_connection((address, port), timeout=SECONDS)
    try:
        if tls:
            sock = ssl.create_default_context(cafile=cafile or None).wrap_socket(sock, server_hostname=host)
        request = f"GET {target} HTTP/1.1\r\nHost: {host}\r\nAccept: application/json\r\nConnection: close\r\n\r\n"
        sock.sendall(request.encode("ascii"))
        data = b""
        while len(data) <= MAX_BYTES + 8192:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            sock.settimeout(remaining)
            chunk = sock.recv(8192)
            if not chunk:
                break
            data += chunk
        else:
            return None
    finally:
        sock.close()
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    status = lines[0].split(b" ")
    if len(status) < 2 or status[1] != b"200":
        return None  # redirects included: none is followed
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(b":") for line in lines[1:])}
    if b"transfer-encoding" in headers:
        return None  # a document is small: a plain body with Content-Length or up to the close
    length = headers.get(b"content-length")
    if length is not None and (not length.isdigit() or int(length) > MAX_BYTES or len(body) < int(length)):
        return None
    return body[: int(length)] if length is not None else body


resolve: Resolver = _resolve
get: Getter = _get


def document(url: str, insecure_hosts: frozenset[str], cafile: str = "") -> bytes | None:
    """The body at `url` if every address its host resolves to is public (or the stage lists it), else refused."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    local = host in insecure_hosts
    if not (parts.scheme == "https" or local) or not host or parts.username or parts.password:
        raise FetchRefused("scheme")
    if not local and not _a_name(host):
        raise FetchRefused("host")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        addresses = resolve(host, port)
    except OSError as error:
        raise FetchRefused("resolve") from error
    if not addresses or not (local or all(public(a) for a in addresses)):
        raise FetchRefused("address")
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    body = get(addresses[0], host, port, target, parts.scheme == "https", cafile if local else "")
    if body is not None and len(body) > MAX_BYTES:
        return None
    return body


def _a_name(host: str) -> bool:
    """A DNS name, not an address in any spelling (`2130706433`, `0x7f.1`, `017700000001`, `[::1]`)."""
    if ":" in host or not host.isascii():
        return False
    last = host.rstrip(".").rsplit(".", 1)[-1]
    return bool(last) and not last.isdigit() and not last.lower().startswith("0x") and "." in host.rstrip(".")
