"""What each interop version of the IETF resumable uploads draft says (courier_backend/ietf.py).

`Upload-Draft-Interop-Version` 3 to 8 name drafts -01 to -09 and later (Docs/ietf-upload.md,
Docs/decisions/2701-ietf-interop-versions.md). The rules here are the ones that differ between
them: which versions are accepted (COURIER_BACKEND_IETF_INTEROP_VERSIONS, `POST /__ietf/config`),
the completeness field (`Upload-Incomplete` in 3, `Upload-Complete` after), the fields a HEAD or
DELETE must not carry (3 to 6), and `Upload-Limit` (from 6; `expires` in 6, `max-age` after),
which advertises `Limits`.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from http_sfv import Dictionary, Item

from .ietf_fields import sf_bool_text, sf_boolean, sf_integer
from .ietf_problems import courier_problem

if TYPE_CHECKING:
    from .ietf_h11 import Exchange

# Upload-Draft-Interop-Version values accepted, and the drafts that define them (from each
# draft's "Draft Version Identification" section and change log; Docs/ietf-upload.md).
INTEROP_VERSIONS: dict[int, str] = {3: "-01", 4: "-02", 5: "-03", 6: "-04, -05", 7: "-06 to -08",
                                    8: "-09 and later"}
CURRENT_INTEROP = 8


@dataclass
class Limits:
    """What `Upload-Limit` advertises; changed at run time by `POST /__ietf/config`."""

    max_size: int
    max_append_size: int
    min_append_size: int = 0


def default_interop_versions() -> set[int]:
    """The versions accepted: all of INTEROP_VERSIONS, or COURIER_BACKEND_IETF_INTEROP_VERSIONS
    (`3,4,5`; a test aid: a server that speaks only some, or only versions it does not implement, which
    it then refuses as well)."""
    raw = os.environ.get("COURIER_BACKEND_IETF_INTEROP_VERSIONS", "").strip()
    if not raw:
        return set(INTEROP_VERSIONS)
    try:
        return {int(v) for v in raw.split(",") if v.strip()}
    except ValueError:
        raise SystemExit(f"COURIER_BACKEND_IETF_INTEROP_VERSIONS must list integers, got {raw!r}")


def limit_header(limits: Limits, interop: int, upload: dict | None = None) -> dict[str, str]:
    if interop < 6:
        return {}
    d = Dictionary()
    d["max-size"] = Item(limits.max_size)
    d["max-append-size"] = Item(limits.max_append_size)
    if limits.min_append_size:
        d["min-append-size"] = Item(limits.min_append_size)
    if upload is not None and upload["state"] == "active":
        d["expires" if interop == 6 else "max-age"] = Item(max(0, int(upload["expires_at"] - time.time())))
    return {"Upload-Limit": str(d)}


def complete_header(interop: int, complete: bool) -> dict[str, str]:
    if interop == 3:
        return {"Upload-Incomplete": sf_bool_text(not complete)}
    return {"Upload-Complete": sf_bool_text(complete)}


def request_complete(ex: Exchange, interop: int) -> bool | None:
    """The request's completeness flag in its interop version's field; None when absent.

    Interop 3 (-01) has `Upload-Incomplete`, and there a missing field means complete.
    """
    if interop == 3:
        incomplete = sf_boolean(ex.header("upload-incomplete"))
        return True if incomplete is None else not incomplete
    return sf_boolean(ex.header("upload-complete"))


def refuse_state_fields(ex: Exchange, interop: int) -> None:
    """Interop 3 to 6: a HEAD or DELETE carrying Upload-Offset or the completeness field (or,
    from interop 6, Upload-Length) MUST be rejected with 400."""
    if interop > 6:
        return
    names = ["upload-offset", "upload-incomplete" if interop == 3 else "upload-complete"]
    if interop == 6:
        names.append("upload-length")
    present = [n for n in names if ex.header(n) is not None]
    if present:
        raise courier_problem(400, "unexpected-field", f"A {ex.method} must not carry {', '.join(present)}.")


def interop_of(ex: Exchange, accepted: set[int]) -> int | None:
    raw = ex.header("upload-draft-interop-version")
    if raw is None:
        return None
    version = sf_integer(raw)
    if version not in INTEROP_VERSIONS or version not in accepted:
        raise courier_problem(400, "unsupported-interop-version",
                              f"Upload-Draft-Interop-Version {raw.strip()} is not supported.",
                              supported=sorted(accepted))
    return version
