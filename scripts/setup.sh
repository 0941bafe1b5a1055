#!/usr/bin/env bash
# Create .venv and install the bot with its test tools. Safe to re-run.
# torch is pinned first to the CPU build (an unpinned torch pulls a multi-GB CUDA build).
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
# One line per step on stderr (a step can take minutes: torch is ~200 MB); pip itself stays quiet.
step() { echo "setup: $*" >&2; }
if [ ! -x .venv/bin/python ]; then
    step "creating .venv"
    "$PY" -m venv .venv
fi
export PIP_DISABLE_PIP_VERSION_CHECK=1
EDITABLE_QUIET="ignore:Editable installation"
step "upgrading pip"
.venv/bin/python -m pip install --quiet --upgrade pip
step "installing PyTorch 2.13.0 (CPU build)"
.venv/bin/python -m pip install --quiet "torch==2.13.0"
step "installing the bot and its test tools (pip install -e '.[dev]')"
# setuptools tells every editable install "Editable installation. Please be careful with folders ..." as a warning
# (pip re-emits it as a BuildBackendWarning block even with --quiet); this filter hides that one message only.
PYTHONWARNINGS="$EDITABLE_QUIET" .venv/bin/python -m pip install --quiet -e '.[dev]'
# The report's browser test (tests/test_report_browser.py) drives the system Chromium through Playwright
# (never `playwright install`: its browser download is not needed). Install Debian's chromium when it is missing and
# apt-get is available (as root, or through passwordless sudo); otherwise say so and go on (the test then says why).
if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; then
    step "installing chromium for the browser test"
    SUDO=""
    if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        SUDO="sudo -n"
    fi
    if command -v apt-get >/dev/null 2>&1 && { [ "$(id -u)" -eq 0 ] || [ -n "$SUDO" ]; }; then
        if ! { $SUDO apt-get update -qq >/dev/null \
            && $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null; }; then
            echo "setup: could not install chromium with apt-get; the browser test needs it" >&2
        fi
    else
        echo "setup: chromium not found and cannot be installed here (no apt-get or no root); the browser test needs it" >&2
    fi
fi
# The store's PostgreSQL tests (tests/test_store_postgres.py, marker postgres) start a throwaway server with the
# machine's PostgreSQL binaries (initdb, pg_ctl; run as the `postgres` user under root). Install Debian's
# postgresql when they are missing and apt-get is available; otherwise say so (the tests then skip with the
# reason, or fail under CI).
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && ! command -v initdb >/dev/null 2>&1; then
    SUDO=""
    if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        SUDO="sudo -n"
    fi
    if command -v apt-get >/dev/null 2>&1 && { [ "$(id -u)" -eq 0 ] || [ -n "$SUDO" ]; }; then
        if ! { $SUDO apt-get update -qq >/dev/null \
            && $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql >/dev/null; }; then
            echo "setup: could not install postgresql with apt-get; the postgres store tests need it" >&2
        fi
    else
        echo "setup: PostgreSQL binaries not found and cannot be installed here (no apt-get or no root); the postgres store tests need them" >&2
    fi
fi
step "done"
