#pragma once
// A compression method's record: what the layers above the deck know of it. Its deck half (the
// name and the parameters, read by the config layer) is its line in config/compression.hpp;
// this half, defined in the method's own .cpp as `<enumerator>_record`, builds its compressor,
// describes the collective calls of a step for the performance model, bounds the memory its
// compressor takes and says whether its collective merges payloads. Nothing else names a
// method: make_compressor, state_bytes, the step model (perfmodel/step_model.cpp) and the
// machine files (perfmodel/machine.cpp) read the records.
#include <cstdint>
#include <memory>
#include <vector>

#include "minisgd/comm/merge_plan.hpp"
#include "minisgd/compress/compressor.hpp"
#include "minisgd/compress/form.hpp"

namespace minisgd::compress {

/// What a compressor is built for, beyond its parameters.
struct Setup {
  comm::Communicator& comm;
  std::size_t d;       // gradient values
  std::uint64_t seed;  // keys every random choice (with the step, rank and element)
  Form form;           // the body of a compressor that has two (form.hpp)
};

/// One step's gradient sum as the traffic model sees it.
struct Exchange {
  double d;            // gradient values
  int ranks;           // P
  double value_bytes;  // bytes of a gradient value (the arithmetic type)
};

/// One collective call of a step's reduce, as the step model prices it (perfmodel/
/// step_model.cpp: the α-β cost of the call as the code makes it).
struct Collective {
  enum class Kind { allreduce, allgather, alltoall, merge };
  Kind kind;
  double bytes;      // allreduce, allgather, alltoall: the payload per rank; merge: an element's
  double count = 0;  // merge: elements (comm/merge_allreduce.hpp)
  comm::MergeShape shape = comm::MergeShape::elementwise;  // merge
  double values = 1;  // merge: gradient values an element holds (the merge's work is per value)

  static Collective allreduce(double payload) { return {Kind::allreduce, payload}; }
  static Collective allgather(double payload) { return {Kind::allgather, payload}; }
  static Collective alltoall(double payload) { return {Kind::alltoall, payload}; }
  static Collective merge(comm::MergeShape shape, double count, double element_bytes,
                          double values = 1) {
    return {Kind::merge, element_bytes, count, shape, values};
  }
};

struct CompressorRecord {
  /// The method's compressor for gradients of float, of double.
  std::unique_ptr<Compressor<float>> (*make_float)(const CompressionConfig&, const Setup&);
  std::unique_ptr<Compressor<double>> (*make_double)(const CompressionConfig&, const Setup&);
  /// The collective calls of one reduce, in order.
  std::vector<Collective> (*traffic)(const CompressionConfig&, const Exchange&);
  /// The bytes its compressor allocates, at least (compress::state_bytes).
  double (*state_bytes)(const CompressionConfig&, const Exchange&);
  /// Whether its collective merges the payloads it receives (comm/merge_allreduce.hpp), so that
  /// a machine file may price its merges (perfmodel/machine.hpp, merge_value_s).
  bool merges;
};

/// The record of a method whose parts are M's static members: `make<T>(config, setup)`,
/// `traffic(config, exchange)`, `bytes_held(config, exchange)` and `merges`. (A struct of its
/// own per method, as the sources of compress/ may be compiled as one unity source.) Not
/// constexpr: HIP's clang emits a constant-initialized namespace-scope `const` for the device
/// too, where these host functions do not exist; the records are read only after main starts.
template <class M>
CompressorRecord record_of() {
  return {M::template make<float>, M::template make<double>, M::traffic, M::bytes_held, M::merges};
}

// The records, one a method of the list, each defined in its method's .cpp.
#define MINISGD_DECLARE_RECORD(id, name, Params) extern const CompressorRecord id##_record;
MINISGD_COMPRESSION_METHODS(MINISGD_DECLARE_RECORD)
#undef MINISGD_DECLARE_RECORD

/// The record of method m.
const CompressorRecord& record(CompressionMethod m);

/// Whether method m's collective merges payloads.
inline bool merges_payloads(CompressionMethod m) { return record(m).merges; }

/// The collective calls of one reduce of the method `c` asks for.
inline std::vector<Collective> traffic_of(const CompressionConfig& c, const Exchange& e) {
  return record(c.method).traffic(c, e);
}

}  // namespace minisgd::compress
