#!/usr/bin/env bash
# Fails when a source file includes a header of a higher layer (docs/design.md, "Layers").
# The layers of src/minisgd, lowest first; a folder may include its own and lower folders:
#   core       vocabulary enums and their names, Kokkos aliases, errors, atomic files, clocks
#   precision  formats, storage types, rounding, the precision plan
#   config     the typed configuration and the deck reader
#   comm       communicator interface, MPI/NCCL backends, merge plans, the communicator factory
#   models     GLM losses
#   data       readers, binary cache, synthetic generators, partition, datasets
#   kernels    GLM and CA-SGD kernels, the Gram (portable, oneDNN, cuBLAS)
#   compress   gradient compressors
#   perfmodel  the α-β-γ model of a training step, machine descriptions
#   report     timers, history rows, output files
#   solvers    steppers (SGD, CA-SGD), optimizers, evaluator, the training loop
#   app        capabilities, the run driver and the precision study (src/app/main.cpp too)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
layers=(core precision config comm models data kernels compress perfmodel report solvers app)
rank_of() {
  local i
  for i in "${!layers[@]}"; do [[ ${layers[$i]} == "$1" ]] && { echo "$i"; return; }; done
  echo -1
}
bad=0
while IFS= read -r file; do
  case $file in
    src/app/*) from=app ;;
    *) from=${file#src/minisgd/}; from=${from%%/*} ;;
  esac
  r_from=$(rank_of "$from")
  if (( r_from < 0 )); then echo "$file: folder '$from' is not in ci/check_layers.sh's layer list"; bad=1; continue; fi
  while IFS=: read -r line inc; do
    to=${inc#*minisgd/}; to=${to%%/*}
    [[ $to == version.hpp* || $to == build_info.hpp* ]] && continue  # generated, no includes
    r_to=$(rank_of "$to")
    if (( r_to < 0 || r_to > r_from )); then
      echo "$file:$line: $from includes $to (${inc//[[:space:]]/ }), a higher layer"; bad=1
    fi
  done < <(grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"minisgd/' "$file" | sed 's/^\([0-9]*\):.*"\(minisgd\/[^"]*\)".*/\1:\2/')
done < <(find src -name '*.hpp' -o -name '*.cpp' | sort)
if (( bad )); then echo "check_layers: upward includes found (layer order: ${layers[*]})"; exit 1; fi
echo "check_layers: ok (${layers[*]})"
