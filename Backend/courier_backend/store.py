"""All server state: SQLite for records, a few in-memory values for test hooks.

Every access goes through one lock, so concurrent requests (async handlers, or threads)
never interleave inside a read-modify-write.
"""

from __future__ import annotations

import asyncio

import json
import os
import secrets
import shutil
import sqlite3
import threading
import time
import uuid
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from typing import Any

from .config import Settings
from .holds import Hold, HoldGate

DEMO_USERS = {"alice": "secret", "bob": "secret"}

SCHEMA = """
CREATE TABLE IF NOT EXISTS tokens (
    token TEXT PRIMARY KEY,
    kind TEXT NOT NULL,              -- 'access' | 'refresh'
    username TEXT NOT NULL,
    expires_at REAL NOT NULL,
    used INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS articles (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    title TEXT NOT NULL,
    body TEXT NOT NULL,
    version INTEGER NOT NULL,
    updated_at TEXT NOT NULL,
    photo TEXT                       -- the id of a photo of the writer's (/photos), or NULL
);
CREATE TABLE IF NOT EXISTS notes (  -- the second collection (Docs/notes.md): other field names
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    note_id TEXT NOT NULL UNIQUE,
    text TEXT NOT NULL,
    tags TEXT NOT NULL,              -- a JSON list of strings
    rev INTEGER NOT NULL,
    modified_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS documents (  -- free-form records (Docs/contract.md, "Documents")
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    fields TEXT NOT NULL,            -- a JSON object: every member but id, version, updated_at
    version INTEGER NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS idempotency (
    scope TEXT NOT NULL,
    key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    status INTEGER NOT NULL,
    headers TEXT NOT NULL,
    body BLOB NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (scope, key)
);
CREATE TABLE IF NOT EXISTS log (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    method TEXT NOT NULL,
    path TEXT NOT NULL,
    query TEXT NOT NULL,
    idempotency_key TEXT,
    status INTEGER,
    at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS photos (
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    title TEXT NOT NULL,
    filename TEXT,
    content_type TEXT NOT NULL,
    size INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS uploads (  -- tus uploads (/uploads); the bytes are in uploads/<id>
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    length INTEGER NOT NULL,
    upload_offset INTEGER NOT NULL,  -- bytes fsynced to the file: the only offset ever answered
    metadata TEXT NOT NULL,          -- the Upload-Metadata header as received
    title TEXT NOT NULL,
    filename TEXT,
    content_type TEXT NOT NULL,
    photo_id TEXT NOT NULL,          -- chosen at creation: the photo the upload becomes
    state TEXT NOT NULL,             -- active | completed | terminated | expired
    idempotency_key TEXT,
    created_at TEXT NOT NULL,
    expires_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS uploads_by_key ON uploads(owner, idempotency_key);
CREATE TABLE IF NOT EXISTS ietf_uploads (  -- IETF draft uploads (ietf.py); bytes in uploads/ietf-<id>
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    interop INTEGER NOT NULL,        -- Upload-Draft-Interop-Version of the creation (its field names)
    length INTEGER,                  -- NULL until the client says it (Upload-Length, or Upload-Complete: ?1)
    upload_offset INTEGER NOT NULL,  -- bytes fsynced to the file: the only offset ever answered
    state TEXT NOT NULL,             -- active | completed | cancelled | expired | invalid | failed
    title TEXT NOT NULL,
    filename TEXT,
    content_type TEXT NOT NULL,
    photo_id TEXT NOT NULL,          -- chosen at creation: the photo the upload becomes
    repr_digest TEXT NOT NULL,       -- JSON {algorithm: base64} of Repr-Digest at creation, checked at the end
    created_at TEXT NOT NULL,
    expires_at REAL NOT NULL
);
"""


def now_rfc3339() -> str:
    """`2026-11-30T10:15:00.123Z`: RFC 3339, UTC, milliseconds."""
    dt = datetime.now(timezone.utc)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


