#!/usr/bin/env bash
# hostile_setup.sh DIR DECKS: the hostile inputs the cli.hostile_* tests read, made in DIR
# (links, a FIFO, and files too large to keep in the repository); DECKS holds rows.libsvm.
set -eu
dir=$1 decks=$2
rm -rf "$dir" && mkdir -p "$dir" && cd "$dir"
ln -s loop_b.yaml loop_a.yaml && ln -s loop_a.yaml loop_b.yaml  # a deck path that loops
ln -s no-such.yaml dangling.yaml
mkfifo deck.fifo
ln -s /dev/zero zero.yaml && ln -s /dev/zero zero.libsvm
ln -s /dev/null null_link  # an output path that is a link to a device
: > empty.yaml
{ printf 'solver: {batch_size: '; head -c 1000000 /dev/zero | tr '\0' 7; echo 'x}'; } > long_value.yaml
{ echo 'data: {source: synthetic}'; for _ in $(seq 2200); do printf '# %0500d\n' 0; done; } > big.yaml
{ printf '1 1:'; head -c 10000000 /dev/zero | tr '\0' 5; printf 'x\n'; } > long_line.libsvm
# The same relative data path from two working directories: in one the file exists, in the
# other it does not (as if deleted between the ranks' opens).
mkdir -p with_data without_data && cp "$decks/rows.libsvm" with_data/
