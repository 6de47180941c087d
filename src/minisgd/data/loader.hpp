#pragma once
#include "minisgd/comm/communicator.hpp"
#include "minisgd/config/config.hpp"
#include "minisgd/data/dataset.hpp"
#include "minisgd/data/load_stats.hpp"

namespace minisgd {

/// Reads or generates the training set and keeps this rank's part, stored as T (collective:
/// every rank of comm calls it). Throws InputError, on every rank, for bad files and for a
/// rank count the problem cannot use. Adds what the load cost to `stats`.
template <class T>
Dataset<T> load_training_data(const Config& c, comm::Communicator& comm, LoadStats& stats);

/// The optional test set (data.test_path), partitioned like the training set, unshuffled.
template <class T>
Dataset<T> load_test_data(const Config& c, comm::Communicator& comm, std::int64_t features,
                          LoadStats& stats);

}  // namespace minisgd
