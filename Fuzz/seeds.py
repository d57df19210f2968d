#!/usr/bin/env python3
"""Writes the seed corpora that are not plain text files into Fuzz/Corpus/ (run once; the
output is committed). Netlink seeds are real kernel replies to link, address and route dumps on
the machine that ran this, plus the shapes the parser tests build (multipath, deletes, errors).
"""
import os
import socket
import struct

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "Corpus")


def write(target, name, data):
    os.makedirs(os.path.join(ROOT, target), exist_ok=True)
    with open(os.path.join(ROOT, target, name), "wb") as handle:
        handle.write(data)


def pad(data):
    return data + b"\0" * (-len(data) % 4)


def attribute(kind, value):
    return pad(struct.pack("=HH", 4 + len(value), kind) + value)


def message(kind, body, flags=0):
    return pad(struct.pack("=IHHII", 16 + len(body), kind, flags, 1, 0) + body)


def netlink():
    NETLINK_ROUTE, NLM_F_REQUEST, NLM_F_DUMP = 0, 1, 0x300
    for name, kind, body in [
        ("dump-links", 18, b"\0" * 16),
        ("dump-addresses", 22, b"\0" * 8),
        ("dump-routes", 26, b"\0" * 12),
    ]:
        sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_ROUTE)
        sock.bind((0, 0))
        sock.send(message(kind, body, NLM_F_REQUEST | NLM_F_DUMP))
        for index in range(4):
            data = sock.recv(65536)
            write("netlink", f"{name}-{index}", data)
            if struct.unpack_from("=H", data, 4)[0] in (2, 3):  # error, done
                break
        sock.close()
    link = struct.pack("=BBHiII", 0, 0, 1, 7, 0x10043, 0xFFFFFFFF)
    link += attribute(3, b"wg0\0") + attribute(18, attribute(1, b"wireguard\0"))
    write("netlink", "link-with-kind", message(16, link) + message(17, link))
    address = struct.pack("=BBBBi", 10, 64, 0, 0, 7)
    address += attribute(1, bytes(range(16))) + attribute(8, struct.pack("=I", 0x40))
    write("netlink", "address-v6-tentative", message(20, address) + message(21, address))
    route = struct.pack("=BBBBBBBBI", 2, 0, 0, 0, 254, 3, 0, 1, 0)
    route += attribute(15, struct.pack("=I", 254)) + attribute(6, struct.pack("=I", 100))
    hops = struct.pack("=HBBi", 8, 0, 0, 2) + struct.pack("=HBBi", 8, 0x10, 0, 3)
    write("netlink", "route-multipath", message(24, route + attribute(9, hops)))
    write("netlink", "error-and-done", message(2, struct.pack("=i", -1) + b"\0" * 16) + message(3, b"\0\0\0\0"))


def multipart():
    crlf = b"\r\n"
    form = (
        b"--XyZ" + crlf + b'Content-Disposition: form-data; name="title"' + crlf + crlf
        + b"Hello" + crlf + b"--XyZ" + crlf
        + b'Content-Disposition: form-data; name="file"; filename="a \\"b\\".jpg"' + crlf
        + b"Content-Type: image/jpeg" + crlf + crlf + b"\xff\xd8\xff\xe0--XyZQ" + crlf
        + b"--XyZ--" + crlf
    )
    write("multipart", "form", b"XyZ\0" + form)
    write("multipart", "preamble-padding-epilogue",
          b"b\0" + crlf + crlf + b"--b \t" + crlf + b"A: 1" + crlf + crlf + b"x" + crlf
          + b"--b--epilogue")
    write("multipart", "transfer-encoding",
          b"b\0--b" + crlf + b"Content-Transfer-Encoding: base64" + crlf + crlf + b"eA==" + crlf
          + b"--b--")
    write("multipart", "empty", b"boundary\0--boundary--")


netlink()
multipart()
