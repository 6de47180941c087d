#include "minisgd/kernels/gram/gram.hpp"

#include <dlfcn.h>
#include <KokkosBlas3_gemm.hpp>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <type_traits>
#include <vector>

#include "minisgd/core/simd/tier.hpp"
#include "minisgd/kernels/gram/gram_dnnl.hpp"
#include "minisgd/kernels/host/host_kernels.hpp"
#include "minisgd/kernels/tuning.hpp"
#ifdef MINISGD_HAVE_CUBLAS
#include "minisgd/core/errors.hpp"
#include "minisgd/kernels/gram/cublas_kokkos.hpp"
#endif

namespace minisgd {

std::int64_t whole_gram_rows(GramPath p) {
#ifdef MINISGD_HAVE_CUBLAS
  if (p == GramPath::cublas) return kWholeGramRows;
#endif
  (void)p;
  return 0;
}

const char* name(GramPath p) {
  switch (p) {
    case GramPath::none: return "none";
    case GramPath::blas: return "blas";
    case GramPath::dnnl: return "dnnl";
    case GramPath::widened_blas: return "widened-blas";
    case GramPath::team: return "team";
    case GramPath::cublas: return "cublas";
    case GramPath::sparse: return "sparse";
  }
  return "?";
}

/// Host backends, exact sums: a work item is one tile, summed by the active tier's loop
/// (kernels/host/gram_tiles.hpp) in the team kernel's order, so with its bits.
template <class In, class Acc>
void gram_team_host(const Matrix<In>& Y, std::int64_t b, const Vector<Acc>& packed,
                    const std::vector<int>& host_items) {
  const auto tile = host::gram_tile_kernel<In, Acc>(simd::active_tier());
  const std::int64_t n = Y.extent(1), stride = Y.stride(0);
  const In* const y = Y.data();
  Acc* const out = packed.data();
  const int* const items = host_items.data();
  Kokkos::parallel_for(
      "minisgd::gram_team", Kokkos::RangePolicy<ExecSpace>(0, std::int64_t(host_items.size()) / 3),
      [=](const std::int64_t w) {
        const std::int64_t j = items[3 * w], r0 = std::int64_t(items[3 * w + 1]) * kGramTile;
        const std::int64_t c0 = std::int64_t(items[3 * w + 2]) * kGramTile, width = j * b;
        tile(y + (j * b + r0) * stride, y + c0 * stride, stride, n,
             int(kmin<std::int64_t>(kGramTile, b - r0)),
             int(kmin<std::int64_t>(kGramTile, width - c0)),
             out + gram_row_offset(j, b) + r0 * width + c0, width);
      });
}

template <class In, class Acc, class Round>
void gram_team(const Matrix<In>& Y, std::int64_t b, const Vector<Acc>& packed,
               const Round& accumulate) {
  const std::int64_t s = std::int64_t(Y.extent(0)) / b, n = Y.extent(1);
  if (s < 2) return;
  // Work items: (block row j, row tile, column tile) covering every b × jb block row.
  std::vector<int> host_items;
  const std::int64_t row_tiles = (b + kGramTile - 1) / kGramTile;
  for (std::int64_t j = 1; j < s; ++j)
    for (std::int64_t rt = 0; rt < row_tiles; ++rt)
      for (std::int64_t ct = 0; ct * kGramTile < j * b; ++ct)
        host_items.insert(host_items.end(), {int(j), int(rt), int(ct)});
  if constexpr (std::is_same_v<Round, precision::Exact> && kHostMemory) {
    gram_team_host(Y, b, packed, host_items);
    return;
  }
  const std::int64_t count = std::int64_t(host_items.size()) / 3;
  // Both LayoutRight, as host_items is laid out: a GPU's default layout is LayoutLeft, and
  // deep_copy cannot copy between layouts across memory spaces.
  Kokkos::View<int* [3], Kokkos::LayoutRight, MemSpace> items("minisgd::gram_items", count);
  Kokkos::deep_copy(
      items, Kokkos::View<const int* [3], Kokkos::LayoutRight, HostSpace,
                          Kokkos::MemoryTraits<Kokkos::Unmanaged>>(host_items.data(), count));

  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  using Team = Policy::member_type;
  using Scratch = Kokkos::View<Acc**, Kokkos::LayoutRight, ExecSpace::scratch_memory_space,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  const std::size_t scratch =
      2 * Scratch::shmem_size(kGramTile, kGramDepth) + Scratch::shmem_size(kGramTile, kGramTile);
  const Round round = accumulate;
  // A plain `if` on a constant: nvcc refuses a lambda whose first capture of a variable is
  // inside `if constexpr`; the branch not taken is removed all the same.
  constexpr bool exact = std::is_same_v<Round, precision::Exact>;
  // Threads take rows of the output tile, vector lanes its columns; each entry accumulates
  // over k in order, so the result does not depend on team or vector size, and the inner
  // loop runs along contiguous columns of Bᵀ and C (it vectorizes on CPUs: the emulated
  // rounding's path; exact sums on the host took gram_team_host above).
  Kokkos::parallel_for(
      "minisgd::gram_team",
      Policy(count, Kokkos::AUTO, Kokkos::AUTO).set_scratch_size(0, Kokkos::PerTeam(scratch)),
      KOKKOS_LAMBDA(const Team& team) {
        const std::int64_t j = items(team.league_rank(), 0);
        const std::int64_t r0 = std::int64_t(items(team.league_rank(), 1)) * kGramTile;
        const std::int64_t c0 = std::int64_t(items(team.league_rank(), 2)) * kGramTile;
        const std::int64_t width = j * b;  // columns of block row j
        const int rows = int(kmin<std::int64_t>(kGramTile, b - r0));
        const int cols = int(kmin<std::int64_t>(kGramTile, width - c0));
        Scratch A(team.team_scratch(0), kGramTile, kGramDepth);  // rows of Y_j
        Scratch Bt(team.team_scratch(0), kGramDepth,
                   kGramTile);  // rows of Y_0..Y_{j-1}, transposed
        Scratch C(team.team_scratch(0), kGramTile, kGramTile);
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, rows), [&](const int i) {
          Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, kGramTile),
                               [&](const int c) { C(i, c) = Acc(0); });
        });
        for (std::int64_t k0 = 0; k0 < n; k0 += kGramDepth) {
          const int kk = int(kmin<std::int64_t>(kGramDepth, n - k0));
          team.team_barrier();
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, kGramTile), [&](const int i) {
            Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, kk), [&](const int k) {
              A(i, k) = i < rows ? precision::convert<Acc>(Y(j * b + r0 + i, k0 + k)) : Acc(0);
              Bt(k, i) = i < cols ? precision::convert<Acc>(Y(c0 + i, k0 + k)) : Acc(0);
            });
          });
          team.team_barrier();
          // Full tile width (Bt is zero beyond `cols`): a fixed trip count the compiler unrolls.
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, rows), [&](const int i) {
            for (int k = 0; k < kk; ++k) {
              const Acc a = A(i, k);
              if (exact) {
                Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, kGramTile),
                                     [&](const int c) { C(i, c) += a * Bt(k, c); });
              } else {  // an emulated narrower accumulator: round after every addition
                Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, kGramTile),
                                     [&](const int c) { C(i, c) = round(C(i, c) + a * Bt(k, c)); });
              }
            }
          });
        }
        team.team_barrier();
        const std::int64_t out = gram_row_offset(j, b) + r0 * width + c0;
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, rows), [&](const int i) {
          Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, cols),
                               [&](const int c) { packed(out + i * width + c) = C(i, c); });
        });
      });
}

