"""GET/HEAD /photos/{id}: a stored photo served for resumable downloads (Docs/contract.md).

- strong `ETag` (the photo's sha256), `Last-Modified` (the file's mtime), `Accept-Ranges: bytes`,
  `Repr-Digest: sha-256=:BASE64:` (RFC 9530) of the whole representation, on every 200/206/HEAD;
- one range (`bytes=N-`, `bytes=N-M`, `bytes=-S`) answered 206 with `Content-Range`; a list of
  ranges or a malformed header is ignored (200, whole file), as RFC 9110 §14.2 allows;
- `If-Range`: the range is honoured only when it names the current strong ETag or the exact
  `Last-Modified` date; otherwise the whole file comes with 200;
- a range starting at or past the end: 416 with `Content-Range: bytes */SIZE`;
- `If-None-Match` naming the ETag: 304;
- `Cache-Control: public` on all of them: any signed-in user may read any photo, so a client may
  keep it across a change of user (Courier's decision 2505).

Test hooks (loopback only, as every /__ path): `POST /__photos` places a photo without a multipart
upload (`{"id", "size", "seed"?, "owner"?}`: `size` deterministic bytes; the same id again replaces
the content, so the validators change), `POST /__photos/{id}/serve` sets how the next GETs are
served (`{"rate": bytes per second, "cut_after": bytes, "stall_after": bytes (sends nothing more
until the settings change), "bad_digest": bool, "content_range_shift": bytes}`), `GET /__photos/served` lists every GET/HEAD served (range asked, If-Range, status, body
bytes written, and for a GET with a body whether it has ended) since the start or the last
`/__reset`.
"""

from __future__ import annotations

import asyncio
import base64
import email.utils
import hashlib
import os
import random
import re
import time
import uuid
from typing import Any, Callable

from fastapi import FastAPI, Request
from starlette.responses import Response, StreamingResponse

from .errors import ApiError, json_response
from .store import Store, now_rfc3339

CHUNK = 256 * 1024
RANGE = re.compile(r"^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$", re.IGNORECASE)


class ServeLog:
    """What was served, for tests: one entry per GET/HEAD of a photo; `settings` per photo id."""

    def __init__(self) -> None:
        self.entries: list[dict[str, Any]] = []
        self.settings: dict[str, dict[str, Any]] = {}

    def reset(self) -> None:
        self.entries.clear()
        self.settings.clear()


def parse_range(header: str | None, size: int) -> tuple[int, int] | str | None:
    """(first, last) inclusive for one satisfiable range; "unsatisfiable"; None to ignore it."""
    if not header:
        return None
    match = RANGE.match(header)
    if match is None:
        return None  # several ranges or another unit: the whole file
    first_text, last_text = match.group(1), match.group(2)
    if first_text == "" and last_text == "":
        return None
    if first_text == "":
        suffix = int(last_text)
        if suffix == 0:
            return "unsatisfiable"
        return (max(0, size - suffix), size - 1) if size > 0 else "unsatisfiable"
    first = int(first_text)
    last = int(last_text) if last_text else size - 1
    if last_text and last < first:
        return None
    if first >= size:
        return "unsatisfiable"
    return first, min(last, size - 1)


def if_range_holds(if_range: str | None, etag: str, last_modified: str) -> bool:
    """True when there is no If-Range, or it names the current strong ETag or exact date."""
    if if_range is None:
        return True
    value = if_range.strip()
    if value.startswith("W/"):
        return False  # a weak tag never matches If-Range (RFC 9110 §13.1.5)
    if value.startswith('"'):
        return value == etag
    return value == last_modified


