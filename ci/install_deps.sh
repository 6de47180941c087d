#!/usr/bin/env bash
# Install minisgd's build/test dependencies from Debian (bookworm) packages.
# Idempotent and fast when nothing is missing: asks dpkg first and only touches
# apt (update + install) for the packages that are not installed yet.
set -euo pipefail

# Everything minisgd needs on a fresh bookworm machine (one list, kept here).
PACKAGES=(
  build-essential cmake ninja-build git ca-certificates
  ccache                                 # every CI build: warm runs recompile only what changed
  libtrilinos-kokkos-dev libtrilinos-kokkos-kernels-dev
  libopenmpi-dev openmpi-bin
  libyaml-cpp-dev libgtest-dev libbenchmark-dev libcli11-dev nlohmann-json3-dev
  librandom123-dev libxxhash-dev liblinear-tools libdnnl-dev libopenblas-dev
  clang clang-format                     # the clang-checked CI stage, ci/check_format.sh
  python3-matplotlib                     # perf/summary.py plots (/usr/bin/python3)
  python3-jsonschema                     # ctest report_schema: docs/report.schema.json
)

missing=()
for pkg in "${PACKAGES[@]}"; do
  # Only "install ok installed" counts: half-installed or removed-with-config
  # ("deinstall ok config-files") packages must be (re)installed too.
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$pkg")
done

if ((${#missing[@]} == 0)); then
  echo "install_deps: all ${#PACKAGES[@]} packages already installed"
  exit 0
fi

if ((EUID != 0)); then
  echo "install_deps: missing packages: ${missing[*]}" >&2
  echo "install_deps: run as root, or: sudo apt-get update && sudo apt-get install -y --no-install-recommends ${missing[*]}" >&2
  exit 1
fi

echo "install_deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# Wait for (rather than fail on) a concurrent apt/dpkg run.
apt-get -o DPkg::Lock::Timeout=600 update
apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends "${missing[@]}"
