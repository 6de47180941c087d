#pragma once
// The kernels of one mini-batch SGD step on the batch of b rows starting at local row
// `first` (rows of the row-major local matrix, so a batch is one contiguous block):
// margins z = X_B w, derivatives u = ℓ'(z; y) and the gradient product g = X_Bᵀ u.
// X is stored as S (double, float, bf16, fp16); every sum, z, u, g and w are in A.
// The loss is a template parameter: kernels are compiled per loss (with_loss dispatches
// once per step), nothing switches on it per element.
//
// Fixed reduction order, so the bits do not depend on the thread count or the path taken:
// a margin is summed in kLanes interleaved partial sums added in a fixed tree; a gradient
// entry is the sum, chunk after chunk, of the batch's chunks of kChunk rows, each chunk's
// rows summed in row order from zero.
//
// Host backends, at most one launch (fused_pass): each chunk of kChunk rows (in
// L1/L2) is read from memory once by its margins, its derivatives are one loop over its rows
// (the compiler vectorizes it: loss_derivative is branch-free, its exp polynomial), its share
// of the gradient rereads it from cache, a block of kHostCols columns at a time with the
// block's sums in registers. Threads take whole chunks; with several, each chunk's share goes
// to a buffer and the shares are added in chunk order after the launch. On the calling thread
// a plain loop over the chunks (grouped_pass), where rows of a few hundred bytes have the
// margins of a group of chunks summed in one pass before the chunks' gradients: the same
// additions in the same order. Short rows vectorize too (sgd_host_rows.hpp); with AVX-512 a
// margin's partial sums are one register (with AVX2 two), and bf16/fp16 are widened in
// registers, so narrow storage is read once from memory and never copied.
// Devices: a warp per short row, a team per long one for the margins (device_row_dots); for
// the gradient a team per 32 columns, its warps summing consecutive chunks at once and the team
// adding their sums in chunk order (device_chunk_sums): the host's additions in the host's
// order, so the same bits.
#include <cstdint>
#include <type_traits>
#include <vector>

#include "minisgd/core/kokkos.hpp"
#include "minisgd/core/launch.hpp"
#include "minisgd/core/profiling.hpp"
#include "minisgd/kernels/sgd_host_rows.hpp"
#include "minisgd/models/loss.hpp"
#include "minisgd/precision/storage_types.hpp"
#include "minisgd/precision/widen.hpp"

