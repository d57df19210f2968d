"""Turns python-multipart's test expectations (tests/test_data/http/*.yaml in its sdist) into
one JSON file the Swift tests read. Run once when refreshing the vectors:

    pip download python-multipart==0.0.34 --no-binary :all: --no-deps
    python convert_yaml.py SDIST_DIR/tests/test_data/http > python-multipart/expected.json

Needs PyYAML. Binary data is kept as base64.
"""

import base64
import json
import pathlib
import sys

import yaml

out = {}
for path in sorted(pathlib.Path(sys.argv[1]).glob("*.yaml")):
    spec = yaml.safe_load(path.read_text())
    expected = spec["expected"]
    entry = {"boundary": spec["boundary"]}
    if isinstance(expected, dict):
        entry["error"] = expected["error"]
    else:
        entry["parts"] = [
            {
                "name": part["name"],
                "type": part["type"],
                "file_name": part.get("file_name"),
                "content_type": part.get("content_type"),
                "data": base64.b64encode(part["data"]).decode(),
            }
            for part in expected
        ]
    out[path.stem] = entry
json.dump(out, sys.stdout, indent=1, sort_keys=True)
print()
