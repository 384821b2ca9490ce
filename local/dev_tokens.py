"""A signing key and JWT minting for the local stack and the tests: stands in for Cognito's hosted sign-in."""

from __future__ import annotations

import json
import time
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, rsa

LOCAL_ISSUER = "http://127.0.0.1/local-issuer"
LOCAL_AUDIENCE = "personal-memory-local"


class DevTokenIssuer:
    """Holds a fresh RS256 key (and an ES256 one) and mints tokens the app's verifier accepts via an inline JWKS."""

    def __init__(self, issuer: str = LOCAL_ISSUER, audience: str = LOCAL_AUDIENCE) -> None:
        self.issuer = issuer
        self.audience = audience
        self.rsa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.ec_key = ec.generate_private_key(ec.SECP256R1())

    def jwks(self) -> dict[str, Any]:
        keys = []
        public_jwks = (
            ("local-rs", "RS256", jwt.algorithms.RSAAlgorithm.to_jwk(self.rsa_key.public_key())),
            ("local-es", "ES256", jwt.algorithms.ECAlgorithm.to_jwk(self.ec_key.public_key())),
        )
        for kid, alg, public in public_jwks:
            jwk = json.loads(public)
            jwk.update({"kid": kid, "alg": alg, "use": "sig"})
            keys.append(jwk)
        return {"keys": keys}

    def jwks_json(self) -> str:
        return json.dumps(self.jwks())

    def mint(self, user_id: str, *, lifetime: int = 3600, algorithm: str = "RS256", **claims: Any) -> str:
        now = int(time.time())
        payload = {"sub": user_id, "iss": self.issuer, "aud": self.audience, "iat": now, "exp": now + lifetime}
        payload.update(claims)
        key, kid = (self.rsa_key, "local-rs") if algorithm == "RS256" else (self.ec_key, "local-es")
        return jwt.encode(payload, key, algorithm=algorithm, headers={"kid": kid})
