#!/usr/bin/env bash
# expect.sh CODE REGEX SECONDS -- COMMAND...
# Runs COMMAND, passes when it exits with CODE within SECONDS, its output matches REGEX and
# no error line is 500 characters or longer, nor printed twice.
# MINISGD_TEST_TIME_SCALE (a whole number, default 1) multiplies SECONDS for slow builds (the
# sanitizer stage): the limit is there to catch a hang, not to time the run.
set -u
code=$1 regex=$2 seconds=$(($3 * ${MINISGD_TEST_TIME_SCALE:-1}))
shift 4
out=$(timeout --kill-after=5 "$seconds" "$@" 2>&1)
rc=$?
if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
  echo "FAIL: timed out after ${seconds}s (a rank left hanging?)"; echo "$out"; exit 1
fi
if [ "$rc" -ne "$code" ]; then
  echo "FAIL: exit code $rc, expected $code"; echo "$out"; exit 1
fi
if ! grep -Eq -- "$regex" <<<"$out"; then
  echo "FAIL: output does not match /$regex/"; echo "$out"; exit 1
fi
# An error is one short line, whatever the input held (a bad line may be megabytes long).
if long=$(grep -E '(error|Error)' <<<"$out" | awk 'length($0) >= 500' | head -c 600) && [ -n "$long" ]; then
  echo "FAIL: an error line of 500 characters or more: $long"; exit 1
fi
# An error is printed once: not first as a note (say, that a cache is rebuilt), then again.
if msg=$(grep -m1 -oE 'error: .+' <<<"$out" | cut -c8-) && [ -n "$msg" ] &&
   [ "$(grep -cF -- "$msg" <<<"$out")" -gt 1 ]; then
  echo "FAIL: the error is printed more than once: $msg"; echo "$out"; exit 1
fi
echo "ok: exit $rc, output matches /$regex/"
