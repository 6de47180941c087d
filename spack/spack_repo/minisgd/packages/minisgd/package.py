# Copyright the minisgd developers. SPDX-License-Identifier: BSD-3-Clause
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

    version("main", branch="main")

    variant("openmp", default=True, description="Kokkos OpenMP backend")
    variant("nccl", default=True, when="+cuda", description="NCCL communicator")
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
    depends_on("googletest", when="+tests", type=("build", "test"))
    depends_on("benchmark", when="+benchmarks")

    # Backends are Kokkos' business: propagate them, as the builtin Kokkos packages do.
    depends_on("kokkos+openmp", when="+openmp")
    depends_on("kokkos+cuda+cuda_lambda+wrapper", when="+cuda")
    depends_on("kokkos-kernels+cublas", when="+cuda")
    depends_on("nccl", when="+nccl")
    for arch in CudaPackage.cuda_arch_values:
        depends_on(f"kokkos cuda_arch={arch}", when=f"+cuda cuda_arch={arch}")

    def cmake_args(self):
        spec = self.spec
        args = [
            self.define_from_variant("MINISGD_ENABLE_TESTS", "tests"),
            self.define_from_variant("MINISGD_ENABLE_BENCHMARKS", "benchmarks"),
            self.define("MPIEXEC_EXECUTABLE", spec["mpi"].prefix.bin.mpiexec),
        ]
        if spec.satisfies("+cuda"):
            args.append(self.define("CMAKE_CXX_COMPILER", spec["kokkos"].kokkos_cxx))
            args.append(self.define_from_variant("MINISGD_ENABLE_NCCL", "nccl"))
            args.append(self.define("MINISGD_ENABLE_CUBLAS", True))
            args.append(self.define("CUDAToolkit_ROOT", spec["cuda"].prefix))
            if spec.satisfies("+nccl"):
                args.append(self.define("NCCL_ROOT", spec["nccl"].prefix))
        return args
