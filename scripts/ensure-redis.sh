#!/usr/bin/env bash
# ensure-redis.sh: make sure redis-server is on PATH for the tests.
# As root on Debian it installs the package; otherwise it says what to install.
set -euo pipefail
if command -v redis-server >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "ensure-redis: installing Debian package redis-server" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq redis-server >/dev/null
  # The package may start a system instance; tests use their own servers.
  exit 0
fi
cat >&2 <<'MSG'
ensure-redis: redis-server is not installed.
  The tests start private redis-server processes (Redis >= 6.2).
  Install it, e.g.  sudo apt-get install redis-server   (Debian/Ubuntu)
                    brew install redis                   (macOS)
  or point the tests at a dedicated, disposable Redis:  REDIS_URL=redis://host:6379/15 make test
MSG
exit 1
