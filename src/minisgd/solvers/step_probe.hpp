#pragma once
// solver.step_size.eta0: auto (docs/input_deck.md; why and how well: docs/convergence.md). Before
// training, the run in small on a sample of its rows picks η₀: each candidate trains a fresh
// stepper (the run's method, decomposition, precision, compressor, optimizer, schedule and
// averaging) over the sample's batches for as many passes as the run has epochs, and the
// candidate whose reported weights (the average, with averaging) give the least objective over
// the sample wins. The candidates are powers of √2: a walk by factors of 2 from η₀ = 1 towards
// the lower objective until it rises (down from the first that does not diverge), then the two
// √2 neighbours of the best.
//
// The sample is the first whole batches of the shuffled order (data.shuffle: a random sample
// drawn from run.seed), so it is the same at every rank count; every rank computes the same
// objectives up to the order of their sums, and a candidate beats another only by more than
// 1e-9 relative (ties go to the smaller η₀), so every rank and every rank count chooses alike.
#include <cstdint>
#include <vector>

#include "minisgd/comm/communicator.hpp"
#include "minisgd/config/config.hpp"
#include "minisgd/data/dataset.hpp"

namespace minisgd {

struct StepProbe {
  struct Candidate {
    double eta0;
    double loss;  // the sample objective after the candidate's training; +inf: it diverged
  };
  double eta0 = 0;                    // the one chosen
  std::int64_t sample_rows = 0;       // rows of the sample, over all ranks
  std::int64_t steps = 0;             // steps each candidate trained
  std::vector<Candidate> candidates;  // in the order tried
};

/// The sample holds at least this many rows and this many batches (fewer when the data are
/// smaller: then it is every row), and a candidate trains at most kProbeMaxPasses passes.
constexpr std::int64_t kProbeSampleRows = 4096;
constexpr std::int64_t kProbeSampleBatches = 32;
constexpr double kProbeMaxPasses = 100;

/// Collective over `train` (the steps) and `eval` (the sample objective), like a training run.
template <class S>
StepProbe probe_step_size(const Config& c, const Dataset<S>& data, comm::Communicator& train,
                          comm::Communicator& eval);

}  // namespace minisgd
