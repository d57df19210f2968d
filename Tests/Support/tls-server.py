"""A small HTTPS server for the TLS tests (Tests/Support/TLSTestServer.swift starts it).

Answers every request 200 with JSON naming the method, the path and the client certificate's
common name (null without one), over keep-alive HTTP/1.1. It counts the TCP connections it
accepts, before any handshake, in the file given with --count: what lets a test say a refused
server was tried exactly once. With --client-ca it requires a client certificate signed by that
CA, refusing any other with a TLS alert.

    python3 tls-server.py --cert server.pem --key server-key.pem [--client-ca ca.pem] --count FILE

Prints its port on the first line of standard output once it listens on 127.0.0.1.
"""

import argparse
import http.server
import json
import os
import socket
import ssl
import sys
import threading


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cert", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--client-ca")
    parser.add_argument("--count", required=True)
    args = parser.parse_args()

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(args.cert, args.key)
    if args.client_ca:
        context.load_verify_locations(args.client_ca)
        context.verify_mode = ssl.CERT_REQUIRED
    lock = threading.Lock()
    accepted = [0]

    def count():
        with lock:
            accepted[0] += 1
            temporary = args.count + ".tmp"
            with open(temporary, "w") as f:
                f.write(str(accepted[0]))
            os.replace(temporary, args.count)

    def linger(tls):
        """Closes a refused connection gracefully, as a careful server does: the alert is
        sent, the writing side shut, and what the client already sent (under TLS 1.3 its
        request follows its handshake at once) read and dropped until it closes, so that no
        reset overtakes the alert (a reset makes the client's send fail before it reads it)."""
        try:
            tls.shutdown(socket.SHUT_WR)
            tls.settimeout(5)
            while tls.recv(4096):
                pass
        except OSError:
            pass
        finally:
            tls.close()

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def answer(self):
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            peer = self.connection.getpeercert() or {}
            subject = dict(pair[0] for pair in peer.get("subject", ()))
            body = json.dumps({
                "method": self.command, "path": self.path,
                "client": subject.get("commonName"),
                "authorization": self.headers.get("Authorization"),
            }).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = answer

        def log_message(self, *arguments):
            pass

    class Server(http.server.ThreadingHTTPServer):
        daemon_threads = True

        def get_request(self):
            connection, address = self.socket.accept()
            count()
            return connection, address

        def finish_request(self, request, client_address):
            # The handshake in the connection's own thread: a refused one ends it alone.
            tls = context.wrap_socket(request, server_side=True, do_handshake_on_connect=False)
            try:
                tls.do_handshake()
            except (ssl.SSLError, OSError):
                linger(tls)
                return
            try:
                self.RequestHandlerClass(tls, client_address, self)
            except (ssl.SSLError, OSError):
                pass
            finally:
                try:
                    tls.close()
                except OSError:
                    pass

        def handle_error(self, request, client_address):
            pass

    with open(args.count, "w") as f:
        f.write("0")
    server = Server(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(0)
