#!/usr/bin/env bash
# Regenerates the todo-bot's HTTP client (examples/todo/bot/Sources/Generated) from the gateway's admin OpenAPI
# description with swift-openapi-generator, built in a scratch package so the project does not depend on it.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
scratch="${TMPDIR:-/tmp}/couchette-openapi-generator"
mkdir -p "$scratch/Empty"
cat > "$scratch/Package.swift" <<'SWIFT'
// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "oapigen",
    dependencies: [.package(url: "https://github.com/apple/swift-openapi-generator.git", exact: "1.14.3")],
    targets: [.target(name: "Empty", path: "Empty")]
)
SWIFT
touch "$scratch/Empty/empty.swift"
(cd "$scratch" && swift build --product swift-openapi-generator)
"$scratch/.build/debug/swift-openapi-generator" generate \
    --config "$root/examples/todo/bot/openapi-generator-config.yaml" \
    --output-directory "$root/examples/todo/bot/Sources/Generated" \
    "$root/Sources/CouchetteGateway/Resources/openapi/admin.yaml"
echo "Generated into examples/todo/bot/Sources/Generated"
