#!/usr/bin/env bash
# Checks the gateway against its OpenAPI descriptions with schemathesis.
#
#   scripts/schemathesis-run.sh [--examples N] [-- SCHEMATHESIS-OPTIONS...]
#
# Starts .build/debug/couchette-gateway (build it first: `swift build`; COUCHETTE_GATEWAY names another binary)
# on two free loopback ports with a throwaway configuration (database `db` in `walrus:` memory, user
# `schemathesis` reading every channel, GUEST disabled), seeds a few documents and principals, then runs
# `schemathesis run` against openapi/public.yaml (as that user, Basic auth) and openapi/admin.yaml (no auth),
# checking for server errors (5xx) and that status codes, content types, headers and bodies conform to the
# descriptions, with N test cases per operation (default 10). Exits non-zero when a check fails; schemathesis
# prints each failing operation with a curl command that reproduces it. Options after `--` go to both runs
# (e.g. `-- --report har`); SCHEMATHESIS_SEED fixes the seed. The gateway's log is kept in
# .build/schemathesis-gateway.log.
#
# The admin run's state-changing database operations (`_offline`, `_online`, `_resync`, `_config`,
# `_config/sync`, `_flush`, `DELETE /{db}/`) go to spare databases, so that the other operations keep a working `db`.
# scripts/schemathesis_hooks.py bounds the waiting `_changes` feeds (longpoll, continuous) to one second.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$(pwd)
GATEWAY=${COUCHETTE_GATEWAY:-$ROOT/.build/debug/couchette-gateway}
VENV=$ROOT/.build/schemathesis-venv
SCHEMATHESIS_VERSION=4.32.5
VALIDATOR_VERSION=0.9.0
EXAMPLES=10
EXTRA=()
USER_NAME=schemathesis
USER_PASSWORD=schemathesis-password

usage() { echo "usage: scripts/schemathesis-run.sh [--examples N] [-- SCHEMATHESIS-OPTIONS...]" >&2; exit 2; }
while [ $# -gt 0 ]; do
    case "$1" in
        --examples) [ $# -ge 2 ] || usage; EXAMPLES=$2; shift 2 ;;
        --examples=*) EXAMPLES=${1#--examples=}; shift ;;
        --) shift; EXTRA=("$@"); break ;;
        -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
        *) usage ;;
    esac
done
[[ $EXAMPLES =~ ^[1-9][0-9]*$ ]] || { echo "--examples needs a positive integer" >&2; exit 2; }

if [ ! -x "$GATEWAY" ]; then
    echo "error: $GATEWAY is missing; build it first with 'swift build --product couchette-gateway'" >&2
    exit 1
fi

# schemathesis and the OpenAPI validator in their own virtual environment, made once.
if ! "$VENV/bin/schemathesis" --version 2>/dev/null | grep -q "$SCHEMATHESIS_VERSION" \
    || [ ! -x "$VENV/bin/openapi-spec-validator" ]; then
    echo "Installing schemathesis $SCHEMATHESIS_VERSION and openapi-spec-validator in $VENV"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet "schemathesis==$SCHEMATHESIS_VERSION" "openapi-spec-validator==$VALIDATOR_VERSION"
fi

# Both descriptions must be valid OpenAPI 3.1 before anything is checked against them.
"$VENV/bin/openapi-spec-validator" openapi/public.yaml openapi/admin.yaml

WORK=$(mktemp -d -t couchette-schemathesis.XXXXXX)
GATEWAY_LOG=$ROOT/.build/schemathesis-gateway.log   # kept after the run
GATEWAY_PID=
cleanup() {
    if [ -n "$GATEWAY_PID" ] && kill -0 "$GATEWAY_PID" 2>/dev/null; then
        kill -TERM "$GATEWAY_PID" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$GATEWAY_PID" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$GATEWAY_PID" 2>/dev/null || true
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Two free loopback ports.
read -r PUBLIC_PORT ADMIN_PORT < <(python3 -c '
import socket
sockets = [socket.socket() for _ in range(2)]
for s in sockets:
    s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in sockets))
')
PUBLIC_URL=http://127.0.0.1:$PUBLIC_PORT
ADMIN_URL=http://127.0.0.1:$ADMIN_PORT

cat > "$WORK/gateway-config.json" <<EOF
{
  "interface": "127.0.0.1:$PUBLIC_PORT",
  "adminInterface": "127.0.0.1:$ADMIN_PORT",
  "log": [],
  "databases": {
    "db": {
      "server": "walrus:",
      "users": {
        "GUEST": {"disabled": true},
        "$USER_NAME": {"password": "$USER_PASSWORD", "admin_channels": ["*"]}
      }
    },
    "scratch": {"server": "walrus:", "users": {"GUEST": {"disabled": true}}},
    "doomed": {"server": "walrus:", "users": {"GUEST": {"disabled": true}}}
  }
}
EOF