template <class In, class Acc>
void gram_team(const Matrix<In>& Y, std::int64_t b, const Vector<Acc>& packed,
               const precision::Rounder& accumulate) {
  precision::with_nearest_rounding<Acc>(accumulate,
                                        [&](const auto& round) { gram_team(Y, b, packed, round); });
}

namespace {

template <class T>
using Unmanaged =
    Kokkos::View<T**, Kokkos::LayoutRight, MemSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

/// Block rows [lo, hi) of Y, as a matrix of their rows.
template <class T>
auto block_rows(const Matrix<T>& Y, std::int64_t b, std::int64_t lo, std::int64_t hi) {
  return Kokkos::subview(Y, Kokkos::make_pair(lo * b, hi * b), Kokkos::ALL());
}

/// The strictly block-lower part of blocks [lo, hi): the rectangle of block rows [mid, hi) ×
/// block columns [lo, mid) as one GEMM, then both triangles the same way. One GEMM per block
/// row has only b rows, and the library packs its wide right-hand side for so few rows that
/// packing costs as much as the products; the rectangles hold half the products in one call.
/// A rectangle spanning several block rows (whose packed rows have different lengths) goes
/// through `scratch` and is copied into place.
template <class T>
void block_lower(const Matrix<T>& Y, std::int64_t b, T* packed, T* scratch, std::int64_t lo,
                 std::int64_t hi) {
  if (hi - lo < 2) return;
  const std::int64_t mid = lo + (hi - lo) / 2;
  const auto rows = block_rows(Y, b, mid, hi), cols = block_rows(Y, b, lo, mid);
  if (hi - mid == 1 && lo == 0) {  // one whole block row: straight into the packed layout
    KokkosBlas::gemm("N", "T", T(1), rows, cols, T(0),
                     Unmanaged<T>(packed + gram_row_offset(mid, b), b, mid * b));
  } else {
    const std::int64_t m = rows.extent(0), w = cols.extent(0);
    KokkosBlas::gemm("N", "T", T(1), rows, cols, T(0), Unmanaged<T>(scratch, m, w));
    for (std::int64_t r = 0; r < m; ++r) {
      const std::int64_t row = mid * b + r, j = row / b;
      std::copy_n(scratch + r * w, w,
                  packed + gram_row_offset(j, b) + (row - j * b) * j * b + lo * b);
    }
  }
  block_lower(Y, b, packed, scratch, lo, mid);
  block_lower(Y, b, packed, scratch, mid, hi);
}

}  // namespace

