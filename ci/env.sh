#!/usr/bin/env bash
# Common environment for minisgd's CI scripts.  Meant to be *sourced*
# (`source ci/env.sh`); it only sets variables, so sourcing it twice is harmless.
# No `set -euo pipefail` here on purpose: that would leak into the caller's shell.

# Where downloaded sources and locally built Kokkos prefixes are cached
# (ci/build_kokkos.sh installs to $MINISGD_CACHE/kokkos-<backend>).
export MINISGD_CACHE="${MINISGD_CACHE:-$HOME/.cache/minisgd}"

# CI containers run as root; Open MPI refuses that unless both are set.
export OMPI_ALLOW_RUN_AS_ROOT=1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# The MPI tests use up to 4 ranks on 2-core runners: allow more ranks than
# slots without passing --oversubscribe to every mpirun.
export OMPI_MCA_rmaps_base_oversubscribe=1
# With more ranks than cores, a rank waiting in a collective must give its core to the rank it
# waits for, or a 1-second run takes tens of seconds on a loaded machine.
export OMPI_MCA_mpi_yield_when_idle=1
# Every CI run stays on one node: the default UCX messaging layer probes for network devices at
# each MPI start (about 0.2 s of the 0.46 s a 4-rank start takes here), paid by every one of
# the hundreds of test launches of a stage. Open MPI's own ob1 layer over shared memory starts at once.
export OMPI_MCA_pml="${OMPI_MCA_pml:-ob1}"

# Open MPI's shared-memory transport copies large messages with CMA
# (process_vm_readv).  Containers under a seccomp filter (Docker's default
# profile) forbid that, and every large message then prints a warning/error.
# Fall back to copy-in/copy-out only there: where CMA works (as on the
# project's runners, Seccomp: 0) it is the faster path and is left alone.
if [[ -z "${OMPI_MCA_btl_vader_single_copy_mechanism:-}" ]] &&
   grep -qs '^Seccomp:[[:space:]]*2' /proc/self/status; then
  export OMPI_MCA_btl_vader_single_copy_mechanism=none
fi
