#pragma once
// compression.cast: the deck parameters of the cast method (compress/cast.hpp).
#include "minisgd/core/names.hpp"

namespace minisgd {

/// cast.format: the 16-bit format the gradient travels and is summed in.
enum class CastFormat { fp16, bf16 };
constexpr NameTable<CastFormat, 2> names(CastFormat) {
  return {{{CastFormat::fp16, "fp16"}, {CastFormat::bf16, "bf16"}}};
}

struct CastParams {
  CastFormat format = CastFormat::fp16;

  /// Reads the method's map of the deck. (Every method's parameters read themselves so; the
  /// section is config/deck_reader.hpp's DeckSection, a template parameter so that this header
  /// needs no YAML.)
  template <class Section>
  void read(Section& s) {
    format = s.choice("format", format);
  }
};

}  // namespace minisgd
