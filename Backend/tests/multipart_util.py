"""Hand-built multipart bodies, so tests control every byte (CRLF, truncation, odd headers)."""

from __future__ import annotations

BOUNDARY = "courier-test-boundary-7MA4YWxkTrZu0gW"


def part(name: str, data: bytes, filename: str | None = None, content_type: str | None = None,
         disposition: str | None = None, extra_headers: list[str] | None = None) -> bytes:
    if disposition is None:
        disposition = f'form-data; name="{name}"'
        if filename is not None:
            disposition += f'; filename="{filename}"'
    headers = [f"Content-Disposition: {disposition}"]
    if content_type is not None:
        headers.append(f"Content-Type: {content_type}")
    headers.extend(extra_headers or [])
    return ("\r\n".join(headers) + "\r\n\r\n").encode("utf-8") + data


def body(*parts: bytes, boundary: str = BOUNDARY, close: bool = True) -> bytes:
    out = b""
    for p in parts:
        out += f"--{boundary}\r\n".encode() + p + b"\r\n"
    if close:
        out += f"--{boundary}--\r\n".encode()
    return out


def content_type(boundary: str = BOUNDARY) -> str:
    return f"multipart/form-data; boundary={boundary}"
