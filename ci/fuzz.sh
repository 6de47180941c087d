#!/usr/bin/env bash
# Builds the libFuzzer targets with Debian's clang (ASan + UBSan) and runs each for a given
# time, one after the other: ci/fuzz.sh [SECONDS_PER_TARGET=60] [TARGET...].
# Not part of ci/test.sh. Seeds: tests/fuzz/seeds/<target>/ plus the malformed corpus.
# Findings are written to build/fuzz/findings/<target>/; once fixed, each becomes a regression
# input under tests/fuzz/regressions/<target>/ (a seed of later runs) and, where it is a deck
# or data file, an entry of the malformed-input corpus tests/cli/corpus/expect.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(fuzz_deck fuzz_libsvm fuzz_binary)
out=build/fuzz
mkdir -p "$out"
cxx=${FUZZ_CXX:-clang++-14}
mpi_inc=$(mpicxx --showme:incdirs 2>/dev/null | awk '{print $1}')
mpi_lib=$(mpicxx --showme:libdirs 2>/dev/null | awk '{print $1}')
flags=(-std=c++17 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
       -Isrc -I/usr/include/trilinos ${mpi_inc:+-I$mpi_inc})
libs=(-lyaml-cpp ${mpi_lib:+-L$mpi_lib} -lmpi)

sources_fuzz_deck=(src/minisgd/config/deck.cpp src/minisgd/config/deck_reader.cpp
                   src/minisgd/precision/plan.cpp)
sources_fuzz_libsvm=(src/minisgd/data/libsvm.cpp)
sources_fuzz_binary=(src/minisgd/data/binary_format.cpp src/minisgd/data/line_blocks.cpp)

for t in "${targets[@]}"; do
  var="sources_${t}[@]"
  echo "== building $t"
  "$cxx" "${flags[@]}" "tests/fuzz/$t.cpp" "${!var}" "${libs[@]}" -o "$out/$t"
  mkdir -p "$out/corpus/$t" "$out/findings/$t"
  seeds=(tests/fuzz/seeds/$t)
  [ -d tests/fuzz/regressions/$t ] && seeds+=(tests/fuzz/regressions/$t)
  [ "$t" = fuzz_deck ] && seeds+=(tests/cli/decks tests/cli/corpus)
  echo "== running $t for ${seconds}s"
  "$out/$t" -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$out/findings/$t/" -print_final_stats=1 "$out/corpus/$t" "${seeds[@]}" \
    2>&1 | tee "$out/$t.log" | grep -E "^(#[0-9]+.*(DONE|pulse)|==[0-9]+==|stat::number_of_executed_units|SUMMARY)" || true
  grep -q "stat::number_of_executed_units" "$out/$t.log" || { echo "$t: stopped early (finding in $out/findings/$t)"; exit 1; }
done
