#!/usr/bin/env bash
# cache_content.sh DIR TEXT -- COMMAND...
# The data cache stands for the text's content, not its size and time alone. Copies TEXT into
# DIR, runs COMMAND (mpirun ... minisgd DECK ...) with the copy as data.path and the cache on
# (the cache is written), then changes one label of the copy keeping its size and putting its
# modification time back, as another file of the same size and time would be: the next run
# must rebuild the cache with a note and train on the new content (its final loss that of a
# run on the text without a cache, and not the first run's). Then a cache of an older format
# version: rebuilt with a note. Each run ends within 10 s and DIR holds only the text and its
# cache at the end.
set -u
dir=$1 text=$2
shift 3
fail() { { echo "FAIL: $1"; [ -n "${2:-}" ] && echo "$2"; } >&2; exit 1; }
rm -rf "$dir" && mkdir -p "$dir" && cp "$text" "$dir/rows.libsvm" || fail "cannot set up $dir"
data=$dir/rows.libsvm cache=$dir/rows.libsvm.minisgd.bin
run() {  # cache (true|false); prints the output, fails on an exit code other than 0
  local out rc
  out=$(timeout --kill-after=5 10 "$@" --set data.source=libsvm --set data.path="$data" \
        --set data.cache="$cache_on" 2>&1)
  rc=$?
  [ "$rc" -eq 0 ] || fail "exit code $rc, expected 0" "$out"
  echo "$out"
}
loss() { grep -oE 'final loss [^ ]+' <<<"$1"; }
cache_on=true
first=$(run "$@") || exit 1
[ -f "$cache" ] || fail "the first run wrote no cache" "$first"
stamp=$(stat -c '%s %y' "$data")
cp -p "$data" "$dir/stamp" && sed -i '1s/^-1/+1/' "$data" && cmp -s "$data" "$dir/stamp" &&
  fail "the edit changed nothing"
touch -r "$dir/stamp" "$data" && rm "$dir/stamp"
[ "$(stat -c '%s %y' "$data")" = "$stamp" ] || fail "cannot keep the size and time ($stamp)"
second=$(run "$@") || exit 1
grep -q "note: data cache $cache: made from other content" <<<"$second" ||
  fail "a cache of other content was used" "$second"
cache_on=false
text_only=$(run "$@") || exit 1
[ "$(loss "$second")" = "$(loss "$text_only")" ] ||
  fail "trained on other data than the text: $(loss "$second"), the text: $(loss "$text_only")"
[ "$(loss "$second")" != "$(loss "$first")" ] || fail "the edit did not change the training"
cache_on=true
third=$(run "$@") || exit 1
grep -q "note:" <<<"$third" && fail "the rebuilt cache was not used" "$third"
# A cache of format version 2 (the u32 after the 8-byte magic): refused and rebuilt.
printf '\002\000\000\000' | dd of="$cache" bs=1 seek=8 conv=notrunc status=none
old=$(run "$@") || exit 1
grep -q "note: data cache $cache: .*format version 2, this build reads version [0-9]*; rebuilding it" <<<"$old" ||
  fail "a cache of an older version was not rebuilt" "$old"
[ "$(loss "$old")" = "$(loss "$text_only")" ] || fail "the old cache's run trained on other data"
again=$(run "$@") || exit 1
grep -q "note:" <<<"$again" && fail "the cache rebuilt from the old one was not used" "$again"
left=$(ls -A "$dir" | grep -vxE 'rows\.libsvm(\.minisgd\.bin)?')
[ -z "$left" ] || fail "left in $dir: $left"
echo "ok: a cache of other content with the same size and time, and an old one, are rebuilt"
