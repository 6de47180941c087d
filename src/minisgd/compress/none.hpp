#pragma once
#include "minisgd/compress/compressor.hpp"

namespace minisgd::compress {

/// No compression: the AllReduce of the gradient in its own precision.
template <class T>
class Dense final : public Compressor<T> {
 public:
  explicit Dense(comm::Communicator& comm) : comm_(comm) {}
  void reduce(const Vector<T>& local, const Vector<T>& sum) override;
  nlohmann::json describe() const override;
  void state(StateArchive&) override {}  // stateless

 private:
  comm::Communicator& comm_;
};

}  // namespace minisgd::compress
