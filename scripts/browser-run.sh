#!/usr/bin/env bash
# Runs the browser tests (Tests/Browser) in headless Chromium: Debian's `chromium` and `chromium-driver` (make deps
# installs them) driven by Selenium from PyPI, installed in .build/browser-venv on first use.
#
#   scripts/browser-run.sh [unittest options]
#
# Needs .build/debug/couchette-gateway (`swift build`); COUCHETTE_GATEWAY names another binary. SCREENSHOTS=DIR
# saves PNGs of the main pages there.
set -euo pipefail

cd "$(dirname "$0")/.."
VENV=.build/browser-venv
SELENIUM_VERSION=4.27.1
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c "import selenium" 2>/dev/null; then
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet "selenium==$SELENIUM_VERSION"
fi
exec "$VENV/bin/python" Tests/Browser/admin_ui_test.py "$@"
