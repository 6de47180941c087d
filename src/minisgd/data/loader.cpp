#include "minisgd/data/loader.hpp"

#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <string>

#include "minisgd/config/deck.hpp"
#include "minisgd/core/atomic_file.hpp"
#include "minisgd/core/errors.hpp"
#include "minisgd/data/binary_io.hpp"
#include "minisgd/data/generate.hpp"
#include "minisgd/data/share.hpp"
#include "minisgd/data/sparse_synthetic.hpp"
#include "minisgd/data/standardize.hpp"
#include "minisgd/data/synthetic.hpp"
#include "minisgd/data/text_loader.hpp"

namespace minisgd {
namespace {

// One write per note: under mpirun a rank's stderr and stdout are forwarded separately, and a
// note written in pieces could come out split by a line of stdout.
void note(const std::string& what) { std::cerr << ("minisgd: note: " + what + "\n") << std::flush; }

/// Why the cache next to `source` cannot stand for it ("" when it can).
template <class T>
std::string cache_staleness(const Config& c, const std::string& cache, const std::string& source) {
  if (!std::filesystem::exists(cache)) return "none yet";
  try {
    InputFile f(cache);
    const auto judge = [&](auto& h) {
      std::string why = read_header(f, h);
      if (!why.empty()) return why;
      // Size and time alone would take another file of the same size and time (a copy that
      // kept its time, an edit whose time was put back) for the one the cache was made from.
      const SourceStamp now = source_stamp(source);
      if (h.source_bytes != now.bytes || h.source_mtime_ns != now.mtime_ns)
        return std::string("stale (the text file changed)");
      if (h.source_sample != now.sample)
        return std::string("made from other content (same size and time, sampled xxh64 differs)");
      const std::string format = precision::to_string(c.precision.plan[precision::Knob::data]);
      if (std::string(h.container) != container_name<T>() || format != h.format)
        return std::string("holds ") + h.format + " values, this run stores " + format;
      if (c.data.features > 0 && h.features != c.data.features)
        return std::string("has other data.features");
      return std::string();
    };
    // A dense cache is data that auto stores dense (the text loader writes CSR otherwise).
    if (binary_form(f) == BinaryForm::csr) {
      CsrHeader h{};
      return judge(h);
    }
    BinaryHeader h{};
    const std::string why = judge(h);
    return why.empty() && c.data.layout == Layout::sparse
               ? "holds dense rows, this run stores the data sparse"
               : why;
  } catch (const InputError& e) {
    return e.what();
  }
}

template <class T>
Dataset<T> read_file(const Config& c, const std::string& path, bool training, std::int64_t features,
                     comm::Communicator& comm, LoadStats& stats) {
  // A FIFO would block every rank, a directory or device would read as garbage or nothing.
  // Every rank looks and all agree: a rank that finds no file (deleted between the ranks'
  // looks, another working directory) must not leave the others waiting in a collective.
  std::string unusable;
  if (!std::filesystem::exists(path))
    unusable = path + ": data file not found";
  else if (!std::filesystem::is_regular_file(path))
    unusable = path + ": the data file is not a regular file";
  agree_on_error(comm, unusable);
  if (c.data.source == DataSource::binary)
    return load_binary<T>(c, path, training, features, comm, stats);
  // The cache holds rounded values: only a deterministic rounding can reuse them. It holds the
  // indices of the text, not hashed ones.
  const bool cached =
      c.data.cache && training && c.data.hash_bits == 0 && !data_store<T>(c, 1).round.stochastic;
  if (!cached) return load_libsvm<T>(c, path, training, features, comm, stats);
  const std::string cache = path + ".minisgd.bin";
  if (!replace_problem(cache).empty()) {  // a FIFO or device there is neither read nor replaced
    if (comm.rank() == 0) note("data cache " + cache + ": not a regular file; not used");
    return load_libsvm<T>(c, path, training, features, comm, stats);
  }
  // Every rank judges the same file; rank 0's verdict is everyone's.
  int fresh = comm.rank() == 0 ? (cache_staleness<T>(c, cache, path).empty() ? 1 : 0) : 0;
  comm.bcast(&fresh, 1, 0);
  if (fresh) {
    try {
      return load_binary<T>(c, cache, training, features, comm, stats);
    } catch (const UnusableFile& e) {  // thrown on every rank alike; the deck's errors pass
      // Values this run refuses are named again, at their file:line, by the text's reader.
      if (e.damaged && comm.rank() == 0) note(std::string(e.what()) + "; rebuilding it");
    }
  } else if (comm.rank() == 0 && std::filesystem::exists(cache)) {
    note("data cache " + cache + ": " + cache_staleness<T>(c, cache, path) + "; rebuilding it");
  }
  return load_libsvm<T>(c, path, training, features, comm, stats, cache);
}

}  // namespace

SyntheticShape synthetic_shape(const SyntheticConfig& c) {
  SyntheticShape s{100000, 256, Loss::logistic, 1.0, 2.0};
  switch (c.kind) {
    case SyntheticKind::synth: break;
    case SyntheticKind::linear_synth: s = {100000, 256, Loss::linear, 1.0, 1.0}; break;
    case SyntheticKind::poisson_synth: s = {100000, 256, Loss::poisson, 1.0, 0.5}; break;
    case SyntheticKind::epsilon_like:
      s = {400000, 2000, Loss::logistic, 1.0 / std::sqrt(2000.0), 2.0};
      break;
    case SyntheticKind::susy_like: s = {5000000, 18, Loss::logistic, 1.0, 2.0}; break;
    case SyntheticKind::higgs_like: s = {11000000, 28, Loss::logistic, 1.0, 2.0}; break;
    case SyntheticKind::sparse:
    case SyntheticKind::rcv1_like:
    case SyntheticKind::news20_like:
    case SyntheticKind::url_like:
    case SyntheticKind::kdd2010_like:
    case SyntheticKind::criteo_like: {
      const SparseShape sparse = sparse_shape(c);
      return {sparse.rows, sparse.features, Loss::logistic, 1.0, 2.0};
    }
  }
  if (c.rows > 0) s.rows = c.rows;
  if (c.features > 0) {
    if (c.kind == SyntheticKind::epsilon_like)
      s.feature_scale = 1.0 / std::sqrt(double(c.features));
    s.features = c.features;
  }
  return s;
}

template <class T>
Dataset<T> load_training_data(const Config& c, comm::Communicator& comm, LoadStats& stats) {
  const auto t0 = std::chrono::steady_clock::now();
  const double cpu0 = process_cpu_seconds();
  Dataset<T> ds;
  const auto synthetic = [&] {
    return sparse_kind(c.data.synthetic.kind) ? generate_sparse<T>(c, comm) : generate<T>(c, comm);
  };
  if (c.data.source == DataSource::synthetic) {
    ds = synthetic();
  } else if (c.data.fallback == Fallback::stand_in && !std::filesystem::exists(c.data.path)) {
    ds = synthetic();
    ds.description += ", a stand-in: " + c.data.path + " not found";
  } else {
    ds = read_file<T>(c, c.data.path, true, c.data.features, comm, stats);
  }
  if (ds.sparse() && c.data.standardize != Standardize::none)
    fail_key(c, "data.standardize",
             "sparse storage keeps the data as given (data.layout: auto chose sparse; set "
             "data.layout: dense to standardize)");
  if (!ds.sparse()) {
    ds.scaling = column_scaling(c, ds, comm);
    apply_scaling(c, ds.scaling, ds);
  }
  if (!ds.scaling.empty()) ds.description += std::string(", ") + to_string(c.data.standardize);
  stats.cpu_seconds += process_cpu_seconds() - cpu0;
  stats.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  stats.matrix_bytes += ds.matrix_bytes() + ds.y.span() * sizeof(double);
  return ds;
}

template <class T>
Dataset<T> load_test_data(const Config& c, comm::Communicator& comm, const Dataset<T>& training,
                          LoadStats& stats) {
  const auto t0 = std::chrono::steady_clock::now();
  const double cpu0 = process_cpu_seconds();
  Config same = c;  // the test set is stored as the training set is
  same.data.layout = training.sparse() ? Layout::sparse : Layout::dense;
  Dataset<T> ds = read_file<T>(same, c.data.test_path, false, training.features, comm, stats);
  ds.scaling = training.scaling;
  if (!ds.sparse()) apply_scaling(c, ds.scaling, ds);
  stats.cpu_seconds += process_cpu_seconds() - cpu0;
  stats.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  stats.matrix_bytes += ds.matrix_bytes() + ds.y.span() * sizeof(double);
  return ds;
}

#define MINISGD_LOADER(T)                                                                      \
  template Dataset<T> load_training_data<T>(const Config&, comm::Communicator&, LoadStats&);   \
  template Dataset<T> load_test_data<T>(const Config&, comm::Communicator&, const Dataset<T>&, \
                                        LoadStats&);
MINISGD_LOADER(float)
MINISGD_LOADER(double)
MINISGD_LOADER(precision::bf16)
MINISGD_LOADER(precision::fp16)
#undef MINISGD_LOADER

}  // namespace minisgd
