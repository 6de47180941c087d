#pragma once
// The typed, validated run configuration a deck resolves to (docs/input_deck.md documents
// every key). Everything downstream reads these structs, never YAML.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "minisgd/config/compression.hpp"
#include "minisgd/core/json_value.hpp"
#include "minisgd/core/vocabulary.hpp"
#include "minisgd/precision/plan.hpp"

namespace minisgd {

// The closed sets of choices a deck makes, each with the one table of its names (parsing,
// --dry-run, the report and error messages read it: core/names.hpp). Loss, decomposition,
// method, schedule, optimizer and Gram engine are in core/vocabulary.hpp, the precision
// preset and rounding in precision/plan.hpp, the compression method and its parameters'
// choices in config/compression.hpp.

/// run.study: none, or precision (the fp32 baseline, then each knob lowered alone).
enum class Study { none, precision };
constexpr NameTable<Study, 2> names(Study) {
  return {{{Study::none, "none"}, {Study::precision, "precision"}}};
}

enum class DataSource { synthetic, libsvm, binary };
constexpr NameTable<DataSource, 3> names(DataSource) {
  return {{{DataSource::synthetic, "synthetic"},
           {DataSource::libsvm, "libsvm"},
           {DataSource::binary, "binary"}}};
}

/// data.fallback: stand_in generates data.synthetic.kind when data.path is absent.
enum class Fallback { none, stand_in };
constexpr NameTable<Fallback, 2> names(Fallback) {
  return {{{Fallback::none, "none"}, {Fallback::stand_in, "stand-in"}}};
}

/// data.standardize: none, scale (x/σ: zeros stay zeros) or standard ((x − μ)/σ), with
/// μ and σ of each column over the training rows (data/standardize.hpp).
enum class Standardize { none, scale, standard };
constexpr NameTable<Standardize, 3> names(Standardize) {
  return {{{Standardize::none, "none"},
           {Standardize::scale, "scale"},
           {Standardize::standard, "standard"}}};
}

/// data.synthetic.kind: a generator of its own (synth, linear-synth, poisson-synth) or a
/// stand-in of a real data set's shape (*-like).
enum class SyntheticKind {
  synth,
  linear_synth,
  poisson_synth,
  epsilon_like,
  susy_like,
  higgs_like,
  sparse,
  rcv1_like,
  news20_like,
  url_like,
  kdd2010_like,
  criteo_like
};
constexpr NameTable<SyntheticKind, 12> names(SyntheticKind) {
  return {{{SyntheticKind::synth, "synth"},
           {SyntheticKind::linear_synth, "linear-synth"},
           {SyntheticKind::poisson_synth, "poisson-synth"},
           {SyntheticKind::epsilon_like, "epsilon-like"},
           {SyntheticKind::susy_like, "susy-like"},
           {SyntheticKind::higgs_like, "higgs-like"},
           {SyntheticKind::sparse, "sparse"},
           {SyntheticKind::rcv1_like, "rcv1-like"},
           {SyntheticKind::news20_like, "news20-like"},
           {SyntheticKind::url_like, "url-like"},
           {SyntheticKind::kdd2010_like, "kdd2010-like"},
           {SyntheticKind::criteo_like, "criteo-like"}}};
}

/// True for the generators of sparse rows (data/sparse_synthetic.hpp).
constexpr bool sparse_kind(SyntheticKind k) {
  return k == SyntheticKind::sparse || k == SyntheticKind::rcv1_like ||
         k == SyntheticKind::news20_like || k == SyntheticKind::url_like ||
         k == SyntheticKind::kdd2010_like || k == SyntheticKind::criteo_like;
}

/// data.layout: how a rank stores its share. auto: sparse when the data's density is under
/// kSparseDensity (CA-SGD: kCaSgdSparseDensity; docs/data.md), else dense.
enum class Layout { automatic, dense, sparse };
constexpr NameTable<Layout, 3> names(Layout) {
  return {{{Layout::automatic, "auto"}, {Layout::dense, "dense"}, {Layout::sparse, "sparse"}}};
}

/// comm.backend (docs/gpu.md).
enum class CommBackend { mpi, nccl };
constexpr NameTable<CommBackend, 2> names(CommBackend) {
  return {{{CommBackend::mpi, "mpi"}, {CommBackend::nccl, "nccl"}}};
}

struct RunConfig {
  std::string name = "minisgd";
  std::uint64_t seed = 42;
  Study study = Study::none;
  precision::FormatSpec study_format{precision::Format::bf16, {}};  // the lowered format
  std::string restart;     // a checkpoint to continue from (empty: start at step 0)
  double min_seconds = 0;  // the FOM windows of repeated trainings add up to this (0: one)
};

struct SyntheticConfig {
  SyntheticKind kind = SyntheticKind::synth;
  std::int64_t rows = 0;      // 0: the kind's own size
  std::int64_t features = 0;  // 0: the kind's own size
  double noise = 0.1;
  double nnz_per_row = 0;   // sparse kinds: mean nonzeros per row (0: the kind's own)
  double nnz_spread = 0.5;  // sparse kinds: a row has mean·(1 ± spread) nonzeros, uniform
  double zipf = 1.0;        // sparse kinds: feature k is drawn with weight (k + 1)^-zipf
};

struct DataConfig {
  DataSource source = DataSource::synthetic;
  std::string path;
  Fallback fallback = Fallback::none;
  std::int64_t features = 0;  // 0: inferred from the file
  std::string test_path;
  SyntheticConfig synthetic;
  bool shuffle = true;
  bool cache = true;  // write/reuse a binary cache next to a LIBSVM file
  Standardize standardize = Standardize::none;
  Layout layout = Layout::automatic;
  int hash_bits = 0;  // > 0: LIBSVM indices hashed into 2^hash_bits columns (data/feature_hash.hpp)
};

struct ModelConfig {
  Loss loss = Loss::logistic;
  double l2 = 0.0;
  bool intercept = false;             // a constant feature 1 is appended (the last column)
  bool intercept_regularized = true;  // false: intercept: unregularized, outside λ/2‖w‖²
  /// Whether the last column's weight is left out of the L2 term.
  bool free_intercept() const { return intercept && !intercept_regularized; }
};

struct StepSizeConfig {
  double eta0 = 0.1;
  bool eta0_auto = false;  // eta0: auto, chosen at set-up by a probe (solvers/step_probe.hpp)
  Schedule schedule = Schedule::constant;
  double decay = 0.0;
  double l2 = 0.0;  // model.l2, for the optimal schedule
};

struct AdamConfig {
  double beta1 = 0.9;
  double beta2 = 0.999;
  double epsilon = 1e-8;
};

struct SolverConfig {
  Method method = Method::sgd;
  Decomposition decomposition = Decomposition::row;
  std::int64_t batch_size = 32;
  int s = 1;            // CA-SGD inner steps per outer step
  bool s_auto = false;  // s: auto, chosen at set-up by the performance model on `machine`
  std::string machine;  // machine file (perf/machines/) the model reads for s: auto
  StepSizeConfig step_size;
  double epochs = 1.0;
  std::int64_t max_iters = 0;         // 0: no limit
  std::optional<double> target_loss;  // stop once the evaluated objective is at or below it
  double time_limit = 0.0;            // seconds, 0: none
  std::int64_t eval_every = 0;        // iterations, 0: once per epoch
  bool reshuffle = false;             // new batch order every epoch
  OptimizerKind optimizer = OptimizerKind::sgd;
  double momentum = 0.9;  // heavy-ball coefficient
  AdamConfig adam;
  Averaging averaging = Averaging::none;
  std::optional<double> averaging_start;  // epochs; absent: 0 (polyak), half the run (tail)
  double averaging_gamma = 0;  // k-th averaged iterate weighs (γ + 1)/(k + γ); 0: the plain mean
};

struct PrecisionConfig {
  GramEngine gram_engine = GramEngine::automatic;
  bool tf32 = false;  // fp32 Gram inputs on Tensor Cores in TF32 (cuBLAS only)
  precision::Preset preset = precision::Preset::fp32;  // for sgd: fp64/fp32 when uniform
  /// The nine knobs in force; set with use(), so that `realized` follows.
  precision::Plan plan = precision::preset_plan(precision::Preset::fp32);
  /// The compiled types that carry `plan` (storage S, arithmetic A, wire W), decided once.
  precision::Realization realized = precision::realize(plan);

