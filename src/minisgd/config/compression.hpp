#pragma once
// The gradient compression methods as a deck knows them: the one list of them, and from it the
// enum, its name table and the parameters of every method in CompressionConfig. A method's
// other half, its compressor, what it sends and whether its collective merges payloads, is its
// record in the compress layer (compress/record.hpp). Adding a method: docs/design.md, "Adding
// a compressor".
#include <cstddef>

#include "minisgd/config/compression/aps.hpp"
#include "minisgd/config/compression/cast.hpp"
#include "minisgd/config/compression/global_qsgd.hpp"
#include "minisgd/config/compression/gtopk.hpp"
#include "minisgd/config/compression/loco.hpp"
#include "minisgd/config/compression/qsgd.hpp"
#include "minisgd/config/compression/topk.hpp"
#include "minisgd/core/names.hpp"

namespace minisgd {

/// The parameters of a method that has none (no map of its own in the deck).
struct NoParams {};

/// Every compression method, one line each: X(enumerator, name in the deck, parameters). The
/// order is the enum's, and so that of the names in messages and of machine files' figures.
/// The parameters read themselves from the method's map (CastParams::read); a method's map is
/// `compression.<name>`, and its member of CompressionConfig is named as its enumerator.
#define MINISGD_COMPRESSION_METHODS(X)            \
  X(none, "none", NoParams)                       \
  X(cast, "cast", CastParams)                     \
  X(topk, "topk", SparsifyParams)                 \
  X(qsgd, "qsgd", QuantizeParams)                 \
  X(aps, "aps", ApsParams)                        \
  X(global_qsgd, "global-qsgd", GlobalQsgdParams) \
  X(gtopk, "gtopk", GTopKParams)                  \
  X(loco, "loco", LocoParams)                     \
  X(sparse, "sparse", NoParams)

/// compression.method (docs/compression.md).
enum class CompressionMethod {
#define MINISGD_METHOD_ENUMERATOR(id, name, Params) id,
  MINISGD_COMPRESSION_METHODS(MINISGD_METHOD_ENUMERATOR)
#undef MINISGD_METHOD_ENUMERATOR
};

#define MINISGD_METHOD_COUNT(id, name, Params) +1
inline constexpr std::size_t kCompressionMethods =
    0 MINISGD_COMPRESSION_METHODS(MINISGD_METHOD_COUNT);
#undef MINISGD_METHOD_COUNT

constexpr NameTable<CompressionMethod, kCompressionMethods> names(CompressionMethod) {
#define MINISGD_METHOD_NAME(id, name, Params) {CompressionMethod::id, name},
  return {{MINISGD_COMPRESSION_METHODS(MINISGD_METHOD_NAME)}};
#undef MINISGD_METHOD_NAME
}

/// The method in force and the parameters of every method (docs/compression.md): a deck may
/// carry several maps and switch with --set compression.method=...
struct CompressionConfig {
  CompressionMethod method = CompressionMethod::none;
#define MINISGD_METHOD_PARAMS(id, name, Params) Params id;
  MINISGD_COMPRESSION_METHODS(MINISGD_METHOD_PARAMS)
#undef MINISGD_METHOD_PARAMS
};

/// f(method, name, params) for every method in the list's order, `params` its member of `c`
/// (const where c is).
template <class Config, class F>
void for_each_method(Config& c, F&& f) {
#define MINISGD_VISIT_METHOD(id, name, Params) f(CompressionMethod::id, name, c.id);
  MINISGD_COMPRESSION_METHODS(MINISGD_VISIT_METHOD)
#undef MINISGD_VISIT_METHOD
}

}  // namespace minisgd