template <class T>
void gram_blas(const Matrix<T>& Y, std::int64_t b, const Vector<T>& packed) {
  const std::int64_t s = std::int64_t(Y.extent(0)) / b;
  if constexpr (Kokkos::SpaceAccessibility<HostSpace, MemSpace>::accessible) {
    // The largest rectangle: block rows [s/2, s) × block columns [0, s/2).
    const std::unique_ptr<T[]> scratch(new T[std::size_t((s - s / 2) * (s / 2) * b * b)]);
    block_lower(Y, b, packed.data(), scratch.get(), 0, s);
  } else {  // device BLAS: one GEMM per block row (no host copy loop)
    for (std::int64_t j = 1; j < s; ++j)
      KokkosBlas::gemm("N", "T", T(1), block_rows(Y, b, j, j + 1), block_rows(Y, b, 0, j), T(0),
                       Unmanaged<T>(packed.data() + gram_row_offset(j, b), b, j * b));
  }
}

void match_blas_threads() {
  [[maybe_unused]] static const bool once = [] {
    if (std::getenv("OPENBLAS_NUM_THREADS") || std::getenv("MKL_NUM_THREADS")) return true;
    using SetThreads = void (*)(int);
    const int threads = Kokkos::DefaultHostExecutionSpace().concurrency();
    for (const char* name : {"openblas_set_num_threads", "MKL_Set_Num_Threads"})
      if (auto set = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, name))) set(threads);
    return true;
  }();
}

BlockLowerGram::BlockLowerGram() {
  if constexpr (Kokkos::SpaceAccessibility<HostSpace, MemSpace>::accessible) {
    dnnl_ = DnnlGram::create();  // null without oneDNN or AVX512-BF16
    match_blas_threads();
  }
}

BlockLowerGram::~BlockLowerGram() = default;

std::string BlockLowerGram::dnnl_implementation() const {
  return dnnl_ ? dnnl_->implementation() : std::string();
}

std::string BlockLowerGram::dnnl_unavailable_reason() const {
  if (dnnl_) return "";
  if constexpr (!Kokkos::SpaceAccessibility<HostSpace, MemSpace>::accessible)
    return "oneDNN reads host memory; this build's Views live on the device";
  else
    return DnnlGram::unavailable_reason();
}

// A free function, not the member below: nvcc refuses a device lambda in a private member.
template <class In, class Acc>
void widen_rows(const Matrix<In>& Y, const Matrix<Acc>& out) {
  const std::int64_t n = Y.extent(1);
  Kokkos::parallel_for(
      "minisgd::gram_widen", Kokkos::RangePolicy<ExecSpace>(0, Y.extent(0)),
      KOKKOS_LAMBDA(const std::int64_t i) {
        for (std::int64_t c = 0; c < n; ++c) out(i, c) = precision::convert<Acc>(Y(i, c));
      });
}

