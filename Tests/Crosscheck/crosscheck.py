"""Parses multipart/form-data bodies with python-multipart, werkzeug and Go's mime/multipart.

Usage: crosscheck.py MANIFEST_JSON GOPARSE_BINARY

The manifest is {"bodies": [{"id": str, "content_type": str, "path": str}, ...]}.
Prints one JSON object: {id: {parser: [part, ...] | {"error": str}}} where a part is
{"name", "filename", "content_type", "size", "sha256"} (filename and content_type null when
absent). Exits 1, naming the bodies, when the three parsers do not agree on every body.
"""

import hashlib
import json
import subprocess
import sys

from python_multipart.multipart import MultipartParser
from python_multipart.multipart import parse_options_header as pm_options
from werkzeug.http import parse_options_header as wz_options
from werkzeug.sansio.multipart import Data, Epilogue, Field, File, MultipartDecoder, NeedData

CHUNK = 64 * 1024


def canonical(name, filename, content_type, digest, size):
    return {
        "name": name,
        "filename": filename,
        "content_type": content_type,
        "size": size,
        "sha256": digest.hexdigest(),
    }


def python_multipart(content_type, path):
    """As Starlette does: the low-level parser, Content-Disposition read by parse_options_header."""
    _, params = pm_options(content_type)
    parts, state = [], {}

    def on_part_begin():
        state.update(headers={}, field=b"", value=b"", digest=hashlib.sha256(), size=0)

    def on_header_field(data, start, end):
        state["field"] += data[start:end]

    def on_header_value(data, start, end):
        state["value"] += data[start:end]

    def on_header_end():
        state["headers"][state["field"].lower()] = state["value"]
        state["field"], state["value"] = b"", b""

    def on_part_data(data, start, end):
        state["digest"].update(data[start:end])
        state["size"] += end - start

    def on_part_end():
        headers = state["headers"]
        _, options = pm_options(headers.get(b"content-disposition", b""))
        name = options.get(b"name", b"").decode("utf-8", "surrogateescape")
        filename = options.get(b"filename")
        ctype = headers.get(b"content-type")
        parts.append(
            canonical(
                name,
                None if filename is None else filename.decode("utf-8", "surrogateescape"),
                None if ctype is None else ctype.decode("latin-1"),
                state["digest"],
                state["size"],
            )
        )

    ended = []
    parser = MultipartParser(
        params[b"boundary"],
        callbacks={
            "on_part_begin": on_part_begin,
            "on_header_field": on_header_field,
            "on_header_value": on_header_value,
            "on_header_end": on_header_end,
            "on_part_data": on_part_data,
            "on_part_end": on_part_end,
            "on_end": lambda: ended.append(True),
        },
    )
    with open(path, "rb") as body:
        while chunk := body.read(CHUNK):
            parser.write(chunk)
    parser.finalize()
    if not ended:
        raise ValueError("no close delimiter")
    return parts


def werkzeug(content_type, path):
    """As Flask does: werkzeug's sans-io decoder, events in order."""
    _, params = wz_options(content_type)
    decoder = MultipartDecoder(params["boundary"].encode("latin-1"), max_form_memory_size=None)
    parts, current = [], None

    def drain():
        nonlocal current
        while True:
            event = decoder.next_event()
            if isinstance(event, NeedData):
                return False
            if isinstance(event, Epilogue):
                return True
            if isinstance(event, (Field, File)):
                current = {
                    "name": event.name,
                    "filename": event.filename if isinstance(event, File) else None,
                    "content_type": event.headers.get("content-type"),
                    "digest": hashlib.sha256(),
                    "size": 0,
                }
            elif isinstance(event, Data):
                current["digest"].update(event.data)
                current["size"] += len(event.data)
                if not event.more_data:
                    parts.append(
                        canonical(
                            current["name"],
                            current["filename"],
                            current["content_type"],
                            current["digest"],
                            current["size"],
                        )
                    )

    done = False
    with open(path, "rb") as body:
        while chunk := body.read(CHUNK):
            decoder.receive_data(chunk)
            done = drain() or done
    decoder.receive_data(None)
    done = drain() or done
    if not done:
        raise ValueError("no epilogue: body incomplete")
    return parts


def comparable(outcome):
    """The one known difference: werkzeug turns the browsers' `%22` back into `"` in names and
    filenames (werkzeug/http.py, parse_options_header); the others keep `%22`."""
    if isinstance(outcome, dict):
        return outcome
    undo = lambda text: None if text is None else text.replace("%22", '"')
    return [dict(part, name=undo(part["name"]), filename=undo(part["filename"])) for part in outcome]


def main():
    manifest_path, goparse = sys.argv[1], sys.argv[2]
    with open(manifest_path, encoding="utf-8") as handle:
        bodies = json.load(handle)["bodies"]
    results = {}
    for body in bodies:
        entry = {}
        for label, parser in (("python-multipart", python_multipart), ("werkzeug", werkzeug)):
            try:
                entry[label] = parser(body["content_type"], body["path"])
            except Exception as error:  # a parser's refusal is a result to compare
                entry[label] = {"error": f"{type(error).__name__}: {error}"}
        results[body["id"]] = entry
    args = [goparse]
    for body in bodies:
        args += [body["content_type"], body["path"]]
    lines = subprocess.run(args, check=True, capture_output=True).stdout.decode().splitlines()
    for body, line in zip(bodies, lines, strict=True):
        results[body["id"]]["go"] = json.loads(line)
    json.dump(results, sys.stdout, ensure_ascii=False, sort_keys=True, indent=1)
    print()
    disagree = [
        key
        for key, entry in results.items()
        if len({json.dumps(comparable(v), sort_keys=True) for v in entry.values()}) != 1
    ]
    if disagree:
        print(f"crosscheck: parsers disagree on: {', '.join(disagree)}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
