"""Problem details (RFC 9457) for the IETF resumable uploads server (courier_backend/ietf.py).

`Problem` is the exception a handler raises to answer an error as application/problem+json;
`courier_problem` makes one of Courier's own `urn:courier:problem:<code>` types. The types the
draft registers with IANA are MISMATCHING_OFFSET, COMPLETED_UPLOAD and INCONSISTENT_LENGTH.
Sending one is `ietf_h11.respond_problem`.
"""

from __future__ import annotations

PROBLEM_BASE = "https://iana.org/assignments/http-problem-types#"
MISMATCHING_OFFSET = PROBLEM_BASE + "mismatching-upload-offset"
COMPLETED_UPLOAD = PROBLEM_BASE + "completed-upload"
INCONSISTENT_LENGTH = PROBLEM_BASE + "inconsistent-upload-length"


class Problem(Exception):
    """An error answered as RFC 9457 problem details (application/problem+json)."""

    def __init__(self, status: int, type_: str, title: str, *, headers: dict[str, str] | None = None,
                 **members) -> None:
        super().__init__(title)
        self.status = status
        self.body = {"type": type_, "title": title, "status": status, **members}
        self.headers = headers or {}


def courier_problem(status: int, code: str, title: str, **kw) -> Problem:
    return Problem(status, f"urn:courier:problem:{code}", title, code=code, **kw)
