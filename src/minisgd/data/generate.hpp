#pragma once
#include "minisgd/comm/communicator.hpp"
#include "minisgd/config/config.hpp"
#include "minisgd/data/dataset.hpp"

namespace minisgd {

/// This rank's share of the synthetic problem data.synthetic describes (collective).
template <class T>
Dataset<T> generate(const Config& c, comm::Communicator& comm);

}  // namespace minisgd
