#include <stdexcept>
#include <string>
#include <type_traits>

#include "minisgd/compress/compressor.hpp"
#include "minisgd/compress/record.hpp"

namespace minisgd::compress {

const CompressorRecord& record(CompressionMethod m) {
  switch (m) {
#define MINISGD_RECORD_CASE(id, name, Params) \
  case CompressionMethod::id: return id##_record;
    MINISGD_COMPRESSION_METHODS(MINISGD_RECORD_CASE)
#undef MINISGD_RECORD_CASE
  }
  throw std::invalid_argument(std::string("no compressor for method ") + to_string(m));
}

template <class T>
std::unique_ptr<Compressor<T>> make_compressor(const CompressionConfig& c, std::uint64_t seed,
                                               std::size_t d, comm::Communicator& comm, Form form) {
  const Setup setup{comm, d, seed, checked(form)};
  if constexpr (std::is_same_v<T, float>)
    return record(c.method).make_float(c, setup);
  else
    return record(c.method).make_double(c, setup);
}

double state_bytes(const CompressionConfig& c, std::size_t d, int ranks, std::size_t value_bytes) {
  return record(c.method).state_bytes(c, {double(d), ranks, double(value_bytes)});
}

template std::unique_ptr<Compressor<float>> make_compressor<float>(const CompressionConfig&,
                                                                   std::uint64_t, std::size_t,
                                                                   comm::Communicator&, Form);
template std::unique_ptr<Compressor<double>> make_compressor<double>(const CompressionConfig&,
                                                                     std::uint64_t, std::size_t,
                                                                     comm::Communicator&, Form);

}  // namespace minisgd::compress
