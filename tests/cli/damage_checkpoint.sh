#!/usr/bin/env bash
# damage_checkpoint.sh CKPT: writes truncated.ckpt (its first half) and corrupt.ckpt (one byte
# of a rank's state changed) next to CKPT, for the restart refusal tests.
set -eu
dir=$(dirname "$1")
size=$(stat -c %s "$1")
head -c $((size / 2)) "$1" > "$dir/truncated.ckpt"
cp "$1" "$dir/corrupt.ckpt"
printf '\x5a' | dd of="$dir/corrupt.ckpt" bs=1 seek=$((size - 20)) conv=notrunc status=none
cmp -s "$1" "$dir/corrupt.ckpt" && { echo "FAIL: byte not changed"; exit 1; }
echo "ok: $dir/truncated.ckpt, $dir/corrupt.ckpt"
