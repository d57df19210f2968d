"""A tus 1.0.0 discard sink for upload benchmarks: `python -m courier_backend.tus_sink --port P`.

The tus peer of `courier_backend.sink`: core and creation at any path (`OPTIONS`, `POST` for a
new upload, `HEAD` for its offset, `PATCH` to append), bodies read into a reused buffer and
thrown away, so a benchmark of the tus client measures the client and the link, not a server's
disk (the reference backend's `/uploads` fsyncs and hashes every chunk). No checksum extension:
the client sends no `Upload-Checksum`. Uploads live in memory as (length, offset) only.
Standard library only.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import signal
import sys

from . import lifeline
from .sink import SinkProtocol

UPLOADS: dict[str, list[int]] = {}  # id -> [length, offset]
_IDS = itertools.count(1)


class TusSinkProtocol(SinkProtocol):
    def _start(self, head: bytes) -> None:
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        self.method = parts[0] if parts else ""
        self.path = parts[1] if len(parts) > 1 else "/"
        self.headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            self.headers[name.strip().lower()] = value.strip()
        super()._start(head)

    def _finish(self) -> None:
        received = self.received
        keep = self.keep_alive
        method, path, headers = self.method, self.path, self.headers
        self._reset()
        base = {"Tus-Resumable": "1.0.0"}
        if method == "OPTIONS":
            base.update({"Tus-Version": "1.0.0", "Tus-Extension": "creation"})
            self._answer(204, base, keep)
            return
        upload_id = path.rstrip("/").rsplit("/", 1)[-1]
        if method == "POST":
            upload_id = str(next(_IDS))
            UPLOADS[upload_id] = [int(headers.get("upload-length", "0") or 0), 0]
            host = headers.get("host", "127.0.0.1")
            base.update({"Location": f"http://{host}/files/{upload_id}", "Upload-Offset": "0"})
            self._answer(201, base, keep)
            return
        upload = UPLOADS.get(upload_id)
        if upload is None:
            self._answer(404, base, keep)
            return
        if method == "PATCH":
            if int(headers.get("upload-offset", "-1") or -1) != upload[1]:
                base["Upload-Offset"] = str(upload[1])
                self._answer(409, base, keep)
                return
            upload[1] = min(upload[0], upload[1] + received)
        base["Upload-Offset"] = str(upload[1])
        base["Upload-Length"] = str(upload[0])
        self._answer(204 if method == "PATCH" else 200, base, keep)

    def _answer(self, status: int, headers: dict[str, str], keep: bool) -> None:
        if self.transport is None or self.transport.is_closing():
            return
        reasons = {200: "OK", 201: "Created", 204: "No Content", 404: "Not Found", 409: "Conflict"}
        lines = [f"HTTP/1.1 {status} {reasons.get(status, 'OK')}"]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        lines.append("Content-Length: 0")
        lines.append("Connection: keep-alive" if keep else "Connection: close")
        self.transport.write(("\r\n".join(lines) + "\r\n\r\n").encode())
        if not keep:
            self.transport.close()


async def serve(host: str, port: int) -> None:
    loop = asyncio.get_running_loop()
    server = await loop.create_server(TusSinkProtocol, host, port, reuse_address=True)
    print(f"courier tus sink listening on {host}:{port}", file=sys.stderr, flush=True)
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, stop.set)
        except (NotImplementedError, RuntimeError):
            pass
    async with server:
        await stop.wait()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m courier_backend.tus_sink", description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8091)
    args = parser.parse_args(argv)
    lifeline.install()
    asyncio.run(serve(args.host, args.port))


if __name__ == "__main__":
    main()