namespace minisgd {

namespace sgd_detail {

/// Device teams: a warp of kDeviceLanes vector lanes reads 32 consecutive values of a row (one
/// coalesced load); a team has kDeviceWarps of them.
constexpr int kDeviceLanes = 32;
constexpr int kDeviceWarps = 8;

constexpr bool host_backend = kHostMemory;

// The host's vector registers (MINISGD_ARCH, docs/building.md). They set only how the host
// kernels block their loops, never the order of a sum: the bits are the same for every width.
#if defined(__AVX512F__)
constexpr int kHostVectorBytes = 64;
#elif defined(__AVX__)
constexpr int kHostVectorBytes = 32;
#else
constexpr int kHostVectorBytes = 16;
#endif
/// Columns of one host gradient block: 8 vector registers of sums, enough independent
/// dependency chains to hide the latency of the additions.
template <class A>
constexpr int kHostCols = 8 * kHostVectorBytes / int(sizeof(A));

/// Rows per host work item: a chunk of the batch stays in L1/L2 between its passes.
constexpr std::int64_t kChunk = 32;

/// Rows of at least kGroupRowBytes have the margins of up to kMaxGroup chunks, at most
/// kGroupBytes of rows, summed in one pass before each chunk's gradient rereads its rows from
/// L2: one longer stream from memory where chunk by chunk it stopped after every chunk while
/// the gradient ran from L1 (fp32 at 96-512 columns, b 64-1024: 0.76-0.93 of the time chunk by
/// chunk). Shorter rows keep a chunk at a time: their step is bound by its arithmetic and
/// rereads from L1 (fp32 at 28 columns, b 256: 1.1-1.2 of the time in groups of 4-8 chunks);
/// at 2000 columns a chunk is already a long stream (256 KB).
constexpr std::int64_t kGroupRowBytes = 384;
constexpr std::int64_t kGroupBytes = 128 * 1024;
constexpr std::int64_t kMaxGroup = 8;

/// Chunks a margins pass takes together for rows of `row_bytes`: a power of two, 1 to kMaxGroup.
constexpr std::int64_t margins_group(std::int64_t row_bytes) {
  std::int64_t group = 1;
  if (row_bytes < kGroupRowBytes) return group;
  while (group < kMaxGroup && 2 * group * kChunk * row_bytes <= kGroupBytes) group *= 2;
  return group;
}

/// Storage the host loops read widened to float (bf16, fp16, … unless the AVX-512 loops widen
/// it in registers), not element by element.
template <class S, class A>
constexpr bool widened = !reads_directly<A, S>;

/// At least `size` floats for the host loops' widened rows (the launching thread's
/// widening_scratch); nullptr when S needs none.
template <class S, class A>
inline float* widening_buffer(std::int64_t size) {
  if constexpr (!widened<S, A>)
    return nullptr;
  else
    return widening_scratch(size);
}

/// Rows [row, row + rows) of X widened into `buffer` from its row `slot` on (n floats a row)
/// when X is narrow, so that the margins and the gradient both read floats from cache; nothing
/// where the loops read X directly. Widening is exact: the same products and bits as element
/// by element.
template <class A, class S>
inline void widen_rows(const Matrix<S>& X, std::int64_t row, std::int64_t rows, float* buffer,
                       std::int64_t slot) {
  if constexpr (widened<S, A>) {
    const std::int64_t n = X.extent(1);
    for (std::int64_t i = 0; i < rows; ++i)
      precision::widen(&X(row + i, 0), buffer + (slot + i) * n, n);
  }
}

/// Where the host loops read row `row` of X and the rows after it (stride n): X itself when
/// they read it directly, else `buffer` from its row `slot` on, where widen_rows put them.
template <class A, class S>
inline auto host_rows(const Matrix<S>& X, std::int64_t row, float* buffer, std::int64_t slot) {
  if constexpr (widened<S, A>)
    return static_cast<const float*>(buffer + slot * X.extent(1));
  else
    return static_cast<const S*>(&X(row, 0));
}

/// The first row of X of a single batch: the batch layout of SGD's step for the device kernels,
/// which take CA-SGD's s batches (BatchRows) alike.
struct OneBatch {
  std::int64_t first;
  KOKKOS_INLINE_FUNCTION std::int64_t operator()(std::int64_t) const { return first; }
};

/// Rows at most this long get a warp each on devices (4 values a lane); longer ones a team.
/// On an H100, s·b = 512 rows: 28 columns 12–14 µs a warp per row, 16 µs a team per row; 500
/// columns 20–22 against 17 µs; 2000 columns 40–42 against 22 µs.
constexpr int kDeviceWarpRow = 4 * kDeviceLanes;

/// Devices: r(q) = x_q·w for the `rows` rows q of batches of b rows, batch j starting at row
/// first(j) of X. Short rows: a warp per row, each lane summing every 32nd column and the warp
/// adding the lanes' sums; long rows: a team per row, the team adding its threads' sums (Kokkos'
/// reductions: a fixed order for a given team shape).
template <class S, class A, class First>
void device_row_dots(const char* name, const Matrix<S>& X, const First& first, std::int64_t b,
                     std::int64_t rows, const Vector<A>& w, const Vector<A>& r) {
  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  using Team = typename Policy::member_type;
  const int n = int(X.extent(1));
  if (n > kDeviceWarpRow) {
    Kokkos::parallel_for(
        name, Policy(rows, Kokkos::AUTO), KOKKOS_LAMBDA(const Team& team) {
          const std::int64_t q = team.league_rank(), row = first(q / b) + q % b;
          A sum = 0;
          Kokkos::parallel_reduce(
              Kokkos::TeamThreadRange(team, n),
              [&](const int c, A& acc) { acc += precision::convert<A>(X(row, c)) * w(c); }, sum);
          Kokkos::single(Kokkos::PerTeam(team), [&]() { r(q) = sum; });
        });
    return;
  }
  Kokkos::parallel_for(
      name, Policy((rows + kDeviceWarps - 1) / kDeviceWarps, kDeviceWarps, kDeviceLanes),
      KOKKOS_LAMBDA(const Team& team) {
        const std::int64_t q0 = std::int64_t(team.league_rank()) * kDeviceWarps;
        Kokkos::parallel_for(
            Kokkos::TeamThreadRange(team, kmin<std::int64_t>(kDeviceWarps, rows - q0)),
            [&](const std::int64_t k) {
              const std::int64_t q = q0 + k, row = first(q / b) + q % b;
              A sum = 0;
              Kokkos::parallel_reduce(
                  Kokkos::ThreadVectorRange(team, n),
                  [&](const int c, A& acc) { acc += precision::convert<A>(X(row, c)) * w(c); },
                  sum);
              Kokkos::single(Kokkos::PerThread(team), [&]() { r(q) = sum; });
            });
      });
}

/// Devices: g(c) = Σ_q X(row q, c)·weight(q) over `batches` batches of b rows (batch j from row
/// first(j) of X; q counts the rows batch after batch), in the host's order: each batch's chunks
/// of kChunk rows summed from zero in row order, the chunks' sums added in order. A team owns
/// kDeviceLanes columns, a lane each; in each round its warps sum kDeviceWarps consecutive
/// chunks at once (a full chunk's 32 rows unrolled: 32 loads in flight a lane) into scratch,
/// then the team adds them, in chunk order, to its running sums. weight(q) is evaluated once a
/// round per row, into scratch.
template <class S, class A, class First, class Weight>
void device_chunk_sums(const char* name, const Matrix<S>& X, const First& first, std::int64_t b,
                       std::int64_t batches, const Weight& weight, const Vector<A>& g) {
  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  using Team = typename Policy::member_type;
  using Scratch = Kokkos::View<A*, typename ExecSpace::scratch_memory_space,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  constexpr int W = kDeviceWarps, L = kDeviceLanes;
  constexpr std::int64_t R = kChunk;
  const int n = int(g.extent(0));
  const std::int64_t per_batch = (b + R - 1) / R, chunks = batches * per_batch;
  const std::int64_t rounds = (chunks + W - 1) / W;
  const std::size_t bytes =
      Scratch::shmem_size(W * R) + Scratch::shmem_size(W * L) + Scratch::shmem_size(L);
  Kokkos::parallel_for(
      name, Policy((n + L - 1) / L, W, L).set_scratch_size(0, Kokkos::PerTeam(bytes)),
      KOKKOS_LAMBDA(const Team& team) {
        Scratch u(team.team_scratch(0), W * R), part(team.team_scratch(0), W * L),
            sum(team.team_scratch(0), L);
        const int c0 = team.league_rank() * L, width = kmin(L, n - c0);
        Kokkos::parallel_for(Kokkos::TeamVectorRange(team, width),
                             [&](const int c) { sum(c) = A(0); });
        for (std::int64_t t = 0; t < rounds; ++t) {
          const int here = int(kmin<std::int64_t>(W, chunks - t * W));
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, here), [&](const int k) {
            const std::int64_t chunk = t * W + k, r0 = chunk % per_batch * R;
            const std::int64_t q0 = chunk / per_batch * b + r0;
            Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, kmin(R, b - r0)),
                                 [&](const std::int64_t i) { u(k * R + i) = weight(q0 + i); });
          });
          team.team_barrier();
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, here), [&](const int k) {
            const std::int64_t chunk = t * W + k, r0 = chunk % per_batch * R;
            const std::int64_t rows = kmin(R, b - r0), row = first(chunk / per_batch) + r0;
            Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, width), [&](const int c) {
              A p = 0;
              if (rows == R) {
                for (std::int64_t i = 0; i < R; ++i)
                  p += precision::convert<A>(X(row + i, c0 + c)) * u(k * R + i);
              } else {
                for (std::int64_t i = 0; i < rows; ++i)
                  p += precision::convert<A>(X(row + i, c0 + c)) * u(k * R + i);
              }
              part(k * L + c) = p;
            });
          });
          team.team_barrier();
          // The next round writes u before its first barrier, part after it: the team's adds
          // below finish before either is overwritten.
          Kokkos::parallel_for(Kokkos::TeamVectorRange(team, width), [&](const int c) {
            A acc = sum(c);
            for (int k = 0; k < here; ++k) acc += part(k * L + c);
            sum(c) = acc;
          });
        }
        team.team_barrier();
        Kokkos::parallel_for(Kokkos::TeamVectorRange(team, width),
                             [&](const int c) { g(c0 + c) = sum(c); });
      });
}

