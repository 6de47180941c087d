#pragma once
// The nine precision choices of one CA-SGD outer step (docs/design.md), the presets, and how a
// plan is realized by the few compiled type combinations (docs/precision.md).
//
// Compiled: the data matrix is stored as S ∈ {double, float, bf16, fp16}; the Gram reads
// its input as In ∈ {double, float, bf16, fp16}; all arithmetic (Gram accumulation,
// margins, recurrence, gradient, weights) runs in A ∈ {double, float}; the packed message
// travels as W ∈ {double, float, bf16, fp16}. A knob whose format is one of these is
// native; any other choice is emulated by rounding to the format at the point the knob
// governs, after every operation for accumulations (values kept in a wider container).
#include <array>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "minisgd/core/names.hpp"
#include "minisgd/precision/format_spec.hpp"
#include "minisgd/precision/rounder.hpp"

namespace minisgd::precision {

enum class Knob {
  data,            // storage of the data matrix X (hence of every batch Y)
  gram_input,      // the Y tiles as fed to the Gram product
  gram_accum,      // accumulation of the Gram dot products
  gram_wire,       // the Gram on the wire (AllReduce payload and summation)
  margin_accum,    // accumulation of the partial margins r = Y w
  margin_wire,     // storage and wire format of r
  recurrence,      // arithmetic of the inner recurrence (z_j, u_j)
  gradient_accum,  // accumulation of the gradient product Yᵀu
  weights,         // storage and update of w
};
constexpr int kKnobs = 9;
constexpr std::array<Knob, kKnobs> all_knobs = {
    Knob::data,        Knob::gram_input, Knob::gram_accum,     Knob::gram_wire, Knob::margin_accum,
    Knob::margin_wire, Knob::recurrence, Knob::gradient_accum, Knob::weights};

/// The deck keys of the knobs (precision.<name>).
constexpr NameTable<Knob, kKnobs> names(Knob) {
  return {{{Knob::data, "data"},
           {Knob::gram_input, "gram_input"},
           {Knob::gram_accum, "gram_accum"},
           {Knob::gram_wire, "gram_wire"},
           {Knob::margin_accum, "margin_accum"},
           {Knob::margin_wire, "margin_wire"},
           {Knob::recurrence, "recurrence"},
           {Knob::gradient_accum, "gradient_accum"},
           {Knob::weights, "weights"}}};
}
constexpr const char* name(Knob k) { return minisgd::to_string(k); }

enum class Rounding { nearest, stochastic };
constexpr NameTable<Rounding, 2> names(Rounding) {
  return {{{Rounding::nearest, "nearest"}, {Rounding::stochastic, "stochastic"}}};
}

/// The named starting points of a plan (docs/precision.md).
enum class Preset { fp64, fp32, mixed, mixed_wire_bf16 };
constexpr NameTable<Preset, 4> names(Preset) {
  return {{{Preset::fp64, "fp64"},
           {Preset::fp32, "fp32"},
           {Preset::mixed, "mixed"},
           {Preset::mixed_wire_bf16, "mixed-wire-bf16"}}};
}

struct Plan {
  Preset preset = Preset::fp32;
  Rounding rounding = Rounding::nearest;
  std::array<FormatSpec, kKnobs> formats{};

  FormatSpec& operator[](Knob k) { return formats[int(k)]; }
  const FormatSpec& operator[](Knob k) const { return formats[int(k)]; }
  /// True when every knob is `f` (a uniform fp32 or fp64 run).
  bool uniform(Format f) const;
};

/// The nine knobs of a preset.
Plan preset_plan(Preset preset);
/// The preset named `name`; std::invalid_argument for a name not in names(Preset).
Plan preset_plan(const std::string& name);

/// How a plan maps onto the compiled types. Containers are fp64, fp32, bf16 or fp16.
struct Realization {
  Format storage;       // S: container of X
  Format gram_input;    // In: container the Gram reads
  Format compute;       // A: fp64 if any arithmetic or wire knob is fp64, else fp32
  Format wire;          // W of an outer step with Gram blocks ([G, r] in one message)
  Format margins_wire;  // W of an outer step of one inner step (r alone)
  std::array<bool, kKnobs> native{};
  std::array<std::string, kKnobs> how;  // one line per knob: what actually happens
};

Realization realize(const Plan& plan);

/// The smallest compiled container that holds every value of `f` exactly.
Format container(const FormatSpec& f);

/// The rounding a knob applies to values computed in `arithmetic` (fp64 or fp32), with a
/// stochastic-rounding stream of its own derived from the run seed.
Rounder rounder(const Plan& plan, Knob k, Format arithmetic, std::uint64_t run_seed);

/// The report's "precision" section: preset, rounding, and per knob its format, whether
/// it is native, and how it is realized.
nlohmann::json to_json(const Plan& plan, const Realization& realized);

}  // namespace minisgd::precision
