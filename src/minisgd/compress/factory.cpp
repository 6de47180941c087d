#include <stdexcept>

#include "minisgd/compress/aps.hpp"
#include "minisgd/compress/cast.hpp"
#include "minisgd/compress/compressor.hpp"
#include "minisgd/compress/exact_sparse.hpp"
#include "minisgd/compress/global_qsgd.hpp"
#include "minisgd/compress/gtopk.hpp"
#include "minisgd/compress/loco.hpp"
#include "minisgd/compress/none.hpp"
#include "minisgd/compress/qsgd.hpp"
#include "minisgd/compress/topk.hpp"

namespace minisgd::compress {

template <class T>
std::unique_ptr<Compressor<T>> make_compressor(const CompressionConfig& c, std::uint64_t seed,
                                               std::size_t d, comm::Communicator& comm) {
  constexpr auto exponential = Dithering::exponential;
  switch (c.method) {
    case CompressionMethod::none: return std::make_unique<Dense<T>>(comm);
    case CompressionMethod::cast: return std::make_unique<Cast<T>>(comm, d, c.cast.format);
    case CompressionMethod::topk: return std::make_unique<TopK<T>>(comm, d, c.topk.density);
    case CompressionMethod::gtopk: return std::make_unique<GTopK<T>>(comm, d, c.gtopk);
    case CompressionMethod::qsgd:
      return std::make_unique<Qsgd<T>>(comm, d, c.qsgd.bits, c.qsgd.dithering == exponential, seed);
    case CompressionMethod::global_qsgd:
      return std::make_unique<GlobalQsgd<T>>(comm, d, c.global_qsgd.bits,
                                             c.global_qsgd.dithering == exponential, seed);
    case CompressionMethod::aps:
      return std::make_unique<Aps<T>>(comm, d, c.aps.format, std::size_t(c.aps.block_size),
                                      c.aps.kahan);
    case CompressionMethod::loco:
      return std::make_unique<Loco<T>>(comm, d, c.loco.bits, c.loco.beta, c.loco.reset_period,
                                       std::size_t(c.loco.group_size));
    case CompressionMethod::sparse: return std::make_unique<ExactSparse<T>>(comm, d);
  }
  throw std::invalid_argument(std::string("no compressor for method ") + to_string(c.method));
}

template std::unique_ptr<Compressor<float>> make_compressor<float>(const CompressionConfig&,
                                                                   std::uint64_t, std::size_t,
                                                                   comm::Communicator&);
template std::unique_ptr<Compressor<double>> make_compressor<double>(const CompressionConfig&,
                                                                     std::uint64_t, std::size_t,
                                                                     comm::Communicator&);

}  // namespace minisgd::compress
