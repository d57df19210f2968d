"""Streaming multipart/form-data parsing on top of python-multipart's low-level parser.

Unlike Starlette's `request.form()`, this never buffers a part in memory (the handler decides
where each chunk goes) and it refuses a body that does not end with the close delimiter:
a truncated upload is a 400 `bad_multipart`, not a silent success with fewer parts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import AsyncIterator, Protocol
from urllib.parse import unquote

from python_multipart.exceptions import FormParserError
from python_multipart.multipart import MultipartParser, MultipartState, parse_options_header


class MultipartError(Exception):
    """The body is not a well-formed multipart/form-data body."""


@dataclass
class PartInfo:
    name: str
    filename: str | None  # None: a plain field; "" is a file part with an empty filename
    content_type: str | None  # the part's Content-Type as sent, None if absent
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def is_file(self) -> bool:
        return self.filename is not None


class PartSink(Protocol):
    def write(self, data: bytes) -> None: ...
    def end(self) -> None: ...


class PartHandler(Protocol):
    def begin(self, part: PartInfo) -> PartSink: ...


_FILENAME_STAR = re.compile(r"""(?:^|;)\s*filename\*\s*=\s*([^;]+)""", re.IGNORECASE)


def _decode(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace")


def boundary_from_content_type(content_type: str | None) -> bytes:
    if not content_type:
        raise MultipartError("missing Content-Type: expected multipart/form-data")
    ctype, params = parse_options_header(content_type)
    if ctype != b"multipart/form-data":
        raise MultipartError(f"Content-Type must be multipart/form-data, got {ctype.decode('latin-1') or 'nothing'}")
    boundary = params.get(b"boundary")
    if not boundary:
        raise MultipartError("multipart/form-data without a boundary parameter")
    if len(boundary) > 200:
        raise MultipartError("multipart boundary too long")
    return boundary


def parse_part_headers(raw: list[tuple[bytes, bytes]]) -> PartInfo:
    headers: dict[str, str] = {}
    raw_by_name: dict[str, bytes] = {}
    for name, value in raw:
        key = name.decode("latin-1").strip().lower()
        raw_by_name[key] = value.strip()
        headers[key] = _decode(value.strip())
    disposition = raw_by_name.get("content-disposition")
    if disposition is None:
        raise MultipartError("a part has no Content-Disposition header")
    kind, params = parse_options_header(disposition)
    if kind != b"form-data":
        raise MultipartError("a part's Content-Disposition is not form-data")
    if b"name" not in params:
        raise MultipartError("a part's Content-Disposition has no name")
    filename: str | None = None
    if b"filename" in params:
        filename = _decode(params[b"filename"])
    else:
        # RFC 7578 says not to send filename*=, but accept it when it comes alone.
        m = _FILENAME_STAR.search(disposition.decode("latin-1"))
        if m:
            value = m.group(1).strip().strip('"')
            charset, _, rest = value.partition("'")
            _, _, encoded = rest.partition("'")
            try:
                filename = unquote(encoded, encoding=charset or "utf-8", errors="replace")
            except LookupError:
                filename = unquote(encoded, encoding="utf-8", errors="replace")
    content_type = headers.get("content-type") or None
    return PartInfo(name=_decode(params[b"name"]), filename=filename, content_type=content_type, headers=headers)


async def parse_multipart(content_type: str | None, chunks: AsyncIterator[bytes], handler: PartHandler) -> int:
    """Feed the body through the parser; call `handler.begin` for each part and stream its data
    into the returned sink. Returns the number of parts. Raises MultipartError on a malformed body.
    Exceptions raised by the handler or a sink propagate unchanged."""
    boundary = boundary_from_content_type(content_type)

    header_list: list[tuple[bytes, bytes]] = []
    cur_field = bytearray()
    cur_value = bytearray()
    sink: list[PartSink | None] = [None]
    count = [0]

    def on_part_begin() -> None:
        header_list.clear()
        sink[0] = None

    def on_header_field(data: bytes, start: int, end: int) -> None:
        cur_field.extend(data[start:end])

    def on_header_value(data: bytes, start: int, end: int) -> None:
        cur_value.extend(data[start:end])

    def on_header_end() -> None:
        header_list.append((bytes(cur_field), bytes(cur_value)))
        cur_field.clear()
        cur_value.clear()

    def on_headers_finished() -> None:
        info = parse_part_headers(header_list)
        count[0] += 1
        sink[0] = handler.begin(info)

    def on_part_data(data: bytes, start: int, end: int) -> None:
        if sink[0] is not None and end > start:
            sink[0].write(data[start:end])

    def on_part_end() -> None:
        if sink[0] is not None:
            sink[0].end()
        sink[0] = None

    try:
        parser = MultipartParser(boundary, {
            "on_part_begin": on_part_begin,
            "on_header_field": on_header_field,
            "on_header_value": on_header_value,
            "on_header_end": on_header_end,
            "on_headers_finished": on_headers_finished,
            "on_part_data": on_part_data,
            "on_part_end": on_part_end,
        }, max_header_count=32, max_header_size=16 * 1024)
    except FormParserError as exc:
        raise MultipartError(str(exc)) from exc

    async for chunk in chunks:
        if not chunk:
            continue
        if parser.state == MultipartState.END:
            continue  # epilogue after the close delimiter: ignored, as RFC 2046 says
        try:
            parser.write(chunk)
        except FormParserError as exc:
            raise MultipartError(f"malformed multipart body: {exc}") from exc
    parser.finalize()
    if parser.state != MultipartState.END:
        raise MultipartError("truncated multipart body: no close delimiter")
    return count[0]
