#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "minisgd/compress/aps.hpp"
#include "minisgd/compress/cast.hpp"
#include "minisgd/compress/compressor.hpp"
#include "minisgd/compress/exact_sparse.hpp"
#include "minisgd/compress/global_qsgd.hpp"
#include "minisgd/compress/gtopk.hpp"
#include "minisgd/compress/loco.hpp"
#include "minisgd/compress/loco_codec.hpp"
#include "minisgd/compress/none.hpp"
#include "minisgd/compress/qsgd.hpp"
#include "minisgd/compress/topk.hpp"

namespace minisgd::compress {

template <class T>
std::unique_ptr<Compressor<T>> make_compressor(const CompressionConfig& c, std::uint64_t seed,
                                               std::size_t d, comm::Communicator& comm, Form form) {
  constexpr auto exponential = Dithering::exponential;
  switch (c.method) {
    case CompressionMethod::none: return std::make_unique<Dense<T>>(comm);
    case CompressionMethod::cast: return std::make_unique<Cast<T>>(comm, d, c.cast.format);
    case CompressionMethod::topk: return std::make_unique<TopK<T>>(comm, d, c.topk.density, form);
    case CompressionMethod::gtopk: return std::make_unique<GTopK<T>>(comm, d, c.gtopk, form);
    case CompressionMethod::qsgd:
      return std::make_unique<Qsgd<T>>(comm, d, c.qsgd.bits, c.qsgd.dithering == exponential, seed,
                                       form);
    case CompressionMethod::global_qsgd:
      return std::make_unique<GlobalQsgd<T>>(comm, d, c.global_qsgd.bits,
                                             c.global_qsgd.dithering == exponential, seed, form);
    case CompressionMethod::aps:
      return std::make_unique<Aps<T>>(comm, d, c.aps.format, std::size_t(c.aps.block_size),
                                      c.aps.kahan, form);
    case CompressionMethod::loco:
      return std::make_unique<Loco<T>>(comm, d, c.loco.bits, c.loco.beta, c.loco.reset_period,
                                       std::size_t(c.loco.group_size), form);
    case CompressionMethod::sparse: return std::make_unique<ExactSparse<T>>(comm, d);
  }
  throw std::invalid_argument(std::string("no compressor for method ") + to_string(c.method));
}

double state_bytes(const CompressionConfig& c, std::size_t d, int ranks, std::size_t value_bytes) {
  const double n = double(d), P = double(ranks), vb = double(value_bytes);
  const auto k = [&](double density) { return std::max(1.0, std::ceil(density * n)); };
  switch (c.method) {
    case CompressionMethod::none: return 0;
    case CompressionMethod::cast: return 2 * n;  // 16-bit payload
    case CompressionMethod::topk:  // residual, accumulated, 32-bit keys; k pairs, P·k gathered
      return (2 * vb + 4) * n + 8 * k(c.topk.density) * (1 + P);
    case CompressionMethod::gtopk: {  // as top-k; the selection and two merge lists of k pairs
      const double density = c.gtopk.warmup_epochs > 0
                                 ? std::max(c.gtopk.density, c.gtopk.warmup_density)
                                 : c.gtopk.density;
      return (2 * vb + 4) * n + 3 * 8 * k(density);
    }
    case CompressionMethod::qsgd: {  // codes, and every rank's gathered
      const bool one_byte = c.qsgd.dithering == Dithering::exponential || c.qsgd.bits <= 8;
      return (one_byte ? 1 : 2) * n * (1 + P);
    }
    case CompressionMethod::global_qsgd: return n;  // codes of one byte or more
    case CompressionMethod::aps: return n;          // payload of 8 bits a value or more
    case CompressionMethod::loco: {
      // Per rank's chunk: int8 error codes, the fp32 v, and the send, receive and gather
      // payloads of P chunks each; the owned chunk's again.
      const auto L = loco::ChunkLayout::of((d + std::size_t(ranks) - 1) / std::size_t(ranks),
                                           std::size_t(c.loco.group_size), c.loco.bits);
      return (P + 1) * (5 * double(L.length) + 4 * double(L.groups)) +
             (3 * P + 1) * double(L.bytes);
    }
    case CompressionMethod::sparse: return (4 + vb) * n;  // an index and a value per column
  }
  return 0;
}

template std::unique_ptr<Compressor<float>> make_compressor<float>(const CompressionConfig&,
                                                                   std::uint64_t, std::size_t,
                                                                   comm::Communicator&, Form);
template std::unique_ptr<Compressor<double>> make_compressor<double>(const CompressionConfig&,
                                                                     std::uint64_t, std::size_t,
                                                                     comm::Communicator&, Form);

}  // namespace minisgd::compress