  /// Puts `p` in force with its realization (the deck reader and the precision study).
  void use(const precision::Plan& p) {
    plan = p;
    realized = precision::realize(p);
  }
};

struct CommConfig {
  CommBackend backend = CommBackend::mpi;
  bool gpu_aware = false;     // mpi only: hand device buffers to a CUDA-aware MPI
  double latency_us = 0;      // comm.emulate: modelled network added to every call
  double bandwidth_GBps = 0;  // 0: no emulation
  bool emulated() const { return bandwidth_GBps > 0; }
};

/// output.checkpoint: where, and every how many steps (0: only when solver.time_limit stops
/// the run).
struct CheckpointConfig {
  std::string path;
  std::int64_t every = 0;
};

struct OutputConfig {
  CheckpointConfig checkpoint;
  std::string report;
  std::string history;
  std::string weights;
  bool phase_timers = false;       // fence every phase timer (and the FOM window with them)
  std::int64_t warmup_steps = 10;  // steps before the FOM window (whole groups, at most half)
};

struct ValidationConfig {
  std::optional<double> reference_loss;
  double tolerance = 0.005;  // relative: |F - ref| <= tolerance * |ref|
};

struct Config {
  RunConfig run;
  DataConfig data;
  ModelConfig model;
  SolverConfig solver;
  PrecisionConfig precision;
  CompressionConfig compression;
  CommConfig comm;
  OutputConfig output;
  ValidationConfig validation;
  JsonValue resolved;  // every key with the value in force, defaults included
  std::string deck_path;
  /// Where each key came from: "deck.yaml:12: solver.s" or "--set solver.s" (fail_key).
  std::map<std::string, std::string> where;
};

}  // namespace minisgd
