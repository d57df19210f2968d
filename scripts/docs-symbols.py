#!/usr/bin/env python3
"""Joins the symbol graphs of one or more modules into one module (for `Courier`, the three it
re-exports), and checks that every public symbol has a summary. Used by scripts/docs.

usage: docs-symbols.py RAW_DIR OUT_DIR MODULE
  RAW_DIR holds one folder per module with swift-symbolgraph-extract's output; OUT_DIR gets
  MODULE.symbols.json (every module's own symbols and its extensions of the others) and
  MODULE@Other.symbols.json (extensions of modules outside the set, such as Swift).
Exits 1, listing them, when a public symbol has no summary (no doc comment, or an empty first
line) or one that only repeats its name ("The body." on `body`, "A record." on `record(_:)`);
an initialiser's "Creates a client." passes, its parameters say the rest.
"""
import json
import pathlib
import re
import sys

FILLER = {"a", "an", "the", "creates", "create", "it", "its", "itself", "this", "of", "to",
          "one", "new", "value", "given"}


def words(text):
    """Lower-case words of a name or a sentence, camelCase and snake_case split, plurals folded."""
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text)
    found = re.findall(r"[A-Za-z][A-Za-z0-9]*", text)
    return {w.lower().rstrip("s") or w.lower() for w in found}


def says_nothing(summary, symbol):
    """Whether the summary's words, filler aside, are all in the symbol's (or its type's) name."""
    said = words(summary) - {w.rstrip("s") for w in FILLER}
    name = symbol["pathComponents"][-1].split("(")[0]
    if name == "init":
        return False  # "Creates a client." is the convention; the parameters say the rest.
    return not said or said <= words(name)

raw, out, name = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), sys.argv[3]
graphs = {p: json.loads(p.read_text()) for p in sorted(raw.glob("*/*.symbols.json"))}
own = {p.name.split(".")[0].split("@")[0] for p in graphs}

joined = {}  # extended module ("" for the main graph) -> graph
for path, graph in graphs.items():
    stem = path.name[: -len(".symbols.json")]
    extended = stem.split("@", 1)[1] if "@" in stem else ""
    key = "" if extended in own else extended
    target = joined.setdefault(key, {
        "metadata": graph["metadata"],
        "module": dict(graph["module"], name=name),
        "symbols": [],
        "relationships": [],
    })
    target["symbols"] += graph["symbols"]
    target["relationships"] += graph["relationships"]

out.mkdir(parents=True, exist_ok=True)
for extended, graph in joined.items():
    file = f"{name}@{extended}.symbols.json" if extended else f"{name}.symbols.json"
    (out / file).write_text(json.dumps(graph))

missing = []
for graph in joined.values():
    for symbol in graph["symbols"]:
        if symbol.get("accessLevel") not in ("public", "open"):
            continue
        if "::SYNTHESIZED::" in symbol["identifier"]["precise"]:
            continue
        lines = [l.get("text", "") for l in (symbol.get("docComment") or {}).get("lines", [])]
        summary = lines[0].strip() if lines else ""
        if not summary or says_nothing(summary, symbol):
            location = symbol.get("location", {})
            where = location.get("uri", "?").split("/Modules/", 1)[-1]
            line = location.get("position", {}).get("line", -1) + 1
            missing.append((where, line, ".".join(symbol["pathComponents"]), summary))

count = sum(len(g["symbols"]) for g in joined.values())
print(f"{count} symbols from {', '.join(sorted(own))} joined into {name}")
if missing:
    for where, line, path, summary in sorted(missing):
        said = f"only repeats its name: {summary!r}" if summary else "no summary"
        print(f"Modules/{where}:{line}: {path}: {said}")
    print(f"{len(missing)} public symbols lack a summary that says something", file=sys.stderr)
    sys.exit(1)
