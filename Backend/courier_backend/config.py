"""Settings read from the environment once, at start-up."""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass

from .foreign_files import parse_servers

DEFAULT_TOKEN_TTL = 3600
DEFAULT_REFRESH_TTL = 30 * 24 * 3600
DEFAULT_MAX_UPLOAD = 10 * 1024 * 1024
DEFAULT_TUS_MAX_SIZE = 4 * 1024 * 1024 * 1024
DEFAULT_TUS_TTL = 24 * 3600


def _int_env(name: str, default: int, minimum: int = 0) -> int:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError as exc:  # a typo in the environment must not go unnoticed
        raise SystemExit(f"{name} must be an integer, got {raw!r}") from exc
    if value < minimum:
        raise SystemExit(f"{name} must be >= {minimum}, got {value}")
    return value


@dataclass
class Settings:
    data_dir: str
    token_ttl: int
    refresh_ttl: int
    max_upload: int
    max_body: int  # 0 = no early 413
    hooks: str  # "loopback" | "all" | "off"
    tus_max_size: int = DEFAULT_TUS_MAX_SIZE  # largest Upload-Length of a tus upload (/uploads)
    tus_ttl: int = DEFAULT_TUS_TTL  # seconds an unfinished tus upload lives after its last PATCH
    # prefixes of other tus servers whose finished uploads an article's photo may name (2515)
    attachment_servers: tuple[str, ...] = ()

    @classmethod
    def from_env(cls) -> "Settings":
        data_dir = os.environ.get("COURIER_BACKEND_DATA", "").strip()
        if not data_dir:
            data_dir = tempfile.mkdtemp(prefix="courier-backend-")
        os.makedirs(data_dir, exist_ok=True)
        hooks = os.environ.get("COURIER_BACKEND_HOOKS", "loopback").strip().lower() or "loopback"
        if hooks not in ("loopback", "all", "off"):
            raise SystemExit(f"COURIER_BACKEND_HOOKS must be loopback, all or off, got {hooks!r}")
        return cls(
            data_dir=os.path.abspath(data_dir),
            token_ttl=_int_env("COURIER_BACKEND_TOKEN_TTL", DEFAULT_TOKEN_TTL),
            refresh_ttl=_int_env("COURIER_BACKEND_REFRESH_TTL", DEFAULT_REFRESH_TTL, 1),
            max_upload=_int_env("COURIER_BACKEND_MAX_UPLOAD", DEFAULT_MAX_UPLOAD),
            max_body=_int_env("COURIER_BACKEND_MAX_BODY", 0),
            hooks=hooks,
            tus_max_size=_int_env("COURIER_BACKEND_TUS_MAX_SIZE", DEFAULT_TUS_MAX_SIZE),
            tus_ttl=_int_env("COURIER_BACKEND_TUS_TTL", DEFAULT_TUS_TTL, 1),
            attachment_servers=parse_servers(os.environ.get("COURIER_BACKEND_ATTACHMENT_SERVERS", "")),
        )
