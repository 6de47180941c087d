#!/usr/bin/env bash
# Fails when a C++ file under src/, tests/, perf/ or testkit/ differs from what clang-format
# makes of it (.clang-format at the top). Fix with:  ci/check_format.sh --fix
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cf=$(command -v clang-format-14 || command -v clang-format || true)
[[ -n $cf ]] || { echo "check_format: clang-format not found (ci/install_deps.sh installs it)"; exit 1; }
mapfile -t files < <(git ls-files 'src/*.[ch]pp' 'tests/*.[ch]pp' 'perf/*.[ch]pp' 'testkit/*.[ch]pp')
if [[ ${1:-} == --fix ]]; then "$cf" -i "${files[@]}"; exit 0; fi
bad=0
for f in "${files[@]}"; do
  if ! "$cf" "$f" | cmp -s - "$f"; then echo "$f: not formatted (ci/check_format.sh --fix)"; bad=1; fi
done
((bad == 0)) && echo "check_format: ${#files[@]} files formatted"
exit "$bad"
