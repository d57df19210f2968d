"""An IETF draft upload's record and bytes (courier_backend/ietf.py): `IetfUploads`.

The record is a row of `ietf_uploads` in the Store's database; the bytes are `uploads/ietf-<id>`
in the data dir, streamed there by `receive`, never held whole in memory. The offset in the
database (the only one ever answered) moves only after the file is fsynced up to it (`set_offset`),
and the file is cut back to that offset before a request writes. A request without
`Content-Digest` keeps what arrived when it is cut short (committed every COMMIT_EVERY bytes, at the
disconnect, and at the end); one with it keeps all or nothing. A newer request to the upload
takes over from an older one still streaming (`Superseded`). `finish` makes the complete file the
photo, the same record `POST /photos` and tus make (a multipart/form-data body is processed as
that route processes it). The request handlers (`ietf_handlers.IetfApp`) build on this class.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import os
import threading
import time
from typing import Callable

from .ietf_fields import DIGESTS, Digests, is_multipart
from .ietf_h11 import Disconnected, Exchange
from .ietf_interop import Limits, limit_header
from .ietf_problems import INCONSISTENT_LENGTH, Problem, courier_problem
from .store import Store, now_rfc3339

COMMIT_EVERY = 1024 * 1024  # fsync, confirm and (interop >= 5) announce a 104 at least this often


class Superseded(Exception):
    """A newer request took over the upload while this one was writing."""


def fsync_dir(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def remove_file(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


class IetfUploads:
    """The draft's uploads: their records, their files, the bytes a request streams into one,
    and the photo a complete one becomes. `limits` is what `Upload-Limit` advertises."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.limits = self._default_limits()
        self.locks: dict[str, threading.Lock] = {}
        # The request writing each upload (its token, start, bytes written, whether it keeps a cut
        # part), changed under the upload's lock: a takeover confirms what it wrote (`take_over`).
        self.streams: dict[str, dict] = {}
        self.locks_guard = threading.Lock()

    def _default_limits(self) -> Limits:
        size = self.store.config.tus_max_size
        return Limits(max_size=size, max_append_size=size)

    def lock_for(self, upload_id: str) -> threading.Lock:
        with self.locks_guard:
            return self.locks.setdefault(upload_id, threading.Lock())

    def writer_key(self, upload_id: str) -> str:
        return "ietf:" + upload_id

    def take_over(self, upload_id: str) -> str:
        """Makes the caller the upload's only writer, and confirms what an older request still
        streaming wrote before it (when that request keeps a cut part: no Content-Digest). That
        request stops at its next chunk without confirming anything itself."""
        token = self.store.claim_upload(self.writer_key(upload_id))
        with self.lock_for(upload_id):
            older = self.streams.pop(upload_id, None)
            if older is not None and older["keeps"] and older["start"] + older["written"] > older["committed"]:
                fd = os.open(self.path_of(upload_id), os.O_WRONLY)
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)
                older["committed"] = older["start"] + older["written"]
                self.set_offset(upload_id, older["committed"])
        return token

    def path_of(self, upload_id: str) -> str:
        return os.path.join(self.store.upload_dir, "ietf-" + upload_id)

    # ------------------------------------------------------------ records
    def get(self, upload_id: str) -> dict | None:
        with self.store.lock:
            row = self.store.db.execute("SELECT * FROM ietf_uploads WHERE id=?", (upload_id,)).fetchone()
        return dict(row) if row else None

    def set_state(self, upload_id: str, state: str) -> None:
        with self.store._tx() as db:
            db.execute("UPDATE ietf_uploads SET state=? WHERE id=?", (state, upload_id))

    def set_length(self, upload_id: str, length: int) -> None:
        with self.store._tx() as db:
            db.execute("UPDATE ietf_uploads SET length=? WHERE id=? AND length IS NULL", (length, upload_id))

    def set_offset(self, upload_id: str, offset: int) -> None:
        """Called only once the file's bytes up to `offset` are fsynced."""
        with self.store._tx() as db:
            db.execute("UPDATE ietf_uploads SET upload_offset=?, expires_at=? WHERE id=? AND state='active'",
                       (offset, time.time() + self.store.config.tus_ttl, upload_id))

    def count_bytes(self, upload_id: str, n: int) -> None:
        self.store.count_upload_bytes(self.writer_key(upload_id), n)

    # ------------------------------------------------------------ writing bytes
    def receive(self, ex: Exchange, upload: dict, start: int, content_digest: dict[str, bytes] | None,
                token: str, interop: int, progress: bool, cap: int | None, over_cap: Callable[[], Problem]) -> int:
        """Streams the body into the upload's file from `start`; returns the confirmed offset.

        `cap` is the most bytes this request may carry (max-append-size, or what is left of the
        upload's length). Past it the request is refused with `over_cap()`; the bytes before the
        cap are kept as a cut request's would be (all or nothing with Content-Digest).
        """
        upload_id = upload["id"]
        key = self.writer_key(upload_id)
        lock = self.lock_for(upload_id)
        digests = Digests(content_digest) if content_digest else None
        fd = os.open(self.path_of(upload_id), os.O_WRONLY | os.O_CREAT, 0o600)
        written = 0
        committed = start
        announce: list[int] = []
        began = time.time()
        outcome = "error"

        stream = {"token": token, "start": start, "written": 0, "committed": start, "keeps": digests is None}

        def commit() -> None:  # under `lock`
            nonlocal committed
            os.fsync(fd)
            if start + written != committed:
                committed = start + written
                stream["committed"] = committed
                self.set_offset(upload_id, committed)
                if progress:
                    announce.append(committed)

        def announce_progress() -> None:  # not under `lock`: a slow client must not block a new request
            while announce:
                ex.interim(104, {"Upload-Offset": str(announce.pop(0)), "Upload-Draft-Interop-Version": str(interop)},
                           b"Upload Resumption Supported")

        try:
            with lock:
                if (self.get(upload_id) or {}).get("state") != "active":
                    raise Superseded()  # completed or cancelled since this request was checked
                os.ftruncate(fd, start)  # bytes past the confirmed offset were never confirmed
                os.lseek(fd, start, os.SEEK_SET)
                if self.store.owns_upload(key, token):
                    self.streams[upload_id] = stream
            try:
                for chunk in ex.chunks():
                    with lock:
                        # Counted under the lock: a takeover that sees the count sees the bytes.
                        self.count_bytes(upload_id, len(chunk))
                        if not self.store.owns_upload(key, token):
                            raise Superseded()
                        if cap is not None and written + len(chunk) > cap:
                            keep = cap - written
                            if digests is not None:
                                os.ftruncate(fd, start)
                            elif keep > 0:
                                self._write(fd, memoryview(chunk)[:keep])
                                written += keep
                                stream["written"] = written
                                commit()
                            raise over_cap()
                        self._write(fd, memoryview(chunk))
                        written += len(chunk)
                        stream["written"] = written
                        if digests is not None:
                            digests.update(chunk)
                        elif start + written - committed >= COMMIT_EVERY:
                            commit()
                    announce_progress()
            except Disconnected:
                outcome = "disconnected"
                with lock:
                    if digests is None and self.store.owns_upload(key, token):
                        commit()  # a request cut short keeps what arrived
                    else:
                        outcome = "disconnected, superseded"
                raise
            except Superseded:
                outcome = "superseded"
                ex.conn.reset = True
                raise
            with lock:
                if not self.store.owns_upload(key, token):
                    outcome = "superseded"
                    ex.conn.reset = True
                    raise Superseded()
                if digests is not None and not digests.matches(content_digest):
                    outcome = "digest mismatch"
                    os.ftruncate(fd, start)
                    raise courier_problem(400, "content-digest-mismatch",
                                          "Content-Digest does not match the content; nothing of it was kept.",
                                          headers={"Upload-Offset": str(start)})
                commit()
            outcome = "complete"
            announce.clear()  # the final answer carries the offset
            return committed
        finally:
            with lock:
                if self.streams.get(upload_id) is stream:
                    del self.streams[upload_id]
            os.close(fd)
            self.store.trace_upload(server="ietf", upload=upload_id, method=ex.method, start=start,
                                    length=ex.content_length, received=ex.body_bytes, written=written,
                                    kept=stream["committed"] - start, outcome=outcome, peer=list(ex.conn.peer)[1:2],
                                    began=round(began, 4))

    @staticmethod
    def _write(fd: int, view: memoryview) -> None:
        while view:
            n = os.write(fd, view)
            view = view[n:]

    def past_length(self, upload: dict) -> Callable[[], Problem]:
        def problem() -> Problem:
            # The draft: an offset past the known length deactivates the upload.
            self.set_state(upload["id"], "invalid")
            remove_file(self.path_of(upload["id"]))
            return Problem(400, INCONSISTENT_LENGTH, "The content goes past the upload's length; the upload is"
                           " deactivated.")
        return problem

    def past_append_limit(self, upload: dict, interop: int) -> Callable[[], Problem]:
        return lambda: Problem(413, "about:blank", "The content goes past max-append-size (or the upload past"
                               " max-size).", headers=limit_header(self.limits, max(interop, 6), upload))

    def capped(self, upload: dict, offset: int, interop: int) -> tuple[int, Callable[[], Problem]]:
        """The most bytes a request from `offset` may carry, and the problem past them."""
        cap = self.limits.max_append_size
        if upload["length"] is not None and upload["length"] - offset <= cap:
            return upload["length"] - offset, self.past_length(upload)
        if upload["length"] is None and self.limits.max_size - offset < cap:
            return max(0, self.limits.max_size - offset), self.past_append_limit(upload, interop)
        return cap, self.past_append_limit(upload, interop)

    def finish(self, upload: dict) -> dict:
        """The client said complete and every byte is here: the file becomes the photo. Idempotent."""
        upload_id = upload["id"]
        if upload["state"] == "completed":
            return upload
        path = self.path_of(upload_id)
        hasher = hashlib.sha256()
        extra = {a: DIGESTS[a]() for a in json.loads(upload["repr_digest"] or "{}")}
        size = 0
        with open(path, "rb") as fh:
            while True:
                block = fh.read(1024 * 1024)
                if not block:
                    break
                hasher.update(block)
                for h in extra.values():
                    h.update(block)
                size += len(block)
        expected = {a: base64.b64decode(v) for a, v in json.loads(upload["repr_digest"] or "{}").items()}
        if expected and any(extra[a].digest() != d for a, d in expected.items()):
            self.set_state(upload_id, "failed")
            remove_file(path)
            raise courier_problem(400, "repr-digest-mismatch",
                                  "The uploaded bytes do not match the Repr-Digest sent at creation; the upload"
                                  " failed and was deleted.", headers={"Upload-Complete": "?1"})
        record = {"id": upload["photo_id"], "owner": upload["owner"], "title": upload["title"],
                  "filename": upload["filename"], "content_type": upload["content_type"], "size": size,
                  "sha256": hasher.hexdigest(), "created_at": now_rfc3339()}
        if is_multipart(upload["content_type"]):
            record = self.photo_from_form(upload, path, record)  # as POST /photos would have made it
        with self.lock_for(upload_id):  # a request that slipped in since sees the upload completed
            if not is_multipart(upload["content_type"]):
                os.replace(path, self.store.photo_path(upload["photo_id"]))
            fsync_dir(self.store.photo_dir)
            with self.store._tx() as db:
                db.execute("INSERT OR IGNORE INTO photos(id, owner, title, filename, content_type, size, sha256,"
                           " created_at) VALUES (:id, :owner, :title, :filename, :content_type, :size, :sha256,"
                           " :created_at)", record)
                db.execute("UPDATE ietf_uploads SET state='completed', length=?, upload_offset=? WHERE id=?",
                           (size, size, upload_id))
        return {**upload, "state": "completed", "length": size, "upload_offset": size,
                "repr_sha256": hasher.hexdigest()}

    def photo_from_form(self, upload: dict, path: str, record: dict) -> dict:
        """A multipart/form-data representation (the body `POST /photos` takes on the main port) is
        processed as that route processes it: its `title` field and first `file` part, the same
        checks (an image type, COURIER_BACKEND_MAX_UPLOAD). A failure is final: the draft's
        "transferred, but processing failed" (`Upload-Complete: ?1`), and the upload is deleted."""
        from .app import MAX_TITLE as PHOTO_MAX_TITLE, PhotoParts  # app imports this module
        from .errors import ApiError
        from .multipart import MultipartError, parse_multipart

        async def chunks():
            with open(path, "rb") as fh:
                while block := fh.read(1024 * 1024):
                    yield block

        def fail(status: int, code: str, title: str) -> Problem:
            self.set_state(upload["id"], "failed")
            remove_file(path)
            return courier_problem(status, code, title, headers={"Upload-Complete": "?1"})

        parts = PhotoParts(self.store, self.store.config.max_upload)
        try:
            asyncio.run(parse_multipart(upload["content_type"], chunks(), parts))
        except MultipartError as exc:
            parts.discard()
            raise fail(400, "bad-multipart", str(exc))
        except ApiError as exc:
            parts.discard()
            raise fail(exc.status, exc.code.replace("_", "-"), exc.message)
        if parts.file is None or parts.file_info is None:
            parts.discard()
            raise fail(422, "validation-failed", "A file part named 'file' is required.")
        if parts.title is None or len(parts.title.value) > PHOTO_MAX_TITLE:
            parts.discard()
            raise fail(422, "validation-failed", "A text field named 'title' is required, at most"
                       f" {PHOTO_MAX_TITLE} characters.")
        parts.file.end()
        os.replace(parts.file.path, self.store.photo_path(upload["photo_id"]))
        remove_file(path)
        return {**record, "title": parts.title.value, "filename": parts.file_info.filename,
                "content_type": (parts.file_info.content_type or "").strip(), "size": parts.file.size,
                "sha256": parts.file.hasher.hexdigest()}
