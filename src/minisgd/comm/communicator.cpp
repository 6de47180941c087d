#include "minisgd/comm/communicator.hpp"

#include <stdexcept>

namespace minisgd::comm {

std::size_t size_of(DType t) {
  switch (t) {
    case DType::f64:
    case DType::i64:
    case DType::u64: return 8;
    case DType::f32:
    case DType::i32:
    case DType::u32: return 4;
    case DType::f16:
    case DType::bf16:
    case DType::i16:
    case DType::u16: return 2;
    case DType::i8:
    case DType::u8: return 1;
  }
  throw std::logic_error("size_of: unknown DType");
}

const char* name(Kind k) {
  static const char* names[] = {"allreduce", "allgather", "alltoall",
                                "sendrecv",  "bcast",     "barrier"};
  return names[static_cast<int>(k)];
}

std::uint64_t Stats::total_bytes() const {
  std::uint64_t b = 0;
  for (const auto& k : kinds) b += k.bytes_sent;
  return b;
}

}  // namespace minisgd::comm
