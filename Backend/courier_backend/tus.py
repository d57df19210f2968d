"""tus 1.0.0 at /uploads: core, creation, creation-with-upload, termination, checksum, expiration.

Docs/tus.md is the contract. The rules this module keeps:

- Bytes are streamed to `uploads/<id>` in the data dir, never held whole in memory.
- The offset in the database (the only one ever answered) moves only after the file is fsynced
  up to it: a crash loses at most bytes nobody was told about. Before writing, the file is cut
  back to that offset, so bytes written but never confirmed are dropped, not trusted.
- A PATCH without Upload-Checksum keeps what it received even when the client goes away
  (committed every COMMIT_EVERY bytes and at the end); a PATCH with one keeps all or nothing.
- A newer PATCH (or DELETE) of the same upload takes over from an older one still running (a
  client that was killed and resumed while the server had not yet noticed the dead connection):
  the older one stops at its next chunk and confirms nothing more. A HEAD first waits (at most
  HEAD_SETTLE) for a PATCH still receiving bytes to end, so a killed client's last piece that its
  kernel is still delivering is kept and answered, not sent again (decision 2713).
- On completion the file becomes a photo (the record `POST /photos` makes) with the id chosen
  at creation, answered as `Courier-Photo-Id`.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
import time
import uuid
from email.utils import formatdate
from typing import Callable

import anyio
from fastapi import FastAPI, Request
from starlette.requests import ClientDisconnect
from starlette.responses import Response

from .errors import ApiError
from .middleware import normalize_idempotency_key
from .store import Store, now_rfc3339

TUS_VERSION = "1.0.0"
TUS_EXTENSIONS = "creation,creation-with-upload,termination,checksum,expiration"
CHECKSUMS: dict[str, Callable] = {"sha1": hashlib.sha1, "sha256": hashlib.sha256, "md5": hashlib.md5}
OFFSET_STREAM = "application/offset+octet-stream"
COMMIT_EVERY = 8 * 1024 * 1024  # a PATCH without checksum fsyncs and confirms at least this often
HEAD_SETTLE = 2.0  # the longest a HEAD waits for a PATCH of the upload still receiving bytes
QUIET = 0.25  # a PATCH that received nothing for this long is not waited for (a ghost, a stalled link)
MAX_METADATA = 64 * 1024
MAX_TITLE = 200
PHOTO_ID_HEADER = "Courier-Photo-Id"
BYTES_HEADER = "Courier-Bytes-Received"
DEFAULT_CONTENT_TYPE = "application/octet-stream"


def tus_error(status: int, code: str, message: str, *, field: str | None = None,
              headers: dict[str, str] | None = None) -> ApiError:
    return ApiError(status, code, message, field=field, headers={"Tus-Resumable": TUS_VERSION, **(headers or {})})


def parse_metadata(header: str | None) -> dict[str, bytes]:
    """`key base64,key2 base64,flag` -> {key: bytes}; a key without a value maps to b""."""
    if header is None or not header.strip():
        return {}
    if len(header) > MAX_METADATA:
        raise tus_error(400, "bad_metadata", f"Upload-Metadata is limited to {MAX_METADATA} bytes.",
                        field="Upload-Metadata")
    out: dict[str, bytes] = {}
    for pair in header.split(","):
        pieces = pair.strip().split(" ")
        if len(pieces) > 2 or not pieces[0]:
            raise tus_error(400, "bad_metadata", "Upload-Metadata must be 'key base64value' pairs separated by ','.",
                            field="Upload-Metadata")
        key = pieces[0]
        if key in out:
            raise tus_error(400, "bad_metadata", f"Upload-Metadata repeats the key '{key}'.", field="Upload-Metadata")
        try:
            out[key] = base64.b64decode(pieces[1], validate=True) if len(pieces) == 2 else b""
        except (binascii.Error, ValueError):
            raise tus_error(400, "bad_metadata", f"The value of '{key}' in Upload-Metadata is not base64.",
                            field="Upload-Metadata")
    return out


def metadata_text(metadata: dict[str, bytes], key: str) -> str | None:
    if key not in metadata:
        return None
    try:
        return metadata[key].decode("utf-8")
    except UnicodeDecodeError:
        raise tus_error(400, "bad_metadata", f"The value of '{key}' in Upload-Metadata is not UTF-8.",
                        field="Upload-Metadata")


def parse_count(value: str | None, name: str) -> int | None:
    if value is None:
        return None
    value = value.strip()
    if not value.isdigit() or not value.isascii() or len(value) > 19:
        raise tus_error(400, "bad_request", f"{name} must be a non-negative integer.", field=name)
    return int(value)


def parse_checksum(value: str | None):
    """`sha1 <base64>` -> (hasher, expected digest bytes) or None."""
    if value is None:
        return None
    algo, _, encoded = value.strip().partition(" ")
    algo = algo.lower()
    if algo not in CHECKSUMS:
        raise tus_error(400, "checksum_algorithm_unsupported",
                        f"Upload-Checksum algorithm '{algo}' is not supported (use {','.join(CHECKSUMS)}).",
                        field="Upload-Checksum")
    try:
        expected = base64.b64decode(encoded.strip(), validate=True)
    except (binascii.Error, ValueError):
        raise tus_error(400, "bad_request", "Upload-Checksum must be '<algorithm> <base64 digest>'.",
                        field="Upload-Checksum")
    return CHECKSUMS[algo](), expected


def http_date(ts: float) -> str:
    return formatdate(ts, usegmt=True)


def _fsync_dir(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _hash_file(path: str) -> tuple[str, int]:
    hasher = hashlib.sha256()
    size = 0
    with open(path, "rb") as fh:
        while True:
            block = fh.read(1024 * 1024)
            if not block:
                break
            hasher.update(block)
            size += len(block)
    return hasher.hexdigest(), size


class _Superseded(Exception):
    """A newer request took over the upload while this one was writing."""


def install(api: FastAPI, store: Store, require_user: Callable[[Request], str]) -> None:
    """Adds the /uploads routes to `api`."""

    def base_headers() -> dict[str, str]:
        return {"Tus-Resumable": TUS_VERSION}

    # When each upload's writer last received a chunk (monotonic), for HEAD's wait.
    activity: dict[str, float] = {}

    async def settle(upload_id: str) -> None:
        """Waits (at most HEAD_SETTLE) while a PATCH of the upload is still receiving bytes."""
        deadline = time.monotonic() + HEAD_SETTLE
        while time.monotonic() < deadline:
            with store.lock:
                writing = upload_id in store.upload_writers
            if not writing or time.monotonic() - activity.get(upload_id, 0.0) > QUIET:
                return
            await anyio.sleep(0.01)

    def require_tus(request: Request) -> None:
        version = request.headers.get("tus-resumable")
        if version is None or version.strip() != TUS_VERSION:
            raise tus_error(412, "tus_version_unsupported",
                            f"Send Tus-Resumable: {TUS_VERSION} (got {version or 'none'}).",
                            headers={"Tus-Version": TUS_VERSION})

    def authorize(request: Request) -> str:
        try:
            return require_user(request)
        except ApiError as exc:
            exc.headers.setdefault("Tus-Resumable", TUS_VERSION)
            raise

    def load(upload_id: str, user: str) -> dict:
        """The caller's upload, active or completed; 404 unknown (or another user's), 410 gone."""
        upload = store.get_upload(upload_id)
        if upload is None or upload["owner"] != user:
            raise tus_error(404, "not_found", "No such upload.")
        if upload["state"] == "active" and upload["expires_at"] <= time.time():
            store.set_upload_state(upload_id, "expired")
            _remove(store.upload_path(upload_id))
            upload["state"] = "expired"
        if upload["state"] == "terminated":
            raise tus_error(410, "upload_gone", "The upload was terminated.")
        if upload["state"] == "expired":
            raise tus_error(410, "upload_gone", "The upload expired; create a new one.")
        return upload

    def offset_headers(upload: dict, offset: int, method: str) -> dict[str, str]:
        """Upload-Offset (unless chaos makes it lie), Upload-Expires, Courier-Photo-Id when done."""
        headers = base_headers()
        answered: int | None = offset
        lie = store.take_tus_offset_lie(method)
        if lie is not None:
            mode, delta = lie
            if mode == "beyond":
                answered = offset + delta
            elif mode == "behind":
                answered = max(0, offset - delta)
            else:  # missing
                answered = None
        if answered is not None:
            headers["Upload-Offset"] = str(answered)
        if upload["state"] == "completed":
            headers[PHOTO_ID_HEADER] = upload["photo_id"]
        else:
            headers["Upload-Expires"] = http_date(upload["expires_at"])
        return headers

    async def drain(request: Request) -> None:
        async for _ in request.stream():
            pass

    async def receive_into(request: Request, upload: dict, start: int, checksum, token: str) -> int:
        """Streams the body into the upload's file from `start`; returns the new confirmed offset."""
        upload_id = upload["id"]
        path = store.upload_path(upload_id)
        remaining = upload["length"] - start
        fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
        written = 0
        committed = start
        received = 0
        began = time.time()
        outcome = "error"
        # The photo's SHA-256, carried along while every byte since 0 went through this process.
        known = store.upload_hashes.get(upload_id)
        content_hash = known[1].copy() if known and known[0] == start else hashlib.sha256() if start == 0 else None

        def commit() -> None:
            nonlocal committed
            os.fsync(fd)
            if start + written != committed:
                committed = start + written
                store.set_upload_offset(upload_id, committed, time.time() + store.config.tus_ttl)
                if content_hash is not None:
                    store.upload_hashes[upload_id] = (committed, content_hash.copy())

        try:
            os.ftruncate(fd, start)  # bytes past the confirmed offset were never confirmed: drop them
            os.lseek(fd, start, os.SEEK_SET)
            try:
                async for chunk in request.stream():
                    if not chunk:
                        continue
                    received += len(chunk)
                    activity[upload_id] = time.monotonic()
                    if not store.owns_upload(upload_id, token):
                        outcome = "superseded"
                        raise _Superseded()
                    if written + len(chunk) > remaining:
                        os.ftruncate(fd, committed)
                        raise tus_error(413, "upload_too_large",
                                        f"The body goes past Upload-Length ({upload['length']} bytes).")
                    view = memoryview(chunk)
                    while view:
                        n = os.write(fd, view)
                        view = view[n:]
                    written += len(chunk)
                    if content_hash is not None:
                        content_hash.update(chunk)
                    if checksum is not None:
                        checksum[0].update(chunk)
                    elif start + written - committed >= COMMIT_EVERY:
                        commit()
            except ClientDisconnect:
                # The client went away: keep what arrived (unless it had to match a checksum).
                outcome = "disconnected"
                if checksum is None and store.owns_upload(upload_id, token):
                    commit()
                raise
            if not store.owns_upload(upload_id, token):
                outcome = "superseded"
                raise _Superseded()
            if checksum is not None and checksum[0].digest() != checksum[1]:
                outcome = "checksum mismatch"
                os.ftruncate(fd, start)
                raise tus_error(460, "checksum_mismatch",
                                "Upload-Checksum does not match the bytes received; the chunk was discarded.",
                                headers={"Upload-Offset": str(start)})
            commit()
            outcome = "complete"
            return committed
        finally:
            activity.pop(upload_id, None)
            os.close(fd)
            real = getattr(request, "_request", request)  # _Counting wraps the creation's request
            store.trace_upload(server="tus", upload=upload_id, start=start,
                               length=real.headers.get("content-length"), received=received, written=written,
                               kept=committed - start, outcome=outcome,
                               peer=[real.client.port] if real.client else [], began=round(began, 4))

    async def finish(request: Request, upload: dict) -> dict:
        """offset == length: the file becomes the photo chosen at creation. Idempotent."""
        if upload["state"] == "completed":
            return upload
        path = store.upload_path(upload["id"])
        photo_path = store.photo_path(upload["photo_id"])
        if os.path.exists(path):
            os.replace(path, photo_path)
            _fsync_dir(store.photo_dir)
        known = store.upload_hashes.pop(upload["id"], None)
        if known is not None and known[0] == upload["length"] == os.path.getsize(photo_path):
            digest, size = known[1].hexdigest(), upload["length"]
        else:
            digest, size = await anyio.to_thread.run_sync(_hash_file, photo_path)
        record = {"id": upload["photo_id"], "owner": upload["owner"], "title": upload["title"],
                  "filename": upload["filename"], "content_type": upload["content_type"], "size": size,
                  "sha256": digest, "created_at": now_rfc3339()}
        store.complete_upload(upload["id"], record)
        return {**upload, "state": "completed", "upload_offset": upload["length"]}

    def upload_url(request: Request, upload_id: str) -> str:
        return str(request.url_for("tus_upload", upload_id=upload_id))

    # ------------------------------------------------------------------ discovery
    def options_response() -> Response:
        return Response(status_code=204, headers={
            **base_headers(), "Tus-Version": TUS_VERSION, "Tus-Extension": TUS_EXTENSIONS,
            "Tus-Max-Size": str(store.config.tus_max_size), "Tus-Checksum-Algorithm": ",".join(CHECKSUMS)})

    @api.options("/uploads")
    async def tus_options() -> Response:
        return options_response()

    @api.options("/uploads/{upload_id}")
    async def tus_options_upload(upload_id: str) -> Response:
        return options_response()

    # ------------------------------------------------------------------ creation
    @api.post("/uploads")
    async def tus_create(request: Request) -> Response:
        require_tus(request)
        user = authorize(request)
        key = normalize_idempotency_key(request.headers.get("idempotency-key"))
        if key:
            existing = store.upload_for_key(user, key)
            if existing is not None:
                # A retried creation (its first answer was lost): the same upload, its offset now.
                await drain(request)
                state_headers = offset_headers(existing, existing["upload_offset"], "POST") \
                    if existing["state"] in ("active", "completed") else base_headers()
                url = upload_url(request, existing["id"])
                return Response(status_code=201, headers={**state_headers, "Location": url})
        if request.headers.get("upload-defer-length") is not None:
            raise tus_error(400, "bad_request", "Upload-Defer-Length is not supported; send Upload-Length.",
                            field="Upload-Defer-Length")
        length = parse_count(request.headers.get("upload-length"), "Upload-Length")
        if length is None:
            raise tus_error(400, "bad_request", "Upload-Length is required.", field="Upload-Length")
        if length > store.config.tus_max_size:
            raise tus_error(413, "upload_too_large",
                            f"Upload-Length is over Tus-Max-Size ({store.config.tus_max_size} bytes).",
                            field="Upload-Length")
        metadata = parse_metadata(request.headers.get("upload-metadata"))
        title = metadata_text(metadata, "title")
        if title is None:
            raise tus_error(422, "validation_failed", "Upload-Metadata must carry a 'title' (it may be empty).",
                            field="title")
        if len(title) > MAX_TITLE:
            raise tus_error(422, "validation_failed", f"The title must be at most {MAX_TITLE} characters.",
                            field="title")
        filename = metadata_text(metadata, "filename")
        content_type = (metadata_text(metadata, "filetype") or metadata_text(metadata, "content_type")
                        or DEFAULT_CONTENT_TYPE).strip() or DEFAULT_CONTENT_TYPE
        body_type = (request.headers.get("content-type") or "").split(";", 1)[0].strip().lower()
        has_body = body_type == OFFSET_STREAM
        if not has_body and (request.headers.get("transfer-encoding") is not None
                             or (request.headers.get("content-length") or "0").strip() not in ("", "0")):
            raise tus_error(415, "unsupported_media_type",
                            f"A body sent with the creation must be Content-Type: {OFFSET_STREAM}.")
        checksum = parse_checksum(request.headers.get("upload-checksum")) if has_body else None

        upload_id = uuid.uuid4().hex
        upload = {"id": upload_id, "owner": user, "length": length, "upload_offset": 0,
                  "metadata": request.headers.get("upload-metadata") or "", "title": title, "filename": filename,
                  "content_type": content_type, "photo_id": str(uuid.uuid4()), "state": "active",
                  "idempotency_key": key or None, "created_at": now_rfc3339(),
                  "expires_at": time.time() + store.config.tus_ttl}
        with open(store.upload_path(upload_id), "wb") as fh:
            os.fsync(fh.fileno())
        _fsync_dir(store.upload_dir)
        store.create_upload(upload)
        url = upload_url(request, upload_id)
        offset = 0
        if has_body:
            token = store.claim_upload(upload_id)
            counted = _Counting(request, lambda n: store.count_upload_bytes(upload_id, n))
            try:
                offset = await receive_into(counted, upload, 0, checksum, token)
            except ApiError as exc:
                # The upload exists even though its first chunk was refused: say where it is.
                exc.headers["Location"] = url
                raise
            except _Superseded:
                offset = store.get_upload(upload_id)["upload_offset"]
            finally:
                store.release_upload(upload_id, token)
            upload = store.get_upload(upload_id) or upload
            upload["upload_offset"] = offset
        if offset == length:
            upload = await finish(request, upload)
        return Response(status_code=201, headers={**offset_headers(upload, offset, "POST"), "Location": url})

    # ------------------------------------------------------------------ core
    @api.head("/uploads/{upload_id}", name="tus_upload")
    async def tus_head(upload_id: str, request: Request) -> Response:
        require_tus(request)
        user = authorize(request)
        load(upload_id, user)
        await settle(upload_id)  # a piece still arriving is answered, not sent again
        upload = load(upload_id, user)
        if upload["state"] == "active" and upload["upload_offset"] == upload["length"]:
            upload = await finish(request, upload)  # completed, but the server stopped before recording it
        headers = offset_headers(upload, upload["upload_offset"], "HEAD")
        headers.update({"Upload-Length": str(upload["length"]), "Cache-Control": "no-store",
                        BYTES_HEADER: str(store.upload_bytes.get(upload_id, 0))})
        if upload["metadata"]:
            headers["Upload-Metadata"] = upload["metadata"]
        return Response(status_code=200, headers=headers)

    @api.patch("/uploads/{upload_id}")
    async def tus_patch(upload_id: str, request: Request) -> Response:
        require_tus(request)
        user = authorize(request)
        body_type = (request.headers.get("content-type") or "").split(";", 1)[0].strip().lower()
        if body_type != OFFSET_STREAM:
            raise tus_error(415, "unsupported_media_type", f"PATCH needs Content-Type: {OFFSET_STREAM}.")
        offset = parse_count(request.headers.get("upload-offset"), "Upload-Offset")
        if offset is None:
            raise tus_error(400, "bad_request", "Upload-Offset is required.", field="Upload-Offset")
        checksum = parse_checksum(request.headers.get("upload-checksum"))
        load(upload_id, user)
        token = store.claim_upload(upload_id)  # from here on, an older PATCH still running stops
        try:
            upload = load(upload_id, user)
            confirmed = upload["upload_offset"]
            if offset != confirmed:
                raise tus_error(409, "offset_mismatch",
                                f"Upload-Offset is {offset} but the server has {confirmed} bytes; HEAD, then resume.",
                                headers={"Upload-Offset": str(confirmed)})
            if upload["state"] == "completed":
                await drain(request)
                if request.headers.get("content-length", "0").strip() not in ("", "0"):
                    raise tus_error(413, "upload_too_large", "The upload is already complete.")
                return Response(status_code=204, headers=offset_headers(upload, confirmed, "PATCH"))
            length = parse_count(request.headers.get("content-length"), "Content-Length")
            if length is not None and offset + length > upload["length"]:
                raise tus_error(413, "upload_too_large",
                                f"The body goes past Upload-Length ({upload['length']} bytes).")
            try:
                new_offset = await receive_into(request, upload, offset, checksum, token)
            except _Superseded:
                raise tus_error(409, "upload_superseded", "A newer request took over this upload.")
            upload = store.get_upload(upload_id) or upload  # the new Upload-Expires
            upload["upload_offset"] = new_offset
            if new_offset == upload["length"]:
                upload = await finish(request, upload)
            return Response(status_code=204, headers=offset_headers(upload, new_offset, "PATCH"))
        finally:
            store.release_upload(upload_id, token)

    # ------------------------------------------------------------------ termination
    @api.delete("/uploads/{upload_id}")
    async def tus_delete(upload_id: str, request: Request) -> Response:
        require_tus(request)
        user = authorize(request)
        upload = load(upload_id, user)
        if upload["state"] == "completed":
            # The photo exists; deleting it is /photos' business. Termination is for unfinished uploads.
            raise tus_error(409, "upload_complete", "The upload is complete; it is the photo in Courier-Photo-Id.",
                            headers={PHOTO_ID_HEADER: upload["photo_id"]})
        token = store.claim_upload(upload_id)  # a PATCH still running stops
        try:
            store.set_upload_state(upload_id, "terminated")
            _remove(store.upload_path(upload_id))
        finally:
            store.release_upload(upload_id, token)
        return Response(status_code=204, headers=base_headers())


class _Counting:
    """A request whose body chunks are counted (POST /uploads: the id is not in the path)."""

    def __init__(self, request: Request, on_bytes: Callable[[int], None]) -> None:
        self._request = request
        self._on_bytes = on_bytes

    async def stream(self):
        async for chunk in self._request.stream():
            if chunk:
                self._on_bytes(len(chunk))
            yield chunk


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
