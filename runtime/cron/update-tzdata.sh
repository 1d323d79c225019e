#!/usr/bin/env bash
# Refresh the embedded tz database from the Go toolchain on PATH, then set
# TZDataVersion in tzdata.go to the release it reports. Re-run the Quartz
# vector tests afterwards: a tz change can move fire times.
set -euo pipefail
cd "$(dirname "$0")"
root=$(go env GOROOT)
cp "$root/lib/time/zoneinfo.zip" zoneinfo.zip
grep -E '^(CODE|DATA)=' "$root/lib/time/update.bash"