@dataclass
class Chaos:
    fail_next: int = 0
    status: int = 503
    retry_after: int | str | None = None
    delay_ms: int = 0
    format: str = "json"  # json | problem | html | empty
    path: str | None = None  # only requests whose path starts with this fail
    after: bool = False  # process the request for real, then answer with the failure (a lost response)
    fail_all: bool = False  # every request fails (an outage) until the chaos is set again
    method: str | None = None  # only requests with this method fail
    # tus: lie about Upload-Offset in the next `tus_offset_count` answers (PATCH 204, HEAD 200,
    # POST 201) of `tus_offset_method` (None: any of them). The stored upload stays truthful.
    tus_offset_mode: str | None = None  # beyond | behind | missing
    tus_offset_count: int = 1
    tus_offset_delta: int = 1
    tus_offset_method: str | None = None

    def to_json(self) -> dict:
        return asdict(self)


@dataclass
class RuntimeConfig:
    token_ttl: int
    max_upload: int
    tus_max_size: int
    tus_ttl: int
    # What a write based on a version answers for an article that is not there (deleted meanwhile):
    # "recreate" (the contract's reading: a PUT creates it, a DELETE is 404), "conflict" (409
    # version_conflict without `current`, as another server does) or "not_found" (404). Test-only,
    # set through POST /__config; /__reset restores "recreate".
    gone_answer: str = "recreate"
    # Other tus servers' prefixes an article's photo may name (decision 2515; POST /__config).
    attachment_servers: tuple[str, ...] = ()


@dataclass
class ChaosDecision:
    fail: bool
    status: int = 0
    retry_after: int | str | None = None
    format: str = "json"
    delay_ms: int = 0
    after: bool = False
    tus: bool = False  # a /uploads path: the failure carries Tus-Resumable (and Tus-Version on 412)


@dataclass
class IdemBegin:
    state: str  # "new" | "in_flight" | "done"
    ticket: str | None = None
    generation: int = 0
    record: dict | None = None


