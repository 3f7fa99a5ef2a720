#!/usr/bin/env bash
# Runs the browser tests (Tests/Browser): in headless Chromium (Debian's `chromium` and `chromium-driver`, driven by
# Selenium from PyPI) and in headless Firefox (Debian's `firefox-esr`, driven over Marionette by Mozilla's
# marionette_driver from PyPI). make deps installs the browsers; the Python packages go in .build/browser-venv on
# first use.
#
#   scripts/browser-run.sh [unittest options for the Chromium test]
#
# Needs .build/debug/couchette-gateway (`swift build`); COUCHETTE_GATEWAY names another binary. SCREENSHOTS=DIR
# saves PNGs of the main pages there.
set -euo pipefail

cd "$(dirname "$0")/.."
VENV=.build/browser-venv
SELENIUM_VERSION=4.27.1
MARIONETTE_VERSION=3.7.1
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c "import selenium, marionette_driver" 2>/dev/null; then
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet "selenium==$SELENIUM_VERSION" "marionette-driver==$MARIONETTE_VERSION"
fi
"$VENV/bin/python" Tests/Browser/admin_ui_test.py "$@"
"$VENV/bin/python" Tests/Browser/admin_ui_firefox_test.py