/// The loss derivatives of SGD's batch, u_i = ℓ'(z_i; y_{first+i}), the weights of its gradient.
template <Loss L, class A>
struct Derivatives {
  Vector<A> z;
  Vector<double> y;
  std::int64_t first;
  KOKKOS_INLINE_FUNCTION A operator()(std::int64_t i) const {
    return loss_derivative<L>(z(i), A(y(first + i)));
  }
};

}  // namespace sgd_detail

/// z(i) = x_{first+i}·w for the batch (the column decomposition's partial margins).
template <class S, class A>
void sgd_margins(const Matrix<S>& X, std::int64_t first, const Vector<A>& w, const Vector<A>& z) {
  [[maybe_unused]] const int n = int(X.extent(1));  // (named before the constexpr-if: nvcc)
  const std::int64_t b = z.extent(0);
  if constexpr (sgd_detail::host_backend) {
    using sgd_detail::kChunk;
    float* const buffer = sgd_detail::widening_buffer<S, A>(b * n);
    for_each_index(
        "minisgd::sgd_margins", (b + kChunk - 1) / kChunk, b * n * std::int64_t(sizeof(S)),
        KOKKOS_LAMBDA(const std::int64_t chunk) {
          const std::int64_t r0 = chunk * kChunk, rows = kmin(kChunk, b - r0);
          sgd_detail::widen_rows<A>(X, first + r0, rows, buffer, r0);
          const auto* x = sgd_detail::host_rows<A>(X, first + r0, buffer, r0);
          sgd_detail::rows_dot(x, n, w.data(), n, rows, &z(r0));
        });
  } else {
    sgd_detail::device_row_dots("minisgd::sgd_margins", X, sgd_detail::OneBatch{first}, b, b, w, z);
  }
}

