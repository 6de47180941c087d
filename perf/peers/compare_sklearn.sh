#!/usr/bin/env bash
# minisgd against scikit-learn's SGDClassifier(average=True): how close each gets to the optimum
# of L2-regularized logistic regression in the same epochs, on heart_scale (LIBLINEAR's
# example), breast_cancer and digits (0-4 against 5-9), standardized, with a regularized
# constant column, λ in {1e-4, 1e-3}, 5 and 20 epochs, batch 1. The optimum comes from an
# independent solver (scikit-learn's LogisticRegression, lbfgs, tol 1e-12); minisgd runs with
# the "optimal" schedule at three first step sizes with polyak, tail and polynomial-decay
# (solver.averaging_gamma, --gamma) averaging, and its best is
# compared with scikit-learn's best of 7 settings, each gap a mean over 10 shuffles (--seeds)
# with its standard error (perf/peers/sklearn_gap.py; figures and reading: docs/convergence.md).
# Exit status 1 when scikit-learn is closer by more than two standard errors in any case.
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
