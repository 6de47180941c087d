#pragma once
// The device forms of the SGD and CA-SGD row kernels: margins by warps or teams
// (device_row_dots) and gradient products by teams of warps (device_chunk_sums), in the
// host's order where the host fixes one (kChunkRows chunks added in order), so the same bits.
#include <cstdint>

#include "minisgd/core/kokkos.hpp"
#include "minisgd/kernels/tuning.hpp"
#include "minisgd/models/loss.hpp"
#include "minisgd/precision/storage_types.hpp"

namespace minisgd::device {

/// The first row of X of a single batch: the batch layout of SGD's step for the device kernels,
/// which take CA-SGD's s batches (BatchRows) alike.
struct OneBatch {
  std::int64_t first;
  KOKKOS_INLINE_FUNCTION std::int64_t operator()(std::int64_t) const { return first; }
};

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
  if (n > kDeviceWarpRowValues) {
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
/// of kChunkRows rows summed from zero in row order, the chunks' sums added in order. A team owns
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
  constexpr std::int64_t R = kChunkRows;
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

}  // namespace minisgd::device