namespace sgd_detail {

/// g[c0 .. c0+width) += Σ_{i in rows} x_i[c]·u_i, in row order, the block held in registers.
/// A full block has a compile-time width, so the compiler keeps its sums in registers (the
/// AVX-512 and AVX2 loops take every width, with explicit registers).
template <class S, class A>
KOKKOS_FORCEINLINE_FUNCTION void add_rows(const S* x0, std::int64_t stride, const A* u,
                                          std::int64_t rows, A* g, int width) {
  constexpr int kCols = kHostCols<A>;
  if (width == kCols && !avx512_rows<A, S> && !avx_rows<A, S>) {
    A acc[kCols];
    for (int c = 0; c < kCols; ++c) acc[c] = g[c];
    for (std::int64_t i = 0; i < rows; ++i) add_row(x0 + i * stride, u[i], acc, kCols);
    for (int c = 0; c < kCols; ++c) g[c] = acc[c];
    return;
  }
  add_rows_narrow<kCols>(x0, stride, u, rows, g, width);
}

/// The margins (unless given) and derivatives of `rows` rows x (stride n) from batch row r0:
/// loops over rows that the compiler vectorizes (loss_derivative is branch-free).
template <Loss L, class T, class A>
inline void chunk_derivatives(const T* x, int n, const Vector<double>& y, std::int64_t first,
                              const Vector<A>& w, const Vector<A>& z, bool margins_given,
                              const Vector<A>& u, std::int64_t r0, std::int64_t rows) {
  A* zc = &z(r0);
  A* uc = &u(r0);
  const double* yc = &y(first + r0);
  if (!margins_given) rows_dot(x, n, w.data(), n, rows, zc);
  for (std::int64_t i = 0; i < rows; ++i) uc[i] = loss_derivative<L>(zc[i], A(yc[i]));
}

/// Values of A per 64-byte cache line, and the pitch of a row of n partial sums: rows start
/// on a line, so the vector loops over them never split one.
template <class A>
constexpr std::int64_t kLineValues = 64 / std::int64_t(sizeof(A));
template <class A>
constexpr std::int64_t partials_pitch(std::int64_t n) {
  return (n + kLineValues<A> - 1) / kLineValues<A> * kLineValues<A>;
}

/// At least `size` values of A, 64-byte aligned, for the chunks' partial gradients: the
/// launching thread's buffer, kept between steps (it only grows).
template <class A>
inline A* partials_scratch(std::int64_t size) {
  struct alignas(64) Line {
    A v[kLineValues<A>];
  };
  thread_local std::vector<Line> buffer;
  const std::int64_t lines = kmax<std::int64_t>(1, (size + kLineValues<A> - 1) / kLineValues<A>);
  if (std::int64_t(buffer.size()) < lines) buffer.resize(std::size_t(lines));
  return buffer.front().v;
}

/// One chunk's share of the gradient, p[c] = Σ_{i in rows} x_i[c]·u_i from zero in row order
/// (rows `stride` elements apart), block by block of kHostCols columns; added into g (one
/// thread: g[c] += p[c] block by block) or stored in p (several threads: the fold comes later).
template <bool kAddIntoG, class T, class A>
inline void chunk_gradient(const T* x, std::int64_t stride, int n, const A* u, std::int64_t rows,
                           A* p) {
  for (int c0 = 0; c0 < n; c0 += kHostCols<A>) {
    const int width = kmin(kHostCols<A>, n - c0);
    if constexpr (kAddIntoG) {
      A block[kHostCols<A>] = {};
      add_rows(x + c0, stride, u, rows, block, width);
      for (int c = 0; c < width; ++c) p[c0 + c] += block[c];
    } else {
      for (int c = 0; c < width; ++c) p[c0 + c] = A(0);
      add_rows(x + c0, stride, u, rows, p + c0, width);
    }
  }
}

/// g[0..n) = the shares of `chunks` chunks added in chunk order, made kGroup consecutive chunks
/// at a time by share(k, count, p, pitch, into_g) for chunks k .. k + count − 1 (count ≤ kGroup):
/// added one after the other into p = g when into_g (std::true_type), else each stored from
/// zero, chunk k + j's at p + j·pitch (std::false_type), so each caller compiles both variants
/// without a run-time test. Fewer than two chunks, or work under kCallingThreadBytes: the calling
/// thread walks the groups in order (no launch: even a team of one thread costs ≈ 0.5 µs to
/// start with OpenMP). Otherwise one launch in which threads take groups in any order, each
/// chunk's share going to its own row of the calling thread's partials, which that thread then
/// adds to g in chunk order: the same additions in the same order, so the same bits for any
/// thread count and any kGroup. `name` names the launch or region.
template <int kGroup, class A, class Share>
void sum_of_chunk_groups(const char* name, std::int64_t chunks, std::int64_t bytes, int n, A* g,
                         const Share& share) {
  const auto count = [chunks](std::int64_t k) {
    return int(kmin<std::int64_t>(kGroup, chunks - k));
  };
  const std::int64_t pitch = partials_pitch<A>(n);
  if (chunks < 2 || on_calling_thread(bytes)) {
    for (int c = 0; c < n; ++c) g[c] = A(0);
    Region region(name);  // (its name copied only when a tool listens)
    for (std::int64_t k = 0; k < chunks; k += kGroup)
      share(k, count(k), g, pitch, std::true_type{});
    return;
  }
  A* const partials = partials_scratch<A>(chunks * pitch);
  Kokkos::parallel_for(
      name, Kokkos::RangePolicy<ExecSpace>(0, (chunks + kGroup - 1) / kGroup),
      KOKKOS_LAMBDA(const std::int64_t i) {
        share(i * kGroup, count(i * kGroup), partials + i * kGroup * pitch, pitch,
              std::false_type{});
      });
  sync_for_host(name);
  for (int c = 0; c < n; ++c) g[c] = A(0);
  for (std::int64_t k = 0; k < chunks; ++k)
    for (int c = 0; c < n; ++c) g[c] += partials[k * pitch + c];
}

/// sum_of_chunk_groups a chunk at a time: share(k, p, into_g) makes chunk k's share.
template <class A, class Share>
void sum_of_chunks(const char* name, std::int64_t chunks, std::int64_t bytes, int n, A* g,
                   const Share& share) {
  sum_of_chunk_groups<1>(name, chunks, bytes, n, g,
                         [&](const std::int64_t k, int, A* const p, std::int64_t, auto into_g) {
                           share(k, p, into_g);
                         });
}

/// Host, on the calling thread, rows read directly (not widened): the margins and derivatives
/// of a group of chunks (margins_group) in one pass, then each chunk's share of the gradient
/// rereading its rows from cache, added into g in chunk order: the additions of fused_pass
/// chunk by chunk, in the same order, so the same bits. A group of long rows first touches the
/// pages of the next one; short rows touch none (fp32 at 28 columns, b 256: 0.68-0.96 of the
/// roofline against 0.62-0.77 through sum_of_chunks with the touches).
template <Loss L, class S, class A>
void grouped_pass(const Matrix<S>& X, std::int64_t first, const Vector<double>& y,
                  const Vector<A>& w, const Vector<A>& z, const Vector<A>& u, const Vector<A>& g) {
  const int n = int(X.extent(1));
  const std::int64_t row_bytes = n * std::int64_t(sizeof(S));
  const std::int64_t b = z.extent(0), group_rows = margins_group(row_bytes) * kChunk;
  const bool long_rows = row_bytes >= kGroupRowBytes;
  Region region("minisgd::sgd_fused_step");  // (its name copied only when a tool listens)
  A* const gp = g.data();
  for (int c = 0; c < n; ++c) gp[c] = A(0);
  for (std::int64_t r0 = 0; r0 < b; r0 += group_rows) {
    const std::int64_t rows = kmin(group_rows, b - r0);
    if (long_rows && r0 + rows < b)  // the next group's pages
      touch_pages(X.data() + (first + r0 + rows) * n,
                  X.data() + (first + kmin(b, r0 + rows + group_rows)) * n);
    chunk_derivatives<L>(&X(first + r0, 0), n, y, first, w, z, false, u, r0, rows);
    for (std::int64_t c0 = r0; c0 < r0 + rows; c0 += kChunk)
      chunk_gradient<true>(&X(first + c0, 0), n, n, &u(c0), kmin(kChunk, b - c0), gp);
  }
}

/// Host: each chunk of kChunk rows is read once from memory (widened once into the thread's
/// buffer when narrow, unless the loops widen it in registers); its margins (unless given) and
/// derivatives, then its share of the gradient from cache, summed over the chunks by
/// sum_of_chunks (the same bits for any thread count). Each chunk first touches the pages of
/// the next one (touch_pages). Rows read directly take grouped_pass on the calling thread.
template <Loss L, class S, class A>
void fused_pass(const Matrix<S>& X, std::int64_t first, const Vector<double>& y, const Vector<A>& w,
                const Vector<A>& z, bool margins_given, const Vector<A>& u, const Vector<A>& g) {
  const int n = int(X.extent(1));
  const std::int64_t b = z.extent(0), chunks = (b + kChunk - 1) / kChunk;
  const std::int64_t bytes = b * n * std::int64_t(sizeof(S));
  if constexpr (!widened<S, A>) {
    if (!margins_given && chunks > 1 && on_calling_thread(bytes))
      return grouped_pass<L>(X, first, y, w, z, u, g);
  }
  sum_of_chunks("minisgd::sgd_fused_step", chunks, bytes, n, g.data(),
                [&](const std::int64_t k, A* const p, auto into_g) {
                  const std::int64_t r0 = k * kChunk, rows = kmin(kChunk, b - r0);
                  if (r0 + rows < b)  // the next chunk's pages
                    touch_pages(X.data() + (first + r0 + rows) * n,
                                X.data() + (first + kmin(b, r0 + rows + kChunk)) * n);
                  float* const buffer = widening_buffer<S, A>(kChunk * n);
                  widen_rows<A>(X, first + r0, rows, buffer, 0);
                  const auto* x = host_rows<A>(X, first + r0, buffer, 0);
                  chunk_derivatives<L>(x, n, y, first, w, z, margins_given, u, r0, rows);
                  chunk_gradient<decltype(into_g)::value>(x, n, n, &u(r0), rows, p);
                });
}

}  // namespace sgd_detail

/// g = Σ_i ℓ'(z_i; y_i)·x_i over the batch of z.extent(0) rows starting at `first`. The
/// margins z are computed here (row decomposition) unless `margins_given` (column
/// decomposition: z already holds the summed margins). u receives the derivatives on host
/// backends. Launches: on host backends 1 for a batch of at least kThreadedBytes on several
/// threads, else none (the calling thread); on devices 2 (margins, gradient).
template <Loss L, class S, class A>
void sgd_gradient(const Matrix<S>& X, std::int64_t first, const Vector<double>& y,
                  const Vector<A>& w, const Vector<A>& z, bool margins_given, const Vector<A>& u,
                  const Vector<A>& g) {
  if constexpr (sgd_detail::host_backend) {
    sgd_detail::fused_pass<L>(X, first, y, w, z, margins_given, u, g);
  } else {
    if (!margins_given) sgd_margins(X, first, w, z);
    sgd_detail::device_chunk_sums("minisgd::sgd_gradient", X, sgd_detail::OneBatch{first},
                                  z.extent(0), 1, sgd_detail::Derivatives<L, A>{z, y, first}, g);
  }
}

}  // namespace minisgd
