#pragma once
// A machine as the performance model sees it (docs/performance_model.md): per-rank memory
// bandwidth and kernel rates (γ), the network's latency and bandwidth (α, β). Read from a YAML
// file under perf/machines/; `perf/calibrate` writes one for the machine it runs on.
#include <array>
#include <string>
#include <utility>
#include <vector>

#include "minisgd/config/config.hpp"

namespace minisgd::perfmodel {

/// One figure per compression method, indexed by CompressionMethod: sized by its name table.
using PerMethod = std::array<double, names(CompressionMethod{}).size()>;

struct Machine {
  std::string name;
  std::string source;  // where the figures come from
  // Memory and kernels, per rank.
  double memory_Bps = 0;         // sustained streaming bandwidth (triad)
  double stream_efficiency = 1;  // fraction of it minisgd's streaming kernels reach
  double cache_bytes = 0;        // a batch re-read from a cache this large costs no memory traffic
  // Bytes/s of a second pass over rows a step has just read, while they fit in that cache:
  // the column step's derivatives and gradient product after its margins, CA-SGD's gather and
  // gradient products (perf/calibrate: SGD's second pass at b = 32 over 256 fp32 columns in
  // cache; 0: not measured, the pass is free).
  double reread_Bps = 0;
  // Rows that stay in the caches from one pass over them to the next stream faster than
  // memory: the rate of a pass by the bytes of rows a rank holds, measured with the node's
  // ranks streaming at once (perf/calibrate; `resident`: bytes, bytes/s, rates not increasing;
  // empty: every pass streams from memory).
  std::vector<std::pair<double, double>> resident;
  double row_s = 0;          // fixed cost per batch row (loss derivative, reductions)
  double launch_s = 0;       // per kernel launch
  double sync_s = 0;         // a device's wait for its kernels before a collective (none on a host)
  double gemm_fp64_Fps = 0;  // Gram rate by input type (flop/s)
  double gemm_fp32_Fps = 0;
  double gemm_bf16_Fps = 0;
  double gram_entry_s = 0;  // per packed Gram entry (short dot products, stores)
  double gram_call_s = 0;  // per library GEMM call (a block row of the Gram: s − 1 an outer step)
  // Up to this many rows (s·b, s > 2) the Gram is one library call, the whole Y·Yᵀ then packed
  // (cuBLAS: launches cost more than the flops saved); 0: s − 1 calls at every s.
  double gram_whole_rows = 0;
  // Passes over a packed Gram that outgrows the cache beyond writing it: the host BLAS path
  // forms rectangles of block rows in a scratch buffer and copies them into place (2: the
  // scratch written and read back; 0 where the library writes the packed rows itself). For
  // fp32/fp64 inputs, and for bf16 ones (widened for BLAS where oneDNN cannot take them).
  double gram_scratch_passes = 0;
  double gram_bf16_scratch_passes = 0;
  double decode_s = 0;  // per stored value widened to the arithmetic (bf16 X, fp32 work)
  // Per nonzero of a sparse row's pass: its weight gathered for the margin, its term added to
  // the weights or the gradient, value and index streamed (kernels.sparse_nnz_ns; default 4.5
  // ns: the sparse step on url-like fp32 rows, 3.2 M columns, perf/kernel_table.sh on the
  // 2-core Xeon VM, 2026-12-07, perf/results/performance_history.md).
  double sparse_nnz_s = 4.5e-9;
  // Per gradient value, each compressor's encode and decode at one rank with its default
  // parameters, by CompressionMethod (perf/calibrate; the `compressors` section); 0 where not
  // measured: then four passes over the gradient at the streaming rate.
  PerMethod compress_value_s{};
  // The same for a gradient that outgrows cache_bytes (its values, codes and sum streamed from
  // memory: perf/calibrate at d = 2^22; the `compressors_streaming` section); 0 where not
  // measured: the in-cache figure.
  PerMethod compress_streaming_value_s{};
  // Per value merged, the arithmetic a merge collective does on each value it receives (decode
  // both, combine, re-encode; a top-k merge per pair), by CompressionMethod, for the methods
  // whose record says they merge (compress::merges_payloads: cast, gtopk, aps, and global-qsgd
  // with exponential dithering) (perf/calibrate; the `merges` section); 0 where not measured:
  // then not priced.
  PerMethod merge_value_s{};
  // Per weight, each optimizer's update beyond plain SGD's, by OptimizerKind (perf/calibrate;
  // kernels.momentum_ns and adam_ns; 0 where not measured).
  std::array<double, names(OptimizerKind{}).size()> update_value_s{};
  double ca_row_s = 0;    // per row of CA-SGD beyond row_s (three passes over a row, not one)
  double scalar_Fps = 0;  // small dense work: the CA-SGD recurrence
  // The host's share of a step, beside the kernels: step planning, the stepper's small host to
  // device copies, timers and the communicator call itself (paid at one rank too).
  double sgd_step_host_s = 0;   // per SGD step
  double ca_outer_host_s = 0;   // per CA-SGD outer step
  double ca_inner_host_s = 0;   // per CA-SGD inner step
  double wait_overshoot_s = 0;  // how much longer than asked comm.emulate's wait lasts
  // One node whose `cores` every rank shares (0: each rank has a core of its own, as on a
  // cluster): beyond that many ranks they take turns, and a message whose receiver is switched
  // out waits for one context switch (`switch_s`).
  double cores = 0;
  double switch_s = 0;
  // Network, per rank: one message costs latency_s + bytes / network_Bps. On one node, where
  // the "network" is memory and the MPI library changes protocol with a message's size (copies
  // through a shared buffer, then a handshake and a single copy, then copies that leave the
  // caches), calibrate measures instead what a collective call's bytes per rank cost beyond
  // its latency at sizes from 1 KiB to 16 MiB (`transfer`: bytes, seconds; empty: no curve).
  double latency_s = 0;
  double network_Bps = 0;
  std::vector<std::pair<double, double>> transfer;
  // The rank count of one node the network figures were measured at (0: not measured so):
  // from `cores` ranks on, their α and curve already hold the waits for switched-out ranks.
  double network_ranks = 0;
  /// Bytes/s of a pass over the rows when a rank holds `bytes` of them: the `resident` curve
  /// (its first rate below its first point, linear in log(bytes) between points), and beyond
  /// its last point (or without one) memory's streaming rate, memory_Bps·stream_efficiency.
  double rows_Bps(double bytes) const;
  /// Seconds to move `bytes` per rank in one collective call: bytes / network_Bps, or the
  /// measured curve (linear between its points, in proportion below the first, at the last
  /// segment's rate beyond the last).
  double transfer_seconds(double bytes) const;
};

/// Parses a machine description; `origin` names it in errors (file:line: key: problem).
Machine parse_machine(const std::string& yaml_text, const std::string& origin);
Machine load_machine(const std::string& path);

}  // namespace minisgd::perfmodel