def install(api: FastAPI, store: Store, require_user: Callable[[Request], str]) -> ServeLog:
    served = ServeLog()

    def validators(record: dict, path: str) -> tuple[str, str, str]:
        etag = f'"{record["sha256"]}"'
        last_modified = email.utils.formatdate(int(os.stat(path).st_mtime), usegmt=True)
        digest = base64.b64encode(bytes.fromhex(record["sha256"])).decode("ascii")
        return etag, last_modified, digest

    @api.head("/photos/{photo_id}", include_in_schema=False)
    @api.get("/photos/{photo_id}", name="get_photo")
    async def get_photo(photo_id: str, request: Request) -> Response:
        require_user(request)
        record = store.get_photo(photo_id)
        path = store.photo_path(photo_id)
        if record is None or not os.path.exists(path):
            raise ApiError(404, "not_found", "No such photo.")
        settings = served.settings.get(photo_id, {})
        etag, last_modified, digest = validators(record, path)
        if settings.get("bad_digest"):
            digest = base64.b64encode(hashlib.sha256(b"not this file").digest()).decode("ascii")
        size = os.path.getsize(path)
        # Any signed-in user may read any photo: `public` lets a client keep it across a login.
        headers = {"ETag": etag, "Last-Modified": last_modified, "Accept-Ranges": "bytes",
                   "Repr-Digest": f"sha-256=:{digest}:", "Cache-Control": "public"}
        range_header = request.headers.get("range")
        if_range = request.headers.get("if-range")
        entry = {"id": photo_id, "method": request.method, "range": range_header, "if_range": if_range,
                 "status": 0, "bytes": 0}
        served.entries.append(entry)

        inm = request.headers.get("if-none-match")
        if inm and any(tag.strip().removeprefix("W/") == etag for tag in inm.split(",")) or inm == "*":
            entry["status"] = 304
            return Response(status_code=304, headers={"ETag": etag, "Last-Modified": last_modified,
                                                      "Cache-Control": "public"})

        wanted = parse_range(range_header, size) if if_range_holds(if_range, etag, last_modified) else None
        if wanted == "unsatisfiable":
            entry["status"] = 416
            return Response(status_code=416, headers={**headers, "Content-Range": f"bytes */{size}"})
        status = 200
        first, last = 0, size - 1
        if isinstance(wanted, tuple):
            status = 206
            first, last = wanted
            shift = int(settings.get("content_range_shift", 0))
            headers["Content-Range"] = f"bytes {first + shift}-{last + shift}/{size}"
        length = last - first + 1 if size > 0 else 0
        headers["Content-Length"] = str(length)
        entry["status"] = status
        media_type = record["content_type"] or "application/octet-stream"
        if request.method == "HEAD":
            return Response(status_code=status, headers=headers, media_type=media_type)

        rate = int(settings.get("rate", 0))
        cut_after = settings.get("cut_after")

        entry["done"] = False

        async def body():
            try:
                async for data in chunks():
                    yield data
            finally:
                entry["done"] = True

        async def chunks():
            remaining = length
            sent = 0
            started = time.monotonic()
            with open(path, "rb") as file:
                file.seek(first)
                while remaining > 0:
                    step = min(CHUNK, remaining, rate // 10 if rate >= 10 else CHUNK)
                    # stall_after: this reply's bytes after which nothing more is sent until the
                    # settings stop saying so (a test kills the client at a known size).
                    while True:
                        stall = served.settings.get(photo_id, {}).get("stall_after")
                        if stall is None or sent < int(stall):
                            break
                        await asyncio.sleep(0.01)
                    if stall is not None:
                        step = min(step, int(stall) - sent)
                    if cut_after is not None and sent + step > cut_after:
                        step = int(cut_after) - sent
                        if step > 0:
                            data = file.read(step)
                            entry["bytes"] += len(data)
                            yield data
                        raise ConnectionResetError("cut_after: the link drops here")
                    data = file.read(step)
                    if not data:
                        break
                    remaining -= len(data)
                    sent += len(data)
                    entry["bytes"] += len(data)
                    yield data
                    if rate > 0:
                        ahead = sent / rate - (time.monotonic() - started)
                        if ahead > 0:
                            await asyncio.sleep(ahead)

        return StreamingResponse(body(), status_code=status, headers=headers, media_type=media_type)

    @api.post("/__photos")
    async def place_photo(request: Request) -> Response:
        data = await request.json()
        size = data.get("size")
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            raise ApiError(422, "validation_failed", "'size' must be an integer >= 0.", field="size")
        photo_id = str(data.get("id") or uuid.uuid4())
        owner = str(data.get("owner") or "alice")
        seed = int(data.get("seed", 0))
        path = store.photo_path(photo_id)
        temporary = path + ".placing"
        hasher = hashlib.sha256()
        generator = random.Random(seed)
        block = generator.randbytes(1 << 20)
        with open(temporary, "wb") as file:
            remaining = size
            counter = 0
            while remaining > 0:
                # Each MiB differs (its index in the first 8 bytes), so no range repeats another.
                piece = counter.to_bytes(8, "little") + block[8:]
                piece = piece[:remaining]
                file.write(piece)
                hasher.update(piece)
                remaining -= len(piece)
                counter += 1
        os.replace(temporary, path)
        # A replaced photo must show a new Last-Modified even within the same second.
        existing = store.get_photo(photo_id)
        if existing is not None:
            mtime = max(time.time(), os.stat(path).st_mtime) + 2
            os.utime(path, (mtime, mtime))
        record = {"id": photo_id, "owner": owner, "title": data.get("title", "placed"),
                  "filename": f"{photo_id}.bin", "content_type": "application/octet-stream", "size": size,
                  "sha256": hasher.hexdigest(), "created_at": now_rfc3339()}
        store.put_photo(record)
        return json_response(201, {"id": photo_id, "size": size, "sha256": record["sha256"],
                                   "url": str(request.url_for("get_photo", photo_id=photo_id))})

    @api.post("/__photos/{photo_id}/serve")
    async def serve_settings(photo_id: str, request: Request) -> Response:
        data = await request.json()
        served.settings[photo_id] = {k: data[k] for k in ("rate", "cut_after", "stall_after", "bad_digest",
                                                          "content_range_shift") if k in data}
        return json_response(200, served.settings[photo_id])

    @api.get("/__photos/served")
    async def list_served() -> Response:
        return json_response(200, served.entries)

    return served
