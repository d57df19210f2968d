"""Where the parts of a multipart/form-data body go, as multipart.parse_multipart reads them.

`parse_multipart` asks a consumer's `begin(part)` for a sink and writes the part's bytes to it.
`EchoParts` is `POST /upload`'s consumer (files hashed and dropped, fields kept); `PhotoParts` is
`POST /photos`'s (the `title` field kept, the first `file` part, an image, streamed to a file in the
upload dir up to a size limit, everything else dropped), also used by the IETF server for an upload
whose representation is a form (ietf_uploads.py). Limits are answered as `ApiError`s.
"""

from __future__ import annotations

import hashlib
import os
from typing import Any

from .errors import ApiError
from .multipart import PartInfo
from .store import Store

MAX_FIELD_VALUE = 1024 * 1024


class _Discard:
    def write(self, data: bytes) -> None:
        pass

    def end(self) -> None:
        pass


class _HashSink:
    def __init__(self) -> None:
        self.hasher = hashlib.sha256()
        self.size = 0

    def write(self, data: bytes) -> None:
        self.hasher.update(data)
        self.size += len(data)

    def end(self) -> None:
        pass


class _ValueSink:
    def __init__(self, name: str) -> None:
        self.name = name
        self.buf = bytearray()

    def write(self, data: bytes) -> None:
        if len(self.buf) + len(data) > MAX_FIELD_VALUE:
            raise ApiError(422, "validation_failed",
                           f"The field '{self.name}' is over {MAX_FIELD_VALUE} bytes.", field=self.name)
        self.buf.extend(data)

    def end(self) -> None:
        pass

    @property
    def value(self) -> str:
        return self.buf.decode("utf-8", errors="replace")


class EchoParts:
    """/upload: one entry a part, files hashed and discarded."""

    def __init__(self) -> None:
        self.entries: list[tuple[PartInfo, Any]] = []

    def begin(self, part: PartInfo):
        sink = _HashSink() if part.is_file else _ValueSink(part.name)
        self.entries.append((part, sink))
        return sink

    def result(self) -> list[dict]:
        out = []
        for part, sink in self.entries:
            if part.is_file:
                out.append({"field": part.name, "filename": part.filename, "content_type": part.content_type,
                            "size": sink.size, "sha256": sink.hasher.hexdigest()})
            else:
                out.append({"field": part.name, "value": sink.value})
        return out


class _PhotoFile:
    def __init__(self, path: str, limit: int) -> None:
        self.path = path
        self.limit = limit
        self.fh = open(path, "wb")
        self.hasher = hashlib.sha256()
        self.size = 0

    def write(self, data: bytes) -> None:
        self.size += len(data)
        if self.size > self.limit:
            raise ApiError(422, "image_too_large",
                           f"The image is larger than the limit of {self.limit} bytes.", field="file")
        self.hasher.update(data)
        self.fh.write(data)

    def end(self) -> None:
        self.fh.close()

    def discard(self) -> None:
        try:
            self.fh.close()
        finally:
            try:
                os.unlink(self.path)
            except FileNotFoundError:
                pass


class PhotoParts:
    """/photos: `title` kept, the first `file` part streamed to disk, everything else ignored."""

    def __init__(self, store: Store, limit: int) -> None:
        self.store = store
        self.limit = limit
        self.title: _ValueSink | None = None
        self.file: _PhotoFile | None = None
        self.file_info: PartInfo | None = None

    def begin(self, part: PartInfo):
        if part.name == "title" and not part.is_file and self.title is None:
            self.title = _ValueSink("title")
            return self.title
        if part.name == "file" and self.file is None:
            ctype = (part.content_type or "").split(";", 1)[0].strip().lower()
            if not ctype.startswith("image/") or len(ctype) <= len("image/"):
                raise ApiError(422, "unsupported_format",
                               f"Only images can be uploaded (got {part.content_type or 'no content type'}).",
                               field="file")
            self.file_info = part
            self.file = _PhotoFile(self.store.new_upload_path(), self.limit)
            return self.file
        return _Discard()

    def discard(self) -> None:
        if self.file is not None:
            self.file.discard()
