#!/usr/bin/env bash
# minisgd's untuned defaults against scikit-learn's best-tuned averaged SGD: how close each gets
# to the optimum in the same epochs, on every real set the repository uses (heart_scale,
# breast_cancer, digits, diabetes, standardized), for logistic regression and least squares with
# an unregularized intercept, λ in {1e-4, 1e-3}, 5, 20 and 60 epochs. minisgd: solver.step_size:
# auto and nothing else tuned, at batch 1 and batch 16; scikit-learn: SGDClassifier /
# SGDRegressor(average=True), the best of its four schedules at four η₀ per cell. The optimum
# comes from Newton's method in FP64; each gap is a mean over 10 shuffles (--seeds)
# (perf/peers/sklearn_gap.py; figures and reading: docs/convergence.md). Exit status 1 when
# minisgd's gap exceeds 1.1 x scikit-learn's best + 1e-4 in any case.
# Uses Debian's python3-sklearn at /usr/bin/python3; a peer comparison, never run in CI.
#
# Usage: perf/peers/compare_sklearn.sh [MINISGD_EXECUTABLE] [sklearn_gap.py options]
#        (default executable: build/serial/src/minisgd)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
exe=${1:-$root/build/serial/src/minisgd}
shift || true
source "$root/ci/env.sh"
# The peer's own packages, installed only when this comparison runs (never by CI).
if ! /usr/bin/python3 -c 'import sklearn' 2>/dev/null; then
  ((EUID == 0)) || { echo "needs Debian's python3-sklearn (apt-get install python3-sklearn)" >&2; exit 1; }
  apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends python3-sklearn >/dev/null ||
    { apt-get update -qq && apt-get install -y --no-install-recommends python3-sklearn >/dev/null; }
fi
export KOKKOS_NUM_THREADS=1
exec /usr/bin/python3 "$root/perf/peers/sklearn_gap.py" --exe "$exe" "$@"
