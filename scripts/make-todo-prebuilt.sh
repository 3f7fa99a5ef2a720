#!/usr/bin/env bash
# Rebuilds the Todo app's pre-built database (examples/todo/app/Resources/todo.couchette, the tutorial's Groceries
# list) from examples/todo/app/prebuilt/groceries.jsonl with the couchette tool.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build --product couchette
target=examples/todo/app/Resources/todo.couchette
rm -rf "$target"
"$(swift build --show-bin-path)/couchette" cp -w examples/todo/app/prebuilt/groceries.jsonl "$target"
"$(swift build --show-bin-path)/couchette" compact -w "$target"
ls -la "$target"
