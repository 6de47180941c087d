#pragma once
// The typed, validated run configuration a deck resolves to (docs/input_deck.md documents
// every key). Everything downstream reads these structs, never YAML.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "minisgd/core/vocabulary.hpp"
#include "minisgd/precision/plan.hpp"

namespace minisgd {

struct RunConfig {
  std::string name = "minisgd";
  std::uint64_t seed = 42;
  std::string study = "none";  // none | precision: fp32 baseline, then each knob lowered alone
  precision::FormatSpec study_format{precision::Format::bf16, {}};  // the lowered format
};

struct SyntheticConfig {
  std::string kind = "synth";  // synth | linear-synth | poisson-synth | *-like stand-ins
  std::int64_t rows = 0;       // 0: the kind's own size
  std::int64_t features = 0;   // 0: the kind's own size
  double noise = 0.1;
};

struct DataConfig {
  std::string source = "synthetic";  // libsvm | synthetic | binary
  std::string path;
  std::string fallback = "none";  // none | stand-in: generate synthetic.kind when path is absent
  std::int64_t features = 0;      // 0: inferred from the file
  std::string test_path;
  SyntheticConfig synthetic;
  bool shuffle = true;
  bool cache = true;  // write/reuse a binary cache next to a LIBSVM file
};

struct ModelConfig {
  Loss loss = Loss::logistic;
  double l2 = 0.0;
  bool intercept = false;
};

struct StepSizeConfig {
  double eta0 = 0.1;
  Schedule schedule = Schedule::constant;
  double decay = 0.0;
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
  int s = 1;  // CA-SGD inner steps per outer step
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
};

struct PrecisionConfig {
  std::string gram_engine =
      "auto";                   // auto | portable | cublas: who computes the Gram (docs/gpu.md)
  bool tf32 = false;            // fp32 Gram inputs on Tensor Cores in TF32 (cuBLAS only)
  std::string preset = "fp32";  // fp64 | fp32 | mixed | mixed-wire-bf16
  precision::Plan plan = precision::preset_plan("fp32");  // the nine knobs in force
};

// Parameters of each gradient compressor (docs/compression.md): one map per method.
struct CastParams {
  std::string format = "fp16";  // fp16 | bf16
};
struct SparsifyParams {
  double density = 0.01;  // k = ⌈density·d⌉
};
struct QuantizeParams {
  int bits = 8;
  std::string dithering = "standard";  // standard | exponential
};
struct ApsParams {
  std::string format = "e5m2";  // wire format, at most 16 bits (precision::parse_format names)
  std::int64_t block_size = 256;
  bool kahan = false;
};
struct LocoParams {
  int bits = 4;
  double beta = 0.8;
  std::int64_t reset_period = 1024;
  std::int64_t group_size = 128;
};

struct CompressionConfig {
  std::string method = "none";  // none | cast | topk | qsgd | aps | global-qsgd | gtopk | loco
  CastParams cast;
  SparsifyParams topk, gtopk;
  QuantizeParams qsgd, global_qsgd;
  ApsParams aps;
  LocoParams loco;
};

struct CommConfig {
  std::string backend = "mpi";  // mpi | nccl (docs/gpu.md)
  bool gpu_aware = false;       // mpi only: hand device buffers to a CUDA-aware MPI
  double latency_us = 0;        // comm.emulate: modelled network added to every call
  double bandwidth_GBps = 0;    // 0: no emulation
  bool emulated() const { return bandwidth_GBps > 0; }
};

struct OutputConfig {
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
  nlohmann::json resolved;  // every key with the value in force, defaults included
  std::string deck_path;
  /// Where each key came from: "deck.yaml:12: solver.s" or "--set solver.s" (fail_key).
  std::map<std::string, std::string> where;
};

}  // namespace minisgd
