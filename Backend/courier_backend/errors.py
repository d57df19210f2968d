"""The contract's error shape `{"code", "message"[, "field"][, "current"]}` and JSON helpers."""

from __future__ import annotations

import http
import json
from typing import Any, Iterable

from starlette.responses import Response

JSON_MEDIA_TYPE = "application/json; charset=utf-8"
WWW_AUTHENTICATE = 'Bearer error="invalid_token"'


def dumps(payload: Any) -> bytes:
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def error_payload(code: str, message: str, field: str | None = None, current: Any = None) -> dict:
    body: dict[str, Any] = {"code": code, "message": message}
    if field is not None:
        body["field"] = field
    if current is not None:
        body["current"] = current
    return body


def default_code(status: int) -> str:
    """A snake_case code for a status the contract names no code for (503 -> service_unavailable)."""
    special = {400: "bad_request", 401: "unauthorized", 404: "not_found", 413: "payload_too_large",
               422: "validation_failed", 500: "internal_error"}
    if status in special:
        return special[status]
    try:
        phrase = http.HTTPStatus(status).phrase
    except ValueError:
        return f"http_{status}"
    return "".join(c if c.isalnum() else "_" for c in phrase.lower()).strip("_")


def default_message(status: int) -> str:
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return f"HTTP {status}"


class ApiError(Exception):
    """Raised by handlers; rendered as the contract's JSON error body."""

    def __init__(self, status: int, code: str, message: str, *, field: str | None = None,
                 current: Any = None, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.field = field
        self.current = current
        self.headers = dict(headers or {})
        if status == 401 and code == "unauthorized":
            self.headers.setdefault("WWW-Authenticate", WWW_AUTHENTICATE)

    def payload(self) -> dict:
        return error_payload(self.code, self.message, self.field, self.current)

    def response(self) -> Response:
        return json_response(self.status, self.payload(), self.headers)


def json_response(status: int, payload: Any, headers: dict[str, str] | None = None) -> Response:
    return Response(content=dumps(payload), status_code=status, headers=headers,
                    media_type=JSON_MEDIA_TYPE)


def raw_headers(headers: Iterable[tuple[str, str]]) -> list[tuple[bytes, bytes]]:
    return [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers]


async def send_raw(send, status: int, body: bytes, content_type: str | None,
                   headers: Iterable[tuple[str, str]] = ()) -> None:
    """Send a complete response from plain ASGI code (the middleware)."""
    hdrs = list(headers)
    if content_type is not None:
        hdrs.append(("content-type", content_type))
    hdrs.append(("content-length", str(len(body))))
    await send({"type": "http.response.start", "status": status, "headers": raw_headers(hdrs)})
    await send({"type": "http.response.body", "body": body, "more_body": False})


async def send_error(send, status: int, code: str, message: str,
                     headers: Iterable[tuple[str, str]] = (), **extra: Any) -> None:
    hdrs = list(headers)
    if status == 401 and code == "unauthorized":
        hdrs.append(("www-authenticate", WWW_AUTHENTICATE))
    await send_raw(send, status, dumps(error_payload(code, message, **extra)), JSON_MEDIA_TYPE, hdrs)
