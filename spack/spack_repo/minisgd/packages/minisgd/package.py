# Copyright the minisgd developers. SPDX-License-Identifier: BSD-3-Clause
import glob
import os
import re

from spack_repo.builtin.build_systems.cmake import CMakePackage
from spack_repo.builtin.build_systems.cuda import CudaPackage
from spack_repo.builtin.build_systems.rocm import ROCmPackage
from spack_repo.builtin.packages.kokkos.package import Kokkos

from spack.package import *


class Minisgd(CMakePackage, CudaPackage, ROCmPackage):
    """Kokkos-based mini-app for communication-efficient distributed SGD on generalized
    linear models: mixed-precision CA-SGD and compressed gradient AllReduce."""

    homepage = "https://example.org/minisgd"
    # A site points this at its own copy of the repository in packages.yaml:
    #   packages: {minisgd: {package_attributes: {git: "https://git.site/minisgd.git"}}}
    git = "https://example.org/minisgd.git"
    license("BSD-3-Clause")
    maintainers("minisgd-developers")

    version("main", branch="main")
    # Releases are git tags: a result names the version it was built from (the report's
    # `version` and `git_hash`). A release entry gains commit="<hash>" once it is tagged.
    version("0.2.0", tag="v0.2.0")

    # Kokkos' devices, one variant each as the builtin Kokkos-based packages (cabana) have
    # them; minisgd takes its backends from the Kokkos it is built with, so each one is
    # propagated to Kokkos below. cuda and rocm come from CudaPackage and ROCmPackage.
    # OpenMP is on by default: the CPU build of the app is MPI + OpenMP.
    _kokkos_devices = {
        dev: (True if dev == "openmp" else dflt, when, descr)
        for dev, (dflt, when, descr) in Kokkos.devices_variants.items()
        if dev not in ("cuda", "rocm")
    }
    for _dev, (_dflt, _when, _descr) in _kokkos_devices.items():
        variant(_dev, default=_dflt, description=_descr,
                when=f"^kokkos{_when}" if _when else None)
        depends_on(f"kokkos+{_dev}", when=f"+{_dev}")

    # Every optional part maps to one CMake option (docs/building.md); each can be absent.
    variant("nccl", default=True, when="+cuda", description="NCCL communicator")
    variant("cublas", default=True, when="+cuda", description="Gram products through cuBLAS")
    variant("onednn", default=False,
            description="bf16 Gram products through oneDNN (CPUs with AVX512-BF16)")
    # -march for minisgd's host code (MINISGD_ARCH): e.g. march=native on the compute node
    # itself. (Not "arch": Spack reserves that name for its own architecture triple.)
    # Spack's compiler wrappers already add the flags of the spec's target= (target=zen4 gives
    # -march=znver4), so "none" (the default) is right for most builds.
    variant("march", default="none", values=lambda v: True, multi=False,
            description="CPU architecture for -march (MINISGD_ARCH); none: the target's flags")
    # The host kernels' vector tiers (MINISGD_SIMD): auto compiles the generic, AVX2 and AVX-512
    # tiers where the compiler can, and each run takes the widest its CPU has; generic builds
    # the portable tier alone.
    variant("simd", default="auto", values=("auto", "generic"), multi=False,
            description="Host vector tiers (MINISGD_SIMD): auto, chosen at run time, or generic")
    variant("shared", default=False, description="Build libminisgd as a shared library")
    variant("tests", default=False, description="Build the GoogleTest suite")
    variant("benchmarks", default=False, description="Build the Google Benchmark programs")

    depends_on("cxx", type="build")
    depends_on("cmake@3.16:", type="build")
    depends_on("mpi")
    depends_on("kokkos@3.4:")
    depends_on("kokkos-kernels@3.4:")  # the builtin recipe pins it to the same Kokkos version
    depends_on("yaml-cpp")
    depends_on("cli11")
    depends_on("nlohmann-json")
    depends_on("random123")
    depends_on("xxhash")  # header only: data.hash_bits
    depends_on("googletest", when="+tests")  # linked into the test programs
    depends_on("benchmark", when="+benchmarks")
    depends_on("onednn", when="+onednn")

    # CUDA: Kokkos' CUDA backend for the one architecture asked for, built through
    # nvcc_wrapper (kokkos_cxx), with device lambdas (always on from Kokkos 5, a variant
    # before).
    depends_on("kokkos+cuda+wrapper", when="+cuda")
    requires("^kokkos+cuda_lambda", when="+cuda ^kokkos@:4",
             msg="minisgd's CUDA kernels are device lambdas: Kokkos 4 needs +cuda_lambda")
    # NCCL refuses cuda_arch=none: it gets the same architecture as Kokkos (without it the
    # concretizer would quietly turn +nccl off).
    for _arch in CudaPackage.cuda_arch_values:
        depends_on(f"kokkos+cuda cuda_arch={_arch}", when=f"+cuda cuda_arch={_arch}")
        depends_on(f"kokkos-kernels+cuda cuda_arch={_arch}", when=f"+cuda cuda_arch={_arch}")
        depends_on(f"nccl+cuda cuda_arch={_arch}", when=f"+nccl cuda_arch={_arch}")
    # Kokkos' CUDA backend is built for one architecture: +cuda cannot build without it (as in
    # the builtin Kokkos-based packages, e.g. cabana, arborx).
    conflicts("+cuda", when="cuda_arch=none", msg="+cuda needs cuda_arch=<sm> (e.g. cuda_arch=80)")
    # KokkosBlas::gemm (the same-precision Gram) through cuBLAS rather than Kokkos' own kernel.
    depends_on("kokkos-kernels+cublas", when="+cublas")
    depends_on("nccl", when="+nccl")

    # ROCm: Kokkos' HIP backend for the one AMD GPU target asked for (ROCmPackage refuses
    # amdgpu_target=none), compiled with hipcc. cuBLAS and NCCL have no HIP counterpart here:
    # the Gram products use Kokkos Kernels' gemm and the communicator MPI.
    for _target in ROCmPackage.amdgpu_targets:
        depends_on(f"kokkos+rocm amdgpu_target={_target}",
                   when=f"+rocm amdgpu_target={_target}")
    conflicts("+cuda", when="+rocm", msg="Kokkos has one GPU backend: +cuda or +rocm")

    def cmake_args(self):
        spec = self.spec
        args = [
            self.define_from_variant("BUILD_SHARED_LIBS", "shared"),
            self.define_from_variant("MINISGD_ENABLE_TESTS", "tests"),
            self.define_from_variant("MINISGD_ENABLE_BENCHMARKS", "benchmarks"),
            self.define_from_variant("MINISGD_ENABLE_DNNL", "onednn"),
            self.define_from_variant("MINISGD_ARCH", "march"),
            self.define_from_variant("MINISGD_SIMD", "simd"),
            self.define("MPIEXEC_EXECUTABLE", spec["mpi"].prefix.bin.mpiexec),
        ]
        if spec.satisfies("+cuda"):
            args.append(self.define("CMAKE_CXX_COMPILER", self["kokkos"].kokkos_cxx))
            args.append(self.define_from_variant("MINISGD_ENABLE_NCCL", "nccl"))
            args.append(self.define_from_variant("MINISGD_ENABLE_CUBLAS", "cublas"))
            args.append(self.define("CUDAToolkit_ROOT", spec["cuda"].prefix))
            if spec.satisfies("+nccl"):
                args.append(self.define("NCCL_ROOT", spec["nccl"].prefix))
        else:
            if spec.satisfies("+rocm"):
                args.append(self.define("CMAKE_CXX_COMPILER", spec["hip"].hipcc))
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
