# Copyright the minisgd developers. SPDX-License-Identifier: BSD-3-Clause
import glob
import os
import re

from spack_repo.builtin.build_systems.cmake import CMakePackage
from spack_repo.builtin.build_systems.cuda import CudaPackage

from spack.package import *


class Minisgd(CMakePackage, CudaPackage):
    """Kokkos-based mini-app for communication-efficient distributed SGD on generalized
    linear models: mixed-precision CA-SGD and compressed gradient AllReduce."""

    homepage = "https://example.org/minisgd"
    git = "https://example.org/minisgd.git"
    license("BSD-3-Clause")
    maintainers("minisgd-developers")

    # No release is tagged yet; a release adds version("X.Y.Z", tag="vX.Y.Z", commit="...")
    # here, above main (docs/procurement.md, section 7).
    version("main", branch="main")

    # Every optional part maps to one CMake option (docs/building.md); each can be absent.
    variant("openmp", default=True, description="Kokkos OpenMP backend")
    variant("nccl", default=True, when="+cuda", description="NCCL communicator")
    variant("cublas", default=True, when="+cuda", description="Gram products through cuBLAS")
    variant("onednn", default=False, description="bf16 Gram products through oneDNN (CPUs with AVX512-BF16)")
    # -march for minisgd's host code (MINISGD_ARCH): e.g. march=native on the compute node
    # itself. (Not "arch": Spack reserves that name for its own architecture triple.)
    # Spack's compiler wrappers already add the flags of the spec's target= (target=zen4 gives
    # -march=znver4), so "none" (the default) is right for most builds.
    variant("march", default="none", values=lambda v: True, multi=False,
            description="CPU architecture for -march (MINISGD_ARCH); none: the target's flags")
    variant("tests", default=False, description="Build the GoogleTest suite")
    variant("benchmarks", default=False, description="Build the Google Benchmark programs")

    depends_on("cxx", type="build")
    depends_on("cmake@3.16:", type="build")
    depends_on("mpi")
    depends_on("kokkos@3.4:")
    depends_on("kokkos-kernels@3.4:")
    depends_on("yaml-cpp")
    depends_on("cli11")
    depends_on("nlohmann-json")
    depends_on("random123")
    depends_on("googletest", when="+tests")  # linked into the test programs
    depends_on("benchmark", when="+benchmarks")
    depends_on("onednn", when="+onednn")

    # Backends are Kokkos' business: propagate them, as the builtin Kokkos packages do.
    depends_on("kokkos+openmp", when="+openmp")
    depends_on("kokkos+cuda+wrapper", when="+cuda")
    # Kokkos 5 always compiles device lambdas and has no cuda_lambda variant any more.
    depends_on("kokkos+cuda_lambda", when="+cuda ^kokkos@:4")
    # KokkosBlas::gemm (the same-precision Gram) through cuBLAS rather than Kokkos' own kernel.
    depends_on("kokkos-kernels+cublas", when="+cublas")
    depends_on("nccl", when="+nccl")
    for arch in CudaPackage.cuda_arch_values:
        depends_on(f"kokkos cuda_arch={arch}", when=f"+cuda cuda_arch={arch}")

    # Kokkos' CUDA backend is built for one architecture: +cuda cannot build without it (as in
    # the builtin Kokkos-based packages, e.g. cabana, arborx).
    conflicts("+cuda", when="cuda_arch=none", msg="+cuda needs cuda_arch=<sm> (e.g. cuda_arch=80)")

    def cmake_args(self):
        spec = self.spec
        args = [
            self.define_from_variant("MINISGD_ENABLE_TESTS", "tests"),
            self.define_from_variant("MINISGD_ENABLE_BENCHMARKS", "benchmarks"),
            self.define_from_variant("MINISGD_ENABLE_DNNL", "onednn"),
            self.define_from_variant("MINISGD_ARCH", "march"),
            self.define("MPIEXEC_EXECUTABLE", spec["mpi"].prefix.bin.mpiexec),
        ]
        if spec.satisfies("+cuda"):
            args.append(self.define("CMAKE_CXX_COMPILER", spec["kokkos"].kokkos_cxx))
            args.append(self.define_from_variant("MINISGD_ENABLE_NCCL", "nccl"))
            args.append(self.define_from_variant("MINISGD_ENABLE_CUBLAS", "cublas"))
            args.append(self.define("CUDAToolkit_ROOT", spec["cuda"].prefix))
            if spec.satisfies("+nccl"):
                args.append(self.define("NCCL_ROOT", spec["nccl"].prefix))
        else:
            # Without CUDA the GPU options default OFF; say so, so a stale cache cannot turn them on.
            args.append(self.define("MINISGD_ENABLE_NCCL", False))
            args.append(self.define("MINISGD_ENABLE_CUBLAS", False))
        return args

    # Stand-alone tests (`spack test run minisgd`), as the builtin Kokkos-based packages (cabana,
    # arborx) run what they install: every class-S deck (installed with the program under
    # share/minisgd/input_decks) must end VALID against its reference at 1 and 2 ranks.
    def test_class_s_decks(self):
        """run every class-S deck at 1 and 2 MPI ranks: each must end VALID"""
        decks = sorted(glob.glob(join_path(self.prefix.share, "minisgd", "input_decks",
                                           "classes", "S", "*.yaml")))
        if not decks:
            raise InstallError(f"no class-S decks under {self.prefix.share}/minisgd/input_decks")
        mpiexec = which("mpiexec", "mpirun", path=self.spec["mpi"].prefix.bin, required=True)
        minisgd = self.prefix.bin.minisgd
        for deck in decks:
            name = os.path.basename(deck)[: -len(".yaml")]
            for ranks in (1, 2):
                with test_part(self, f"test_class_s_decks_{name}_np{ranks}",
                               purpose=f"class S {name} at {ranks} rank(s) ends VALID"):
                    # Exit 1 (INVALID) or any other failure raises; the report stays in the
                    # test stage directory.
                    out = mpiexec("-n", str(ranks), minisgd, deck,
                                  "--set", f"output.report=S-{name}.np{ranks}.json",
                                  "--set", "output.history=", output=str, error=str)
                    if not re.search(r"^VALID", out, re.M):
                        raise InstallError(f"{name} at {ranks} rank(s): no VALID line:\n{out}")
