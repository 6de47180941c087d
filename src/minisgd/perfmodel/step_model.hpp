#pragma once
// The α-β-γ model of one training step (docs/performance_model.md): for a workload (method,
// decomposition, P, batch, features, s, precision, compressor, emulated network) and a machine,
// the time of the slowest rank's step split into local compute (γ: bytes streamed at the
// machine's kernel bandwidth, flops at its Gram rate, per-row and per-launch costs), latency
// (α per message of the collectives) and bandwidth (bytes on the wire per rank). Collectives
// follow what the code runs: MPI's AllReduce as reduce-scatter + allgather (2⌈log2 P⌉
// messages, 2(P−1)/P of the payload), AllGather as ⌈log2 P⌉ messages of (P−1) payloads, the
// merge collectives by comm::schedule_time.
#include <cstdint>
#include <string>
#include <vector>

#include "minisgd/config/config.hpp"
#include "minisgd/perfmodel/machine.hpp"

namespace minisgd::perfmodel {

struct Workload {
  Method method = Method::sgd;
  Decomposition decomposition = Decomposition::row;
  int ranks = 1;
  std::int64_t batch = 32;
  std::int64_t features = 0;
  std::int64_t rows = 0;        // training rows (0: unknown, and every pass streams from memory)
  int s = 1;                    // CA-SGD inner steps per outer step
  double storage_bytes = 4;     // per value of X
  double arithmetic_bytes = 4;  // weights, gradients, margins
  double gram_input_bytes = 4;  // Y as the Gram reads it (selects the Gram rate)
  double wire_bytes = 4;        // per value of CA-SGD's packed message
  OptimizerKind optimizer = OptimizerKind::sgd;
  CompressionConfig compression;
  double emulated_latency_s = 0;  // comm.emulate (0 and 0: none)
  double emulated_Bps = 0;
  // Sparse rows (a CSR share): nonzeros a row (0: dense rows of `features` values), and the
  // distinct columns a rank's batch touches, expected (0: its nonzeros, at most d). SGD's
  // gradient and the exchanges of sparse, topk and gtopk are priced on them (CA-SGD: dense).
  double nnz_per_row = 0;
  double touched = 0;
};

/// Expected distinct columns among `draws` columns drawn by data/sparse_synthetic on d columns:
/// frequency rank k with probability ((k+2)^a − (k+1)^a) / ((d+1)^a − 1), a = 1 − zipf.
double expected_touched(double d, double draws, double zipf);

/// The workload a deck describes on `features` columns and `rows` training rows (0: unknown) at
/// `ranks` ranks (s from the deck); sparse rows where the deck's sparse synthetic kind is stored
/// sparse (data.layout), with its nnz_per_row and its Zipf draws' touched columns.
Workload workload_of(const Config& c, std::int64_t features, int ranks, std::int64_t rows = 0);

struct StepTime {
  double compute_s = 0, latency_s = 0, bandwidth_s = 0;
  double messages = 0;  // per rank and step
  double bytes = 0;     // sent per rank and step
  double total_s() const { return compute_s + latency_s + bandwidth_s; }
};

/// Library calls forming CA-SGD's packed Gram of s blocks of b rows on machine m: one for the
/// whole Y·Yᵀ up to m.gram_whole_rows rows, else one per block row (s − 1).
double gram_calls(double s, double b, const Machine& m);

/// Time of one (inner) step: for CA-SGD one outer step divided by s.
StepTime predict_step(const Workload& w, const Machine& m);

/// CA-SGD's time per step for each candidate s (powers of two up to `max_s`).
struct SChoice {
  int s;
  StepTime step;
};
std::vector<SChoice> s_candidates(Workload w, const Machine& m, int max_s = 64);
/// The candidate with the least time per step.
int best_s(const Workload& w, const Machine& m, int max_s = 64);

}  // namespace minisgd::perfmodel
