#!/usr/bin/env python3
"""A captive portal for tests (issue 26): answers EVERY request, whatever its method and path,
with 302 to a login page, as a hotel's Wi-Fi does before anyone signs in. It reads the request's
body (by Content-Length) first so a client sending one sees the answer, not a reset.

    portal-server.py PORT
"""
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Portal(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def answer(self):
        length = int(self.headers.get("Content-Length") or 0)
        while length > 0:
            chunk = self.rfile.read(min(length, 65536))
            if not chunk:
                break
            length -= len(chunk)
        body = b"<html><body>Sign in to the hotel Wi-Fi</body></html>"
        self.send_response(302)
        self.send_header("Location", "http://login.portal.invalid/login")
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = answer

    def log_message(self, *args):
        pass


ThreadingHTTPServer(("0.0.0.0", int(sys.argv[1])), Portal).serve_forever()
