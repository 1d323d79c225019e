#!/usr/bin/env bash
# run.sh regenerates chronos's Quartz 2.3.2 test vectors in testdata/quartz/ by running the real
# library (Debian libquartz2-java) under libfaketime, then checks them with the Go test in this
# directory. See README.md. Usage: tools/quartzoracle/run.sh [SEED]
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="$root/testdata/quartz"
build="$here/build"
seed="${1:-${SEED:-20260101}}"

jars=(/usr/share/java/quartz2.jar /usr/share/java/slf4j-api.jar /usr/share/java/slf4j-nop.jar)
faketime_lib=/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1
need=()
for j in "${jars[@]}"; do [ -e "$j" ] || need+=(libquartz2-java libslf4j-java); done
[ -e "$faketime_lib" ] || need+=(libfaketime)
command -v javac >/dev/null || need+=(openjdk-17-jdk-headless)
if [ ${#need[@]} -gt 0 ]; then
	mapfile -t need < <(printf '%s\n' "${need[@]}" | sort -u)
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		echo "quartzoracle: installing ${need[*]}" >&2
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
	else
		echo "quartzoracle: missing packages; install them with: sudo apt-get install ${need[*]}" >&2
		exit 1
	fi
fi

# JDK 17: the oracle stops hung getTimeAfter workers with Thread.stop, which JDK 20+ removed.
if [ -z "${JAVA_HOME:-}" ] && [ -x /usr/lib/jvm/java-17-openjdk-amd64/bin/javac ]; then
	JAVA_HOME=/usr/lib/jvm/java-17-openjdk-amd64
fi
JAVA="${JAVA_HOME:+$JAVA_HOME/bin/}java"
JAVAC="${JAVA_HOME:+$JAVA_HOME/bin/}javac"
cp="$(IFS=:; echo "${jars[*]}")"

rm -rf "$build"
mkdir -p "$build/classes"
"$JAVAC" -Xlint:all,-removal -Werror -nowarn -d "$build/classes" -cp "$cp" "$here"/src/*.java

# libfaketime: the oracle JVM's clock is frozen at 2026-01-01 00:00:00.999 UTC (an absolute
# FAKETIME without '@' does not tick; the extra 500 µs keep libfaketime's floating-point parse
# from rounding .999 down to .998), which fixes Quartz's MAX_YEAR at 2126 and makes the W
# branches deterministic. Calls that need another "now" run in a child JVM (NowHelper) whose
# clock is read, uncached, from the timestamp file $stamp that the oracle rewrites per call.
# Monotonic clocks stay real so timeouts still work.
stamp="$build/faketime"
echo "2026-01-01 00:00:00.999500" >"$stamp"
pkg="$(dpkg-query -W -f='${Package} ${Version}' libquartz2-java 2>/dev/null || echo unknown)"
generated="$(date -u +%Y-%m-%dT%H:%M:%SZ)"

env TZ=UTC LD_PRELOAD="$faketime_lib" FAKETIME="2026-01-01 00:00:00.999500" FAKETIME_DONT_FAKE_MONOTONIC=1 \
	"$JAVA" -Duser.timezone=UTC -Dfile.encoding=UTF-8 \
	-Doracle.stamp="$stamp" -Doracle.package="$pkg" -Doracle.generated="$generated" \
	-cp "$build/classes:$cp" Oracle "$out" "$seed"

if command -v go >/dev/null; then
	(cd "$root" && go test -count=1 ./tools/quartzoracle/)
else
	echo "quartzoracle: go not found; run 'go test ./tools/quartzoracle/' to check the vectors" >&2
fi
