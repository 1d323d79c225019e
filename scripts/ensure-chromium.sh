#!/usr/bin/env bash
# ensure-chromium.sh: make sure headless Chromium is there for the console's
# browser test (runtime/console/browser_test.go).
# As root on Debian it installs the package chromium; otherwise it says what
# to install. Without Chromium the browser test skips, except in CI
# (CI set), where it fails: so in CI a failed install fails here too.
set -euo pipefail
if command -v chromium >/dev/null 2>&1 || [ -n "${CHRONOS_CHROMIUM:-}" ]; then
  exit 0
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "ensure-chromium: installing Debian package chromium" >&2
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-get install -y -qq chromium >/dev/null 2>&1; then
    apt-get update -qq
    apt-get install -y -qq chromium >/dev/null
  fi
  exit 0
fi
cat >&2 <<'MSG'
ensure-chromium: chromium is not installed; the console's browser test will skip.
  Install it, e.g.  sudo apt-get install chromium   (Debian/Ubuntu)
  or point the test at any Chrome binary:  CHRONOS_CHROMIUM=/path/to/chrome make test
MSG
if [ -n "${CI:-}" ]; then
  exit 1
fi
exit 0
