#!/usr/bin/env python3
"""Checks that no test can hang the suite: every Swift Testing suite carries a time limit.

Run by `make test` before the build. A suite without `.timeLimit(...)` among its traits, or a file of tests with
no `@Suite` at all (its tests would have no limit), fails the check with the places to fix.
"""
import pathlib
import re
import sys

root = pathlib.Path(__file__).resolve().parent.parent / "Tests"
problems = []
for path in sorted(root.rglob("*.swift")):
    text = path.read_text(encoding="utf-8")
    if "@Test" in text and "@Suite" not in text:
        problems.append(f"{path}: tests outside any @Suite (give their type a @Suite with a .timeLimit)")
    for match in re.finditer(r"@Suite\b", text):
        line = text.count("\n", 0, match.start()) + 1
        rest = text[match.end():]
        if not rest.startswith("("):
            problems.append(f"{path}:{line}: @Suite without traits (add .timeLimit(.minutes(N)))")
            continue
        depth, end = 0, 0
        for index, character in enumerate(rest):
            depth += {"(": 1, ")": -1}.get(character, 0)
            if depth == 0:
                end = index
                break
        if ".timeLimit(" not in rest[:end]:
            problems.append(f"{path}:{line}: @Suite without .timeLimit(.minutes(N))")

if problems:
    print("Every test suite needs a time limit, so that a hang fails instead of stalling CI:", file=sys.stderr)
    print("\n".join(problems), file=sys.stderr)
    sys.exit(1)