class Store:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.lock = threading.RLock()
        self.photo_dir = os.path.join(settings.data_dir, "photos")
        os.makedirs(self.photo_dir, exist_ok=True)
        self.upload_dir = os.path.join(settings.data_dir, "uploads")
        os.makedirs(self.upload_dir, exist_ok=True)
        self.db = sqlite3.connect(os.path.join(settings.data_dir, "courier.sqlite3"),
                                  check_same_thread=False, isolation_level=None)
        self.db.row_factory = sqlite3.Row
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.executescript(SCHEMA)
        # A data folder made before articles had photos gets the column.
        if "photo" not in {row["name"] for row in self.db.execute("PRAGMA table_info(articles)")}:
            self.db.execute("ALTER TABLE articles ADD COLUMN photo TEXT")
        self.chaos = Chaos()
        self.holds = HoldGate(self.lock)
        self.config = self._runtime_config()
        self.in_flight: dict[tuple[str, str], str] = {}
        self.generation = 0
        # tus, in memory only: body bytes received per upload id (whatever became of them), and
        # which request currently writes each upload (a newer PATCH takes over from an older one).
        self.upload_bytes: dict[str, int] = {}
        self.upload_writers: dict[str, str] = {}
        # tus: the SHA-256 of each upload's confirmed bytes, (offset, hasher), when known, so that
        # completion need not read the file again. Lost on restart: then the file is hashed.
        self.upload_hashes: dict[str, tuple[int, Any]] = {}
        # COURIER_BACKEND_UPLOAD_TRACE=FILE: one JSON line per upload request that carried bytes
        # (tus and the IETF draft): where it started, what it received and kept, how it ended.
        self.upload_trace_path = os.environ.get("COURIER_BACKEND_UPLOAD_TRACE", "").strip() or None

    def trace_upload(self, **event: Any) -> None:
        """Appends `event` to the upload trace, when one is asked for (a benchmark's aid)."""
        if self.upload_trace_path is None:
            return
        line = json.dumps({"t": round(time.time(), 4), **event}) + "\n"
        with self.lock, open(self.upload_trace_path, "a") as fh:
            fh.write(line)

    def _runtime_config(self) -> RuntimeConfig:
        s = self.settings
        return RuntimeConfig(s.token_ttl, s.max_upload, s.tus_max_size, s.tus_ttl,
                             attachment_servers=s.attachment_servers)

    # ------------------------------------------------------------------ helpers
    def _tx(self):
        return _Transaction(self)

    # ------------------------------------------------------------------ reset
    def reset(self) -> None:
        with self._tx() as db:
            for table in ("tokens", "articles", "notes", "documents", "idempotency", "log", "photos",
                          "uploads", "ietf_uploads"):
                db.execute(f"DELETE FROM {table}")
            db.execute("DELETE FROM sqlite_sequence")
            self.chaos = Chaos()
            self.release_hold()
            self.config = self._runtime_config()
            self.in_flight.clear()
            self.upload_bytes.clear()
            self.upload_writers.clear()
            self.upload_hashes.clear()
            self.generation += 1
        for folder in (self.photo_dir, self.upload_dir):
            shutil.rmtree(folder, ignore_errors=True)
            os.makedirs(folder, exist_ok=True)

    # ------------------------------------------------------------------ auth
    def issue_tokens(self, username: str) -> dict:
        with self._tx() as db:
            return self._issue(db, username)

    def _issue(self, db: sqlite3.Connection, username: str) -> dict:
        now = time.time()
        ttl = self.config.token_ttl
        access = "at_" + secrets.token_urlsafe(32)
        refresh = "rt_" + secrets.token_urlsafe(32)
        db.execute("INSERT INTO tokens(token, kind, username, expires_at) VALUES (?,?,?,?)",
                   (access, "access", username, now + ttl))
        db.execute("INSERT INTO tokens(token, kind, username, expires_at) VALUES (?,?,?,?)",
                   (refresh, "refresh", username, now + self.settings.refresh_ttl))
        return {"access_token": access, "refresh_token": refresh, "token_type": "Bearer",
                "expires_in": ttl}

    def refresh(self, refresh_token: str) -> dict | None:
        """Consume a refresh token (it works once) and issue a new pair."""
        with self._tx() as db:
            row = db.execute("SELECT username, expires_at, used FROM tokens WHERE token=? AND kind='refresh'",
                             (refresh_token,)).fetchone()
            if row is None or row["used"] or row["expires_at"] <= time.time():
                return None
            db.execute("UPDATE tokens SET used=1 WHERE token=?", (refresh_token,))
            return self._issue(db, row["username"])

    def user_for_access_token(self, token: str) -> str | None:
        with self.lock:
            row = self.db.execute("SELECT username, expires_at FROM tokens WHERE token=? AND kind='access'",
                                  (token,)).fetchone()
        if row is None or row["expires_at"] <= time.time():
            return None
        return row["username"]

    def user_for_authorization(self, header: str | None) -> str | None:
        token = bearer_token(header)
        return self.user_for_access_token(token) if token else None

    # ------------------------------------------------------------------ articles
    @staticmethod
    def _article(row: sqlite3.Row | None) -> dict | None:
        if row is None:
            return None
        article = {"id": row["id"], "title": row["title"], "body": row["body"],
                   "version": row["version"], "updated_at": row["updated_at"]}
        if row["photo"] is not None:
            article["photo"] = row["photo"]
        return article

    def list_articles(self) -> list[dict]:
        with self.lock:
            rows = self.db.execute("SELECT * FROM articles ORDER BY seq").fetchall()
        return [self._article(r) for r in rows]

    def get_article(self, article_id: str) -> dict | None:
        with self.lock:
            return self._article(self.db.execute("SELECT * FROM articles WHERE id=?", (article_id,)).fetchone())

    def put_article(self, article_id: str, title: str, body: str, base: int | str | None,
                    photo: str | None = None) -> tuple[str, dict | None]:
        """Create-or-replace. Returns (outcome, article) with outcome one of
        created | replaced | precondition_required | conflict | precondition_failed."""
        with self._tx() as db:
            current = self._article(db.execute("SELECT * FROM articles WHERE id=?", (article_id,)).fetchone())
            stamp = now_rfc3339()
            if current is None:
                if base == "*":
                    return "precondition_failed", None
                if isinstance(base, int) and self.config.gone_answer != "recreate":
                    return "gone", None
                db.execute("INSERT INTO articles(id, title, body, version, updated_at, photo) VALUES (?,?,?,?,?,?)",
                           (article_id, title, body, 1, stamp, photo))
                return "created", self._article(db.execute("SELECT * FROM articles WHERE id=?",
                                                           (article_id,)).fetchone())
            if base is None:
                return "precondition_required", current
            if base != "*" and base != current["version"]:
                return "conflict", current
            version = current["version"] + 1
            db.execute("UPDATE articles SET title=?, body=?, version=?, updated_at=?, photo=? WHERE id=?",
                       (title, body, version, stamp, photo, article_id))
            return "replaced", self._article(db.execute("SELECT * FROM articles WHERE id=?",
                                                        (article_id,)).fetchone())

    def create_article(self, article_id: str, title: str, body: str,
                       photo: str | None = None) -> tuple[bool, dict]:
        with self._tx() as db:
            current = self._article(db.execute("SELECT * FROM articles WHERE id=?", (article_id,)).fetchone())
            if current is not None:
                return False, current
            stamp = now_rfc3339()
            db.execute("INSERT INTO articles(id, title, body, version, updated_at, photo) VALUES (?,?,?,?,?,?)",
                       (article_id, title, body, 1, stamp, photo))
            return True, self._article(db.execute("SELECT * FROM articles WHERE id=?", (article_id,)).fetchone())

    def delete_article(self, article_id: str, base: int | str | None) -> tuple[str, dict | None]:
        """Returns (outcome, current) with outcome deleted | not_found | conflict."""
        with self._tx() as db:
            current = self._article(db.execute("SELECT * FROM articles WHERE id=?", (article_id,)).fetchone())
            if current is None:
                if isinstance(base, int) and self.config.gone_answer == "conflict":
                    return "gone", None
                return "not_found", None
            if base is not None and base != "*" and base != current["version"]:
                return "conflict", current
            db.execute("DELETE FROM articles WHERE id=?", (article_id,))
            return "deleted", current

    # ------------------------------------------------------------------ notes
    @staticmethod
    def _note(row: sqlite3.Row | None) -> dict | None:
        if row is None:
            return None
        return {"note_id": row["note_id"], "text": row["text"], "tags": json.loads(row["tags"]),
                "rev": row["rev"], "modified_at": row["modified_at"]}

    def list_notes(self) -> list[dict]:
        with self.lock:
            rows = self.db.execute("SELECT * FROM notes ORDER BY seq").fetchall()
        return [self._note(r) for r in rows]

    def get_note(self, note_id: str) -> dict | None:
        with self.lock:
            return self._note(self.db.execute("SELECT * FROM notes WHERE note_id=?", (note_id,)).fetchone())

    def put_note(self, note_id: str, text: str, tags: list[str], base: int | str | None) -> tuple[str, dict | None]:
        """Create-or-replace, as put_article: created | replaced | precondition_required | conflict |
        precondition_failed."""
        with self._tx() as db:
            current = self._note(db.execute("SELECT * FROM notes WHERE note_id=?", (note_id,)).fetchone())
            stamp = now_rfc3339()
            encoded = json.dumps(tags, ensure_ascii=False)
            if current is None:
                if base == "*":
                    return "precondition_failed", None
                db.execute("INSERT INTO notes(note_id, text, tags, rev, modified_at) VALUES (?,?,?,?,?)",
                           (note_id, text, encoded, 1, stamp))
                return "created", {"note_id": note_id, "text": text, "tags": tags, "rev": 1, "modified_at": stamp}
            if base is None:
                return "precondition_required", current
            if base != "*" and base != current["rev"]:
                return "conflict", current
            rev = current["rev"] + 1
            db.execute("UPDATE notes SET text=?, tags=?, rev=?, modified_at=? WHERE note_id=?",
                       (text, encoded, rev, stamp, note_id))
            return "replaced", {"note_id": note_id, "text": text, "tags": tags, "rev": rev, "modified_at": stamp}

    def delete_note(self, note_id: str, base: int | str | None) -> tuple[str, dict | None]:
        """deleted | not_found | conflict, with the current note."""
        with self._tx() as db:
            current = self._note(db.execute("SELECT * FROM notes WHERE note_id=?", (note_id,)).fetchone())
            if current is None:
                return "not_found", None
            if base is not None and base != "*" and base != current["rev"]:
                return "conflict", current
            db.execute("DELETE FROM notes WHERE note_id=?", (note_id,))
            return "deleted", current

    # ------------------------------------------------------------------ documents
    @staticmethod
    def _document(row: sqlite3.Row | None) -> dict | None:
        if row is None:
            return None
        return {**json.loads(row["fields"]), "id": row["id"], "version": row["version"],
                "updated_at": row["updated_at"]}

    def list_documents(self) -> list[dict]:
        with self.lock:
            rows = self.db.execute("SELECT * FROM documents ORDER BY seq").fetchall()
        return [self._document(r) for r in rows]

    def get_document(self, document_id: str) -> dict | None:
        with self.lock:
            return self._document(
                self.db.execute("SELECT * FROM documents WHERE id=?", (document_id,)).fetchone())

    def put_document(self, document_id: str, fields: dict, base: int | str | None) -> tuple[str, dict | None]:
        """Create-or-replace, as put_article: created | replaced | precondition_required | conflict |
        precondition_failed. `fields` are stored as the client sent them (json: integers of any size)."""
        encoded = json.dumps(fields, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        with self._tx() as db:
            current = self._document(db.execute("SELECT * FROM documents WHERE id=?", (document_id,)).fetchone())
            stamp = now_rfc3339()
            if current is None:
                if base == "*":
                    return "precondition_failed", None
                db.execute("INSERT INTO documents(id, fields, version, updated_at) VALUES (?,?,?,?)",
                           (document_id, encoded, 1, stamp))
                return "created", {**fields, "id": document_id, "version": 1, "updated_at": stamp}
            if base is None:
                return "precondition_required", current
            if base != "*" and base != current["version"]:
                return "conflict", current
            version = current["version"] + 1
            db.execute("UPDATE documents SET fields=?, version=?, updated_at=? WHERE id=?",
                       (encoded, version, stamp, document_id))
            return "replaced", {**fields, "id": document_id, "version": version, "updated_at": stamp}

    def delete_document(self, document_id: str, base: int | str | None) -> tuple[str, dict | None]:
        """deleted | not_found | conflict, with the current document."""
        with self._tx() as db:
            current = self._document(db.execute("SELECT * FROM documents WHERE id=?", (document_id,)).fetchone())
            if current is None:
                return "not_found", None
            if base is not None and base != "*" and base != current["version"]:
                return "conflict", current
            db.execute("DELETE FROM documents WHERE id=?", (document_id,))
            return "deleted", current

    # ------------------------------------------------------------------ photos
    def add_photo(self, photo: dict) -> None:
        with self._tx() as db:
            db.execute("INSERT INTO photos(id, owner, title, filename, content_type, size, sha256, created_at)"
                       " VALUES (:id, :owner, :title, :filename, :content_type, :size, :sha256, :created_at)", photo)

    def put_photo(self, photo: dict) -> None:
        """Adds or replaces a photo's record (the /__photos hook)."""
        with self._tx() as db:
            db.execute("INSERT OR REPLACE INTO photos(id, owner, title, filename, content_type, size, sha256,"
                       " created_at) VALUES (:id, :owner, :title, :filename, :content_type, :size, :sha256,"
                       " :created_at)", photo)

    def get_photo(self, photo_id: str) -> dict | None:
        with self.lock:
            row = self.db.execute("SELECT * FROM photos WHERE id=?", (photo_id,)).fetchone()
        return dict(row) if row else None

    def list_photos(self, owner: str) -> list[dict]:
        with self.lock:
            rows = self.db.execute("SELECT * FROM photos WHERE owner=? ORDER BY created_at, id", (owner,)).fetchall()
        return [dict(r) for r in rows]

    def delete_photo(self, photo_id: str) -> None:
        """Forgets a photo and removes its file; articles naming it keep the id (a dangling reference)."""
        with self._tx() as db:
            db.execute("DELETE FROM photos WHERE id=?", (photo_id,))
        try:
            os.remove(self.photo_path(photo_id))
        except FileNotFoundError:
            pass

    def photo_path(self, photo_id: str) -> str:
        return os.path.join(self.photo_dir, photo_id)

    def new_upload_path(self) -> str:
        return os.path.join(self.photo_dir, f".upload-{uuid.uuid4().hex}")

    # ------------------------------------------------------------------ tus uploads
    def upload_path(self, upload_id: str) -> str:
        return os.path.join(self.upload_dir, upload_id)

    def create_upload(self, record: dict) -> None:
        with self._tx() as db:
            db.execute("INSERT INTO uploads(id, owner, length, upload_offset, metadata, title, filename, content_type,"
                       " photo_id, state, idempotency_key, created_at, expires_at) VALUES (:id, :owner, :length,"
                       " :upload_offset, :metadata, :title, :filename, :content_type, :photo_id, :state,"
                       " :idempotency_key, :created_at, :expires_at)", record)

    def get_upload(self, upload_id: str) -> dict | None:
        with self.lock:
            row = self.db.execute("SELECT * FROM uploads WHERE id=?", (upload_id,)).fetchone()
        return dict(row) if row else None

    def upload_for_key(self, owner: str, key: str) -> dict | None:
        with self.lock:
            row = self.db.execute("SELECT * FROM uploads WHERE owner=? AND idempotency_key=?"
                                  " ORDER BY created_at DESC LIMIT 1", (owner, key)).fetchone()
        return dict(row) if row else None

    def list_uploads(self) -> list[dict]:
        with self.lock:
            rows = self.db.execute("SELECT * FROM uploads ORDER BY created_at, id").fetchall()
        return [dict(r) for r in rows]

    def set_upload_offset(self, upload_id: str, offset: int, expires_at: float) -> None:
        """Called only after the file's bytes up to `offset` are fsynced."""
        with self._tx() as db:
            db.execute("UPDATE uploads SET upload_offset=?, expires_at=? WHERE id=? AND state='active'",
                       (offset, expires_at, upload_id))

    def set_upload_state(self, upload_id: str, state: str, only_from: str | None = "active") -> bool:
        with self._tx() as db:
            if only_from is None:
                cur = db.execute("UPDATE uploads SET state=? WHERE id=?", (state, upload_id))
            else:
                cur = db.execute("UPDATE uploads SET state=? WHERE id=? AND state=?", (state, upload_id, only_from))
            return cur.rowcount > 0

    def expire_uploads(self, upload_id: str | None) -> list[str]:
        """Test hook: makes active uploads (one, or all) expire now. Returns their ids."""
        with self._tx() as db:
            if upload_id is None:
                rows = db.execute("SELECT id FROM uploads WHERE state='active'").fetchall()
            else:
                rows = db.execute("SELECT id FROM uploads WHERE state='active' AND id=?", (upload_id,)).fetchall()
            ids = [r["id"] for r in rows]
            for i in ids:
                db.execute("UPDATE uploads SET expires_at=? WHERE id=?", (time.time() - 1, i))
            return ids

    def complete_upload(self, upload_id: str, photo: dict) -> None:
        """The upload's file is already at photo_path(photo id): record the photo, mark the upload done."""
        with self._tx() as db:
            db.execute("INSERT OR IGNORE INTO photos(id, owner, title, filename, content_type, size, sha256,"
                       " created_at) VALUES (:id, :owner, :title, :filename, :content_type, :size, :sha256,"
                       " :created_at)", photo)
            db.execute("UPDATE uploads SET state='completed' WHERE id=?", (upload_id,))

    def count_upload_bytes(self, upload_id: str, n: int) -> None:
        with self.lock:
            self.upload_bytes[upload_id] = self.upload_bytes.get(upload_id, 0) + n

    def claim_upload(self, upload_id: str) -> str:
        """The caller becomes the upload's only writer; an older writer stops at its next chunk."""
        token = uuid.uuid4().hex
        with self.lock:
            self.upload_writers[upload_id] = token
        return token

    def owns_upload(self, upload_id: str, token: str) -> bool:
        with self.lock:
            return self.upload_writers.get(upload_id) == token

    def release_upload(self, upload_id: str, token: str) -> None:
        with self.lock:
            if self.upload_writers.get(upload_id) == token:
                del self.upload_writers[upload_id]

    def take_tus_offset_lie(self, method: str) -> tuple[str, int] | None:
        """Consumes one armed Upload-Offset lie for a tus answer to `method`: (mode, delta)."""
        with self.lock:
            c = self.chaos
            if not c.tus_offset_mode or c.tus_offset_count <= 0:
                return None
            if c.tus_offset_method is not None and c.tus_offset_method != method:
                return None
            c.tus_offset_count -= 1
            return c.tus_offset_mode, c.tus_offset_delta

    # ------------------------------------------------------------------ idempotency
    def idem_begin(self, scope: str, key: str) -> IdemBegin:
        with self.lock:
            if (scope, key) in self.in_flight:
                return IdemBegin("in_flight")
            row = self.db.execute("SELECT * FROM idempotency WHERE scope=? AND key=?", (scope, key)).fetchone()
            if row is not None:
                return IdemBegin("done", record={
                    "fingerprint": row["fingerprint"], "status": row["status"],
                    "headers": json.loads(row["headers"]), "body": bytes(row["body"])})
            ticket = uuid.uuid4().hex
            self.in_flight[(scope, key)] = ticket
            return IdemBegin("new", ticket=ticket, generation=self.generation)

    def idem_finish(self, scope: str, key: str, begin: IdemBegin, record: dict | None) -> None:
        with self._tx() as db:
            if self.in_flight.get((scope, key)) == begin.ticket:
                del self.in_flight[(scope, key)]
            if record is not None and begin.generation == self.generation:
                db.execute("INSERT OR REPLACE INTO idempotency(scope, key, fingerprint, status, headers, body, created_at)"
                           " VALUES (?,?,?,?,?,?,?)",
                           (scope, key, record["fingerprint"], record["status"], json.dumps(record["headers"]),
                            record["body"], now_rfc3339()))

    # ------------------------------------------------------------------ chaos
    def set_chaos(self, chaos: Chaos) -> None:
        with self.lock:
            self.chaos = chaos

    def take_chaos(self, path: str, method: str = "GET") -> ChaosDecision:
        """Called once per non-hook request: consumes one failure if one is armed."""
        tus = path == "/uploads" or path.startswith("/uploads/")
        with self.lock:
            c = self.chaos
            matches = (c.path is None or path.startswith(c.path)) and (c.method is None or c.method == method)
            if c.fail_all and matches:
                return ChaosDecision(True, c.status, c.retry_after, c.format, c.delay_ms, c.after, tus)
            if c.fail_next > 0 and matches:
                c.fail_next -= 1
                return ChaosDecision(True, c.status, c.retry_after, c.format, c.delay_ms, c.after, tus)
            return ChaosDecision(False, delay_ms=c.delay_ms)

    # ------------------------------------------------------------------ log
    # ------------------------------------------------------------------ hold (holds.py)
    def set_hold(self, remaining: int, when: str, method: str | None = None) -> Hold:
        return self.holds.set(remaining, when, method)

    def release_hold(self) -> None:
        self.holds.release()

    def take_hold(self, method: str) -> Hold | None:
        """Called once per non-hook request: the hold it must wait on, if any."""
        return self.holds.take(method)

    def hold_json(self) -> dict:
        return self.holds.to_json()

    async def wait_hold(self, hold: Hold) -> None:
        await self.holds.wait(hold)

    def log_start(self, method: str, path: str, query: str, key: str | None) -> int:
        with self._tx() as db:
            cur = db.execute("INSERT INTO log(method, path, query, idempotency_key, status, at) VALUES (?,?,?,?,?,?)",
                             (method, path, query, key, None, now_rfc3339()))
            return int(cur.lastrowid)

    def log_status(self, seq: int, status: int) -> None:
        with self._tx() as db:
            db.execute("UPDATE log SET status=? WHERE seq=?", (status, seq))

    def log_entries(self) -> list[dict]:
        with self.lock:
            rows = self.db.execute("SELECT * FROM log ORDER BY seq").fetchall()
        return [{"method": r["method"], "path": r["path"], "query": r["query"],
                 "idempotency_key": r["idempotency_key"], "status": r["status"], "at": r["at"]} for r in rows]


class _Transaction:
    """`with store._tx() as db:` holds the lock and wraps the statements in one transaction."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def __enter__(self) -> sqlite3.Connection:
        self.store.lock.acquire()
        try:
            self.store.db.execute("BEGIN IMMEDIATE")
        except BaseException:
            self.store.lock.release()
            raise
        return self.store.db

    def __exit__(self, exc_type, exc, tb) -> None:
        try:
            self.store.db.execute("ROLLBACK" if exc_type else "COMMIT")
        finally:
            self.store.lock.release()


def bearer_token(header: str | None) -> str | None:
    if not header:
        return None
    scheme, _, token = header.strip().partition(" ")
    if scheme.lower() != "bearer":
        return None
    token = token.strip()
    return token or None
