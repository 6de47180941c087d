#!/usr/bin/env bash
# expect.sh CODE REGEX SECONDS -- COMMAND...
# Runs COMMAND, passes when it exits with CODE within SECONDS, its output matches REGEX, no
# error line is 500 characters or longer, nor printed twice, and a failed run (exit 2 or 3)
# prints one error line.
# MINISGD_TEST_TIME_SCALE (a whole number, default 1) multiplies SECONDS for slow builds (the
# sanitizer stage): the limit is there to catch a hang, not to time the run.
# Nothing may be left behind but what the run was asked to write: the working directory (the
# decks and data files of the tests) gains no entry; beside each path the run names
# (--set output.*, data.path, data.test_path or run.restart=PATH) no PATH.* appears but the data
# cache PATH.minisgd.bin; and a run that fails (exit 2 or 3) leaves no directory it made for an
# output.
set -u
code=$1 regex=$2 seconds=$(($3 * ${MINISGD_TEST_TIME_SCALE:-1}))
shift 4
named=() outputs=()
for a in "$@"; do
  [[ $a =~ ^(output\.[a-z_.]+|data\.path|data\.test_path|run\.restart)=(.+)$ ]] || continue
  named+=("${BASH_REMATCH[2]}")
  [[ ${BASH_REMATCH[1]} == output.* ]] && outputs+=("${BASH_REMATCH[2]}")
done
siblings() { for p in "${named[@]}"; do compgen -G "$p.*"; done | sort; }
absent_dirs() { for p in "${outputs[@]}"; do [ -e "$(dirname -- "$p")" ] || dirname -- "$p"; done; }
cwd_before=$(ls -A | sort) siblings_before=$(siblings) dirs_before=$(absent_dirs)
out=$(timeout --kill-after=5 "$seconds" "$@" 2>&1)
rc=$?
left=$(comm -13 <(echo "$cwd_before") <(ls -A | sort))
left+=" "$(comm -13 <(echo "$siblings_before") <(siblings) | grep -v '\.minisgd\.bin$')
if [ "$rc" -eq 2 ] || [ "$rc" -eq 3 ]; then
  for d in $dirs_before; do [ -e "$d" ] && left+=" $d"; done
fi
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
# A failed run says why in one line.
if { [ "$rc" -eq 2 ] || [ "$rc" -eq 3 ]; } && [ "$(grep -c 'error: ' <<<"$out")" -ne 1 ]; then
  echo "FAIL: not one error line"; echo "$out"; exit 1
fi
# An error is printed once: not first as a note (say, that a cache is rebuilt), then again.
if msg=$(grep -m1 -oE 'error: .+' <<<"$out" | cut -c8-) && [ -n "$msg" ] &&
   [ "$(grep -cF -- "$msg" <<<"$out")" -gt 1 ]; then
  echo "FAIL: the error is printed more than once: $msg"; echo "$out"; exit 1
fi
if [ -n "$(tr -d ' \n' <<<"$left")" ]; then
  echo "FAIL: left behind:" $left; echo "$out"; exit 1
fi
echo "ok: exit $rc, output matches /$regex/, nothing left behind"
