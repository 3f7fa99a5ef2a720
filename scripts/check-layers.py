#!/usr/bin/env python3
"""Checks the gateway's layering: HTTP handlers reach a database only through `AuthorizedDatabase` (the per-caller
facade) and `GatewayDatabase`'s administrative operations, never its storage or document store.

Run by `make test` before the build; prints each offending line and fails.
"""
import pathlib
import re
import sys

root = pathlib.Path(__file__).resolve().parent.parent / "Sources" / "CouchetteGateway" / "HTTP"
forbidden = [
    (re.compile(r"\.storage\b"), "reaches the storage (go through AuthorizedDatabase)"),
    (re.compile(r"\.documents\b"), "calls the document store (go through AuthorizedDatabase)"),
    (re.compile(r"\bLocalDocumentStore\("), "opens a document store (go through AuthorizedDatabase)"),
]
problems = []
for path in sorted(root.rglob("*.swift")):
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        code = line.split("//", 1)[0]
        for pattern, problem in forbidden:
            if pattern.search(code):
                problems.append(f"{path}:{number}: {problem}: {line.strip()}")
if problems:
    print("\n".join(problems))
    sys.exit(1)
