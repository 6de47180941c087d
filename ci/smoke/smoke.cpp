// Checks parallel_reduce and (optionally) KokkosBlas::gemv/gemm against
// host loops on the default execution space; exits non-zero on a mismatch.
#include <Kokkos_Core.hpp>
#include <cmath>
#include <cstdio>
#ifdef SMOKE_KERNELS
#include <KokkosBlas2_gemv.hpp>
#include <KokkosBlas3_gemm.hpp>
#include <KokkosKernels_config.h>
#endif

int main(int argc, char* argv[]) {
  int failures = 0;
  Kokkos::initialize(argc, argv);
  {
    using Exec = Kokkos::DefaultExecutionSpace;
    std::printf("Kokkos %d, default space %s, concurrency %d\n", KOKKOS_VERSION,
                Exec::name(), Exec::concurrency());

    const int n = 1000000;
    double sum = 0.0;
    Kokkos::parallel_reduce(
        "sum", Kokkos::RangePolicy<Exec>(0, n),
        KOKKOS_LAMBDA(const int i, double& s) { s += double(i); }, sum);
    const double expect = 0.5 * double(n) * double(n - 1);
    if (sum != expect) {
      std::printf("parallel_reduce: %.17g != %.17g\n", sum, expect);
      ++failures;
    }

#ifdef SMOKE_KERNELS
#ifdef KOKKOSKERNELS_ENABLE_TPL_BLAS
    std::printf("KokkosKernels BLAS TPL: on\n");
#else
    std::printf("KokkosKernels BLAS TPL: off\n");
#endif
    const int m = 37, k = 23, p = 11;
    Kokkos::View<double**, Kokkos::LayoutLeft, Exec> A("A", m, k), B("B", k, p), C("C", m, p);
    Kokkos::View<double*, Exec> x("x", k), y("y", m);
    Kokkos::View<float**, Kokkos::LayoutRight, Exec> Af("Af", m, k);
    Kokkos::View<float*, Exec> xf("xf", k), yf("yf", m);
    Kokkos::parallel_for(
        "fill", Kokkos::RangePolicy<Exec>(0, m), KOKKOS_LAMBDA(const int i) {
          for (int j = 0; j < k; ++j) {
            A(i, j) = 1.0 / (1 + i + 2 * j);
            Af(i, j) = float(A(i, j));
          }
          if (i < k) {
            x(i) = 1.0 + i;
            xf(i) = float(x(i));
            for (int j = 0; j < p; ++j) B(i, j) = double(i - j);
          }
        });
    KokkosBlas::gemv("N", 2.0, A, x, 0.0, y);      // y = 2 A x
    KokkosBlas::gemv("N", 2.0f, Af, xf, 0.0f, yf);  // float, LayoutRight
    KokkosBlas::gemm("N", "N", 1.0, A, B, 0.0, C);  // C = A B
    Kokkos::fence();

    auto hA = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), A);
    auto hB = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), B);
    auto hC = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), C);
    auto hx = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), x);
    auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
    auto hyf = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), yf);
    double err_gemv = 0, err_gemvf = 0, err_gemm = 0;
    for (int i = 0; i < m; ++i) {
      double r = 0;
      for (int j = 0; j < k; ++j) r += 2.0 * hA(i, j) * hx(j);
      err_gemv = std::fmax(err_gemv, std::fabs(hy(i) - r) / std::fabs(r));
      err_gemvf = std::fmax(err_gemvf, std::fabs(double(hyf(i)) - r) / std::fabs(r));
      for (int c = 0; c < p; ++c) {
        double g = 0;
        for (int j = 0; j < k; ++j) g += hA(i, j) * hB(j, c);
        err_gemm = std::fmax(err_gemm, std::fabs(hC(i, c) - g));
      }
    }
    std::printf("gemv rel err %.3g (double), %.3g (float); gemm abs err %.3g\n", err_gemv,
                err_gemvf, err_gemm);
    if (!(err_gemv < 1e-13 && err_gemvf < 1e-5 && err_gemm < 1e-12)) ++failures;
#endif
  }
  Kokkos::finalize();
  std::printf(failures ? "SMOKE FAILED\n" : "SMOKE OK\n");
  return failures ? 1 : 0;
}
