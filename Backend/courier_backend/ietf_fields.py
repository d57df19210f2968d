"""The request fields the IETF resumable uploads server reads (courier_backend/ietf.py).

Structured fields (RFC 8941, parsed with http-sfv): the draft's sf-integers and sf-booleans, the
digest fields of RFC 9530 (`Content-Digest`, `Repr-Digest`) and the running hashes that check
them; and the plain fields a creation reads: `Content-Disposition`'s filename and whether
`Content-Type` is multipart/form-data.
"""

from __future__ import annotations

import hashlib
import re
from typing import Callable
from urllib.parse import unquote

from http_sfv import Dictionary, Item

from .ietf_problems import courier_problem

DIGESTS: dict[str, Callable] = {"sha-256": hashlib.sha256, "sha-512": hashlib.sha512}


def _sf_item(value: str | None) -> Item | None:
    """The field parsed as one sf-item, or None when absent or not one (the draft: ignore it)."""
    if value is None:
        return None
    item = Item()
    try:
        item.parse(value.encode("latin-1"))
    except (ValueError, UnicodeEncodeError):
        return None
    return item


def sf_integer(value: str | None) -> int | None:
    """A non-negative sf-integer, or None when absent or not one (the draft: ignore the field)."""
    item = _sf_item(value)
    v = item.value if item is not None else None
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        return None
    return v


def sf_boolean(value: str | None) -> bool | None:
    item = _sf_item(value)
    return item.value if item is not None and isinstance(item.value, bool) else None


def sf_bool_text(value: bool) -> str:
    return "?1" if value else "?0"


def parse_digest(value: str | None, header: str) -> dict[str, bytes] | None:
    """`sha-256=:<base64>:, ...` (RFC 9530) -> {algorithm: digest} of the algorithms known here."""
    if value is None:
        return None
    d = Dictionary()
    try:
        d.parse(value.encode("latin-1"))
    except (ValueError, UnicodeEncodeError):
        raise courier_problem(400, "bad-digest", f"{header} is not a structured Dictionary of byte sequences.")
    out = {k: v.value for k, v in d.items() if k in DIGESTS and isinstance(v.value, (bytes, bytearray))}
    if not out:
        raise courier_problem(400, "digest-algorithm-unsupported",
                              f"{header} names no algorithm this server computes ({', '.join(DIGESTS)}).")
    return {k: bytes(v) for k, v in out.items()}


class Digests:
    """Running hashes for the algorithms a digest field names."""

    def __init__(self, algorithms) -> None:
        self.hashers = {a: DIGESTS[a]() for a in algorithms}

    def update(self, data) -> None:
        for h in self.hashers.values():
            h.update(data)

    def matches(self, expected: dict[str, bytes]) -> bool:
        return all(self.hashers[a].digest() == d for a, d in expected.items())


def content_disposition_filename(value: str | None) -> str | None:
    if not value:
        return None
    star = re.search(r"filename\*\s*=\s*([^;]+)", value, re.I)
    if star:
        raw = star.group(1).strip()
        charset, _, rest = raw.partition("'")
        _, _, encoded = rest.partition("'")
        try:
            return unquote(encoded, encoding=charset or "utf-8", errors="strict")
        except (LookupError, UnicodeDecodeError):
            pass
    plain = re.search(r'filename\s*=\s*("((?:[^"\\]|\\.)*)"|[^;\s]+)', value, re.I)
    if plain:
        return plain.group(2).replace('\\"', '"') if plain.group(2) is not None else plain.group(1)
    return None


def is_multipart(content_type: str | None) -> bool:
    return (content_type or "").split(";", 1)[0].strip().lower() == "multipart/form-data"