template <class In, class Acc>
Matrix<Acc> BlockLowerGram::widened(const Matrix<In>& Y) {
  Matrix<Acc>& wide = [&]() -> Matrix<Acc>& {
    if constexpr (std::is_same_v<Acc, float>)
      return wide_fp32_;
    else
      return wide_fp64_;
  }();
  const std::int64_t rows = Y.extent(0), n = Y.extent(1);
  // An epoch's last outer step may have fewer rows: the buffer keeps its larger size.
  if (std::int64_t(wide.extent(0)) < rows || std::int64_t(wide.extent(1)) != n)
    wide = Matrix<Acc>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "minisgd::gram_widened"),
                       rows, n);
  const Matrix<Acc> out =
      Kokkos::subview(wide, Kokkos::make_pair(std::int64_t(0), rows), Kokkos::ALL());
  widen_rows(Y, out);
  return out;
}

template <class In, class Acc>
GramPath BlockLowerGram::compute(const Matrix<In>& Y, std::int64_t b, const Vector<Acc>& packed,
                                 const precision::Rounder& accumulate) {
#ifdef MINISGD_HAVE_CUBLAS
  // Same stream as the Kokkos kernels that formed Y (the default instance's): no fence.
  if (engine_ != GramEngine::portable && accumulate.identity &&
      gpu::cublas_gram_supported<In, Acc>(tf32_)) {
    gpu::cublas_block_lower_gram(Y, b, packed, tf32_);
    return GramPath::cublas;
  }
  if (engine_ == GramEngine::cublas)
    throw InputError(std::string("precision.gram_engine: cublas cannot form this Gram: ") +
                     (accumulate.identity
                          ? "no cuBLAS GEMM for these input and accumulation formats"
                          : "the accumulation format is emulated (rounded after every addition)"));
#endif
  // Below: the libraries sum exactly what was asked, in their own order.
  const bool library = engine_ != GramEngine::portable && accumulate.identity;
  if constexpr (std::is_same_v<In, Acc>) {
    if (library) {
      gram_blas(Y, b, packed);
      return GramPath::blas;
    }
  }
  if constexpr (std::is_same_v<In, precision::bf16> && std::is_same_v<Acc, float>) {
    if (dnnl_ && library) {
      sync_for_host("oneDNN reads the batch on the host");
      dnnl_->compute(Y.data(), Y.extent(0), Y.extent(1), Y.stride(0), b, packed.data());
      return GramPath::dnnl;
    }
  }
  // Every pair compiled below with In narrower than Acc multiplies exactly in Acc (2·24
  // significant bits into fp64's 53, 2·11 or 2·8 into fp32's 24) unless the product leaves
  // Acc's range, which the team kernel's Acc(a)·Acc(b) does too.
  if constexpr (sizeof(In) < sizeof(Acc)) {
    if (library) {
      gram_blas(widened<In, Acc>(Y), b, packed);
      return GramPath::widened_blas;
    }
  }
  gram_team(Y, b, packed, accumulate);
  return GramPath::team;
}

#define MINISGD_GRAM(In, Acc)                                                           \
  template void gram_team<In, Acc>(const Matrix<In>&, std::int64_t, const Vector<Acc>&, \
                                   const precision::Rounder&);                          \
  template GramPath BlockLowerGram::compute<In, Acc>(                                   \
      const Matrix<In>&, std::int64_t, const Vector<Acc>&, const precision::Rounder&);
MINISGD_GRAM(double, double)
MINISGD_GRAM(double, float)
MINISGD_GRAM(float, double)
MINISGD_GRAM(float, float)
MINISGD_GRAM(precision::bf16, double)
MINISGD_GRAM(precision::bf16, float)
MINISGD_GRAM(precision::fp16, double)
MINISGD_GRAM(precision::fp16, float)
#undef MINISGD_GRAM

template void gram_blas<float>(const Matrix<float>&, std::int64_t, const Vector<float>&);
template void gram_blas<double>(const Matrix<double>&, std::int64_t, const Vector<double>&);

}  // namespace minisgd
