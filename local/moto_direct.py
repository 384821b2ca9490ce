"""The local stack's own AWS calls reach its embedded moto in-process, not over a socket to its own server.

The stack runs moto's HTTP server in the same process as the app (local/stack.py), for the AWS CLI
and boto3 users `stack.json` names. The app's own clients point at that server too
(`AWS_ENDPOINT_URL`), and each of their calls used to open a new TCP connection to it (werkzeug
closes each one), be parsed by werkzeug and Flask, and find its service among moto's 150 modules:
about half of the stack's CPU per HTTP request (`make bench`'s local stack figures). This hook
answers those calls, still signed and serialized by botocore, through moto's own in-process
dispatcher (the one `mock_aws()` uses), so they take the same `BaseResponse._dispatch`, the same
lock (local/embedded_aws.py) and the same backends as the server's callers.

Only calls to the stack's own moto URL for the three services the stack embeds are answered here;
anything else goes on to botocore's HTTP sender. A fault injector (local/faults.py) is first in line
and points a faulted call elsewhere, so this hook never applies a call it has already answered.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["SERVICE_HOSTS", "answers", "install"]

# botocore's hyphenized service id (the event name's second part) -> the AWS host moto's stubber serves.
SERVICE_HOSTS = {"dynamodb": "dynamodb", "dynamodb-streams": "streams.dynamodb", "kms": "kms"}
_SCOPE_REGION = re.compile(r"Credential=[^/]+/\d{8}/([a-z0-9-]+)/")


class _Direct:
    """A before-send handler: answers a request for `base_url` from moto's in-process dispatcher."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url.rstrip("/")

    def __call__(self, request: Any, event_name: str, **_: Any) -> Any:
        url = str(request.url)
        if not answers(url, self.base_url):
            return None
        host = SERVICE_HOSTS.get(event_name.split(".")[1])
        if host is None:
            return None
        from botocore.awsrequest import AWSResponse
        from moto.core.botocore_stubber import MockRawResponse
        from moto.core.models import botocore_stubber

        authorization = request.headers.get("Authorization", b"")
        found = _SCOPE_REGION.search(authorization.decode() if isinstance(authorization, bytes) else authorization)
        region = found.group(1) if found else "us-east-1"
        original = request.url
        request.url = f"https://{host}.{region}.amazonaws.com{url[len(self.base_url) :] or '/'}"
        try:
            answer = botocore_stubber.process_request(request)
        finally:
            request.url = original
        if answer is None:  # not a URL moto serves in-process: let botocore send it to the server
            return None
        status, headers, body = answer
        return AWSResponse(original, status, headers, MockRawResponse(body))


def answers(url: str, base_url: str) -> bool:
    """Whether a request for `url` is one for the moto at `base_url` (its own port, not one that starts alike)."""
    base = base_url.rstrip("/")
    return url == base or url.startswith(base + "/")


def install(session: Any, base_url: str) -> None:
    """Answer `session`'s clients' calls to `base_url` in-process (clients made after this call)."""
    session.events.register("before-send", _Direct(base_url), unique_id=f"moto-direct-{base_url}")
