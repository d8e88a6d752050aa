"""API keys → tenants. A key never reaches another tenant: the tenant it maps to is
passed into every service call, so isolation does not depend on a filter at the edge."""

from __future__ import annotations

import hmac
import json
import logging
from dataclasses import dataclass
from pathlib import Path

from graphmem.errors import GraphmemError
from graphmem.settings import Settings

log = logging.getLogger("graphmem.api")


class AuthError(GraphmemError):
    code = "UNAUTHORIZED"
    status = 401


@dataclass(frozen=True)
class KeyRing:
    keys: dict[str, str]  # key -> tenant
    default_tenant: str

    @property
    def enabled(self) -> bool:
        return bool(self.keys)

    def tenant_for(self, authorization: str | None) -> str:
        if not self.enabled:
            return self.default_tenant
        if not authorization:
            raise AuthError("missing Authorization header; send `Authorization: Bearer <key>`", code="MISSING_API_KEY")
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise AuthError("Authorization must be `Bearer <key>`", code="MALFORMED_API_KEY")
        token = token.strip()
        for key, tenant in self.keys.items():
            # Constant-time comparison: keys are secrets.
            if hmac.compare_digest(key.encode(), token.encode()):
                return tenant
        raise AuthError("unknown API key", code="INVALID_API_KEY", status=403)


def parse_keys(spec: str) -> dict[str, str]:
    """`key1:tenantA,key2:tenantB` → {key: tenant}."""
    keys: dict[str, str] = {}
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        key, sep, tenant = part.rpartition(":")
        if not sep or not key or not tenant:
            raise ValueError(f"GRAPHMEM_API_KEYS entry {part!r} is not `key:tenant`")
        keys[key] = tenant
    return keys


def load_keyring(settings: Settings) -> KeyRing:
    keys = parse_keys(settings.api_keys)
    if settings.api_keys_file:
        text = Path(settings.api_keys_file).read_text(encoding="utf-8")
        try:
            data = json.loads(text)
            keys.update({str(k): str(v) for k, v in data.items()})
        except json.JSONDecodeError:
            keys.update(parse_keys(",".join(ln for ln in text.splitlines() if ln and not ln.startswith("#"))))
    ring = KeyRing(keys, settings.default_tenant)
    if not ring.enabled:
        log.warning(
            "*** graphmem runs WITHOUT API keys: single tenant %r, authentication OFF. "
            "Set GRAPHMEM_API_KEYS=key:tenant,... before exposing it. ***",
            settings.default_tenant,
        )
    return ring
