#!/usr/bin/env python3
"""Checks the layering: the gateway's HTTP handlers reach a database only through `AuthorizedDatabase` (the
per-caller facade) and `GatewayDatabase`'s administrative operations, never its storage or document store; in the
Lite library only `Storage/` touches the SQLite connection, and it depends on no configuration, key or query type.

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
lite = pathlib.Path(__file__).resolve().parent.parent / "Sources" / "Couchette"
storage = lite / "Storage"
outside_storage = [
    (re.compile(r"\.connection\b"), "uses the SQLite connection (only Storage/ does: add a DatabaseStorage method)"),
]
inside_storage = [
    (re.compile(r"\b(DatabaseConfiguration|EncryptionKey(?!\?|\))|ViewQuery|QueryRow|QueryExpression|MapReduceView)\b"),
     "depends on a type of a layer above the storage"),
]
checks = [(root, lambda path: True, forbidden),
          (lite, lambda path: storage not in path.parents, outside_storage),
          (storage, lambda path: True, inside_storage)]
problems = []
for folder, applies, patterns in checks:
    for path in sorted(folder.rglob("*.swift")):
        if not applies(path):
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            code = line.split("//", 1)[0]
            code = re.sub(r"Connection\.EncryptionKey", "", code)
            for pattern, problem in patterns:
                if pattern.search(code):
                    problems.append(f"{path}:{number}: {problem}: {line.strip()}")
if problems:
    print("\n".join(problems))
    sys.exit(1)
