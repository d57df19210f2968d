"""A discard sink for upload benchmarks: `python -m courier_backend.sink --port P`.

Accepts any request (any method, any path), reads the body (Content-Length or chunked) into a
reused buffer and throws it away, then answers 200 `{"received": N}` with N the body bytes.
Keep-alive and `Expect: 100-continue` are supported. Standard library only (asyncio
BufferedProtocol): no copy of the body is ever kept, so memory stays flat whatever the size.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys

from . import lifeline

BUFFER_SIZE = 1024 * 1024
MAX_HEADER = 64 * 1024


class SinkProtocol(asyncio.BufferedProtocol):
    def __init__(self) -> None:
        self.buffer = bytearray(BUFFER_SIZE)
        self.view = memoryview(self.buffer)
        self.transport: asyncio.Transport | None = None
        self._reset()

    def _reset(self) -> None:
        self.state = "head"  # head | length | chunk_size | chunk_data | chunk_crlf | trailers
        self.head = bytearray()
        self.remaining = 0
        self.received = 0
        self.line = bytearray()
        self.keep_alive = True

    # asyncio plumbing -----------------------------------------------------------------
    def connection_made(self, transport) -> None:  # type: ignore[override]
        self.transport = transport

    def get_buffer(self, sizehint: int) -> memoryview:
        return self.view

    def buffer_updated(self, nbytes: int) -> None:
        try:
            self._feed(self.view[:nbytes])
        except _BadRequest as exc:
            self._respond(400, {"error": str(exc)}, close=True)

    def eof_received(self):
        return False

    # HTTP --------------------------------------------------------------------------------
    def _feed(self, data: memoryview) -> None:
        pos, end = 0, len(data)
        while pos < end and self.transport is not None and not self.transport.is_closing():
            if self.state == "head":
                self.head.extend(data[pos:end])
                idx = self.head.find(b"\r\n\r\n")
                if idx < 0:
                    if len(self.head) > MAX_HEADER:
                        raise _BadRequest("header too large")
                    return
                rest = len(self.head) - (idx + 4)
                pos = end - rest
                self._start(bytes(self.head[:idx]))
                self.head = bytearray()
            elif self.state == "length":
                take = min(self.remaining, end - pos)
                pos += take
                self.remaining -= take
                self.received += take
                if self.remaining == 0:
                    self._finish()
            elif self.state == "chunk_data":
                take = min(self.remaining, end - pos)
                pos += take
                self.remaining -= take
                self.received += take
                if self.remaining == 0:
                    self.state = "chunk_crlf"
                    self.line = bytearray()
            else:  # line-oriented states: chunk_size, chunk_crlf, trailers
                window = bytes(data[pos:min(end, pos + 4096)])
                nl = window.find(b"\n")
                if nl < 0:
                    self.line.extend(window)
                    pos += len(window)
                    if len(self.line) > 4096:
                        raise _BadRequest("line too long")
                    continue
                self.line.extend(data[pos:pos + nl])
                pos += nl + 1
                line = bytes(self.line).rstrip(b"\r")
                self.line = bytearray()
                self._line(line)

    def _line(self, line: bytes) -> None:
        if self.state == "chunk_size":
            size_text = line.split(b";", 1)[0].strip()
            try:
                size = int(size_text, 16)
            except ValueError:
                raise _BadRequest("bad chunk size") from None
            if size == 0:
                self.state = "trailers"
            else:
                self.remaining = size
                self.state = "chunk_data"
        elif self.state == "chunk_crlf":
            if line:
                raise _BadRequest("missing CRLF after chunk")
            self.state = "chunk_size"
        elif self.state == "trailers":
            if not line:
                self._finish()

    def _start(self, head: bytes) -> None:
        lines = head.decode("latin-1").split("\r\n")
        request_line = lines[0].split(" ")
        if len(request_line) != 3:
            raise _BadRequest("bad request line")
        version = request_line[2]
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if not sep:
                raise _BadRequest("bad header line")
            headers[name.strip().lower()] = value.strip()
        connection = headers.get("connection", "").lower()
        self.keep_alive = (version == "HTTP/1.1" and connection != "close") or connection == "keep-alive"
        self.received = 0
        if headers.get("expect", "").lower() == "100-continue" and self.transport is not None:
            self.transport.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        if "chunked" in headers.get("transfer-encoding", "").lower():
            self.state = "chunk_size"
            self.line = bytearray()
        elif "content-length" in headers:
            try:
                self.remaining = int(headers["content-length"])
            except ValueError:
                raise _BadRequest("bad Content-Length") from None
            self.state = "length"
            if self.remaining == 0:
                self._finish()
        else:
            self._finish()

    def _finish(self) -> None:
        received = self.received
        keep = self.keep_alive
        self._reset()
        self._respond(200, {"received": received}, close=not keep)

    def _respond(self, status: int, payload: dict, close: bool) -> None:
        if self.transport is None or self.transport.is_closing():
            return
        body = json.dumps(payload).encode()
        reason = "OK" if status == 200 else "Bad Request"
        head = (f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\n{'Connection: close' if close else 'Connection: keep-alive'}\r\n\r\n")
        self.transport.write(head.encode() + body)
        if close:
            self.transport.close()


class _BadRequest(Exception):
    pass


async def serve(host: str, port: int) -> None:
    loop = asyncio.get_running_loop()
    server = await loop.create_server(SinkProtocol, host, port, reuse_address=True)
    addrs = ", ".join(str(s.getsockname()) for s in server.sockets)
    print(f"courier sink listening on {addrs}", file=sys.stderr, flush=True)
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, stop.set)
        except (NotImplementedError, RuntimeError):
            pass
    async with server:
        await stop.wait()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m courier_backend.sink", description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8090)
    args = parser.parse_args(argv)
    lifeline.install()
    asyncio.run(serve(args.host, args.port))


if __name__ == "__main__":
    main()
