#!/usr/bin/env python3
"""A TCP proxy on loopback for the resumable upload tests: forwards every connection to
--upstream, and cuts the first connection that sends more than --cut-after bytes towards the
server (request heads included) exactly there: the bytes up to the cut reach the server, its
side is shut for writing, the proxy waits until the server has closed the connection (so it
has seen the end and stored what arrived) and only then closes the client's side. A condition,
not a timer, decides when the client learns of the cut. With --stall, the connection is not
cut but stalled there: nothing more is forwarded until the client goes away (a test kills it),
then the server's side is shut. Prints its port on the first line.
--count FILE: the bytes forwarded towards the server, written after each change."""

import argparse
import os
import socket
import struct
import sys
import threading

lock = threading.Lock()
state = {"cut": False, "forwarded": 0}


def write_count(path):
    if path:
        tmp = path + ".tmp"
        with open(tmp, "w") as out:
            out.write(str(state["forwarded"]))
        os.replace(tmp, path)


def pipe_down(server, client, cut):
    try:
        while True:
            data = server.recv(65536)
            if not data:
                break
            if not cut.is_set():
                client.sendall(data)
    except OSError:
        pass
    if not cut.is_set():
        try:
            client.shutdown(socket.SHUT_WR)
        except OSError:
            pass


def handle(client, args):
    server = socket.create_connection(("127.0.0.1", args.upstream))
    cut = threading.Event()
    down = threading.Thread(target=pipe_down, args=(server, client, cut), daemon=True)
    down.start()
    sent = 0
    cutting = False
    try:
        while True:
            data = client.recv(65536)
            if not data:
                break
            with lock:
                armed = not state["cut"] and args.cut_after >= 0
                if armed and sent + len(data) > args.cut_after:
                    data = data[: args.cut_after - sent]
                    state["cut"] = True
                    cutting = True
                    cut.set()
                state["forwarded"] += len(data)
                write_count(args.count)
            if data:
                server.sendall(data)
            sent += len(data)
            if cutting:
                break
    except OSError:
        pass
    if cutting and args.stall:
        try:
            while client.recv(65536):
                pass
        except OSError:
            pass
    if cutting:
        # The server sees the end of what came, stores it and closes; the answer it may send
        # meanwhile is dropped. Then the client's connection is reset.
        try:
            server.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        down.join()
        server.close()
        client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        client.close()
        return
    try:
        server.shutdown(socket.SHUT_WR)
    except OSError:
        pass
    down.join()
    server.close()
    client.close()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--upstream", type=int, required=True)
    parser.add_argument("--cut-after", type=int, default=-1)
    parser.add_argument("--stall", action="store_true")
    parser.add_argument("--count")
    args = parser.parse_args()
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    print(listener.getsockname()[1], flush=True)
    # Ends with the test process: its standard input closes.
    threading.Thread(target=lambda: (sys.stdin.read(), os._exit(0)), daemon=True).start()
    while True:
        client, _ = listener.accept()
        threading.Thread(target=handle, args=(client, args), daemon=True).start()


if __name__ == "__main__":
    main()
