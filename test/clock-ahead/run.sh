#!/usr/bin/env bash
# The suites that involve dates and time windows, with this process tree's clock a year ahead (libfaketime), so a
# test that holds a date which will one day be outside a platform's window fails today. Only Node is faked: the
# suites run on the embedded database (PGlite runs inside Node, so its now() is faked too), never on a PostgreSQL
# server whose clock would disagree. Needs Debian's libfaketime (apt-get install faketime libfaketime).
set -euo pipefail
cd "$(dirname "$0")/../.."

AHEAD="${CLOCK_AHEAD:-+365d}"
LIB="$(dpkg -L libfaketime 2>/dev/null | grep '/libfaketime\.so\.1$' | head -n 1 || true)"
if [ -z "$LIB" ]; then
  echo "libfaketime is not installed: apt-get install -y faketime libfaketime" >&2
  exit 2
fi

# The preload must really move Node's clock, or this step would pass while testing nothing.
real=$(date +%s)
faked=$(LD_PRELOAD="$LIB" FAKETIME="$AHEAD" node -e 'console.log(Math.floor(Date.now() / 1000))')
if [ $((faked - real)) -lt 86400 ]; then
  echo "libfaketime did not move Node's clock (real $real, under libfaketime $faked)" >&2
  exit 1
fi
echo "clock for these suites: $(LD_PRELOAD="$LIB" FAKETIME="$AHEAD" node -e 'console.log(new Date().toISOString())')"

unset DATABASE_URL REDIS_URL
LD_PRELOAD="$LIB" FAKETIME="$AHEAD" npx vitest run --config test/clock-ahead/vitest.config.ts "$@"
