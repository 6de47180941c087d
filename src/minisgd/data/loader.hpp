#pragma once
#include "minisgd/comm/communicator.hpp"
#include "minisgd/config/config.hpp"
#include "minisgd/data/dataset.hpp"
#include "minisgd/data/load_stats.hpp"

namespace minisgd {

/// Reads or generates the training set and keeps this rank's part, stored as T (collective:
/// every rank of comm calls it), standardized as data.standardize asks. Throws InputError, on every
/// rank, for bad files and for a rank count the problem cannot use. Adds what the load cost to
/// `stats`.
template <class T>
Dataset<T> load_training_data(const Config& c, comm::Communicator& comm, LoadStats& stats);

/// The optional test set (data.test_path), partitioned like the training set, unshuffled,
/// with the training set's features and standardization (its statistics, not its own).
template <class T>
Dataset<T> load_test_data(const Config& c, comm::Communicator& comm, const Dataset<T>& training,
                          LoadStats& stats);

}  // namespace minisgd
