#pragma once
#include "minisgd/config/config.hpp"
#include "minisgd/data/dataset.hpp"

namespace minisgd {

/// Reads or generates the training set and keeps this rank's part, stored as T.
/// Throws InputError for bad files and for a rank count the problem cannot use.
template <class T>
Dataset<T> load_training_data(const Config& c, int rank, int ranks);

/// The optional test set (data.test_path), partitioned like the training set, unshuffled.
template <class T>
Dataset<T> load_test_data(const Config& c, int rank, int ranks, std::int64_t features);

}  // namespace minisgd