# Path parameters: every operation works on `db`; half of the generated IDs are replaced by those of the seeded
# data, so that reads find something. The admin operations that would take `db` away get spare databases (503 is
# their documented answer while a database is offline, or online for `_resync`).
cat > "$WORK/public.toml" <<'EOF'
[dictionaries]
docs = { values = ["doc1"] }
attachments = { values = ["photo.jpg"] }
locals = { values = ["checkpoint1"] }
users = { values = ["user1", "GUEST"] }
roles = { values = ["moderator"] }

[parameters]
"path.db" = "db"
"path.doc" = { dictionary = "docs", probability = 0.5 }
"path.attachment" = { dictionary = "attachments", probability = 0.5 }
"path.docid" = { dictionary = "locals", probability = 0.5 }
"path.name" = { dictionary = "users", probability = 0.5 }
EOF
cp "$WORK/public.toml" "$WORK/admin.toml"
cat >> "$WORK/admin.toml" <<'EOF'

[[operations]]
include-path-regex = '/_role/'
parameters = { "path.name" = { dictionary = "roles", probability = 0.5 } }

[[operations]]
include-path-regex = '^/\{db\}/(_offline|_online|_resync|_config|_config/sync|_flush)$'
parameters = { "path.db" = "scratch" }
checks.not_a_server_error.expected-statuses = ["2xx", "3xx", "4xx", "503"]

[[operations]]
include-name = "DELETE /{db}/"
parameters = { "path.db" = "doomed" }

[[operations]]
include-name = "PUT /{db}/"
parameters = { "path.db" = "created" }
EOF

# The gateway runs in the work folder, so databases a test creates with `walrus:DIR` land there.
(cd "$WORK" && exec "$GATEWAY" "$WORK/gateway-config.json") > "$GATEWAY_LOG" 2>&1 &
GATEWAY_PID=$!

echo "Waiting for the gateway (public $PUBLIC_URL, admin $ADMIN_URL)"
deadline=$((SECONDS + 60))
until curl -fsS -o /dev/null "$PUBLIC_URL/" 2>/dev/null && curl -fsS -o /dev/null "$ADMIN_URL/" 2>/dev/null; do
    if ! kill -0 "$GATEWAY_PID" 2>/dev/null; then
        echo "error: the gateway exited during startup:" >&2
        cat "$GATEWAY_LOG" >&2
        exit 1
    fi
    if [ $SECONDS -ge $deadline ]; then
        echo "error: the gateway did not answer within 60 s:" >&2
        cat "$GATEWAY_LOG" >&2
        exit 1
    fi
    sleep 0.2
done

# Seed data the tests can find: a document with an attachment, a local document, a user and a role.
admin() {  # METHOD PATH BODY [CONTENT-TYPE]
    curl -fsS -X "$1" "$ADMIN_URL$2" -H "Content-Type: ${4:-application/json}" --data-binary "$3"
}
rev=$(admin PUT /db/doc1 '{"title": "seed", "channels": ["public"]}' | python3 -c 'import json, sys; print(json.load(sys.stdin)["rev"])')
admin PUT "/db/doc1/photo.jpg?rev=$rev" 'not really a JPEG' image/jpeg > /dev/null
admin PUT /db/_local/checkpoint1 '{"lastSequence": "1"}' > /dev/null
admin PUT /db/_role/moderator '{"admin_channels": ["moderators"]}'
admin PUT /db/_user/user1 '{"password": "pass", "admin_channels": ["user1"], "admin_roles": ["moderator"]}'

CHECKS=not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance

run_schemathesis() {  # NAME URL [OPTIONS...]: openapi/NAME.yaml with $WORK/NAME.toml
    local name=$1 url=$2 schema=openapi/$1.yaml
    shift 2
    echo
    echo "=== schemathesis: $name ($schema against $url, $EXAMPLES examples per operation)"
    SCHEMATHESIS_HOOKS=$ROOT/scripts/schemathesis_hooks.py \
        "$VENV/bin/schemathesis" --config-file "$WORK/$name.toml" run "$ROOT/$schema" \
        --url "$url" \
        --checks "$CHECKS" \
        --max-examples "$EXAMPLES" \
        --request-timeout 10 \
        --generation-database none \
        --seed "${SCHEMATHESIS_SEED:-$RANDOM}" \
        --no-color \
        "$@" ${EXTRA[@]+"${EXTRA[@]}"}
}

status=0
start=$SECONDS
run_schemathesis public "$PUBLIC_URL" --auth "$USER_NAME:$USER_PASSWORD" || status=1
run_schemathesis admin "$ADMIN_URL" || status=1

if ! kill -0 "$GATEWAY_PID" 2>/dev/null; then
    echo "error: the gateway died during the run (its log: $GATEWAY_LOG):" >&2
    grep -m 1 -A 12 "Fatal error" "$GATEWAY_LOG" >&2 || tail -n 20 "$GATEWAY_LOG" >&2
    status=1
fi
echo
if [ $status -eq 0 ]; then
    echo "schemathesis: both descriptions conform ($((SECONDS - start)) s)"
else
    echo "schemathesis: FAILED ($((SECONDS - start)) s); see the failures above" >&2
fi
exit $status
