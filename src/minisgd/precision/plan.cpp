#include "minisgd/precision/plan.hpp"

#include <stdexcept>

#include <nlohmann/json.hpp>

namespace minisgd::precision {
namespace {

bool compiled(Format f) {
  return f == Format::fp64 || f == Format::fp32 || f == Format::bf16 || f == Format::fp16;
}

// Emulated wire formats travel as fp32: every fp8 and custom value is exact there, and
// MPI sums them in fp32 before the result is rounded back to the format.
Format wire_container(const FormatSpec& f) { return compiled(f.format) ? f.format : Format::fp32; }

std::string text(const FormatSpec& f) { return to_string(f); }
std::string text(Format f) { return name(f); }

}  // namespace

bool Plan::uniform(Format f) const {
  for (const FormatSpec& s : formats)
    if (s.format != f) return false;
  return true;
}

Plan preset_plan(Preset preset) {
  const FormatSpec f64{Format::fp64, {}}, f32{Format::fp32, {}}, b16{Format::bf16, {}};
  Plan p;
  p.preset = preset;
  p.formats.fill(preset == Preset::fp64 ? f64 : f32);
  if (preset == Preset::mixed || preset == Preset::mixed_wire_bf16) {
    // The published recipe: X and the margin vector in bf16, the Gram from bf16 inputs with
    // fp32 accumulation, communicated in fp32; recurrence and weights in fp32.
    p[Knob::data] = p[Knob::gram_input] = p[Knob::margin_wire] = b16;
    if (preset == Preset::mixed_wire_bf16) p[Knob::gram_wire] = b16;
  }
  return p;
}

Plan preset_plan(const std::string& name) {
  if (const auto preset = from_string<Preset>(name)) return preset_plan(*preset);
  throw std::invalid_argument("unknown precision preset '" + name +
                              "'; accepted: " + choices<Preset>());
}

Format container(const FormatSpec& f) {
  if (compiled(f.format)) return f.format;
  // fp8 values and custom formats with at most 7 fraction bits (E <= 8) are bf16 values.
  if (f.format == Format::fp8_e4m3 || f.format == Format::fp8_e5m2) return Format::bf16;
  return f.custom.M <= 7 ? Format::bf16 : Format::fp32;
}

Realization realize(const Plan& p) {
  Realization r;
  r.storage = container(p[Knob::data]);
  r.gram_input = container(p[Knob::gram_input]);
  r.compute = Format::fp32;
  for (Knob k : all_knobs)
    if (k != Knob::data && k != Knob::gram_input && p[k].format == Format::fp64)
      r.compute = Format::fp64;
  const Format gw = wire_container(p[Knob::gram_wire]), mw = wire_container(p[Knob::margin_wire]);
  r.margins_wire = mw;
  r.wire = gw == mw ? gw : (gw == Format::fp64 || mw == Format::fp64) ? Format::fp64 : Format::fp32;

  const std::string A = text(r.compute);
  for (Knob k : all_knobs) {
    const FormatSpec& f = p[k];
    const std::string F = text(f);
    bool native = false;
    std::string how;
    switch (k) {
      case Knob::data:
        native = r.storage == f.format;
        how = native ? "X stored as " + F + " (" + std::to_string(bytes_per_value(f.format)) +
                           " bytes a value)"
                     : "X rounded to " + F + ", stored in " + text(r.storage) + " containers (" +
                           std::to_string(bytes_per_value(r.storage)) + " bytes a value)";
        break;
      case Knob::gram_input:
        native = r.gram_input == f.format;
        how = native
                  ? (r.gram_input == r.storage ? "the Gram reads X's " + F + " values directly"
                                               : "batches converted from " + text(r.storage) +
                                                     " to " + F + " before the Gram")
                  : "batches rounded to " + F + ", held as " + text(r.gram_input) + " for the Gram";
        break;
      case Knob::gram_wire:
        native = r.wire == f.format;
        how = native ? "the packed Gram travels and is summed as " + F +
                           (bytes_per_value(f.format) == 2
                                ? " (every partial sum rounded to " + F + ")"
                                : "")
                     : "Gram rounded to " + F +
                           " before and after the AllReduce; travels and is "
                           "summed as " +
                           text(r.wire);
        break;
      case Knob::margin_wire:
        native = r.wire == f.format;
        how = native ? "r travels in the packed message as " + F
                     : "r rounded to " + F +
                           " before and after the AllReduce; travels in the one "
                           "packed message as " +
                           text(r.wire) +
                           (r.margins_wire == f.format
                                ? " (as " + F + " when an outer step has one inner step)"
                                : "");
        break;
      case Knob::gram_accum:
      case Knob::margin_accum:
      case Knob::gradient_accum:
        native = r.compute == f.format;
        how = native ? "accumulates in " + F
                     : "accumulates in " + A + ", rounded to " + F + " after every addition";
        break;
      case Knob::recurrence:
        native = r.compute == f.format;
        how = native ? "z_j and u_j computed in " + F
                     : "computed in " + A + ", rounded to " + F + " after every operation";
        break;
      case Knob::weights:
        native = r.compute == f.format;
        how = native ? "w stored and updated in " + F
                     : "w kept in " + A + ", rounded to " + F + " after every update";
        break;
    }
    r.native[int(k)] = native;
    r.how[int(k)] = how;
  }
  return r;
}

Rounder rounder(const Plan& p, Knob k, Format arithmetic, std::uint64_t run_seed) {
  // Distinct Philox keys per knob, so two knobs never reuse the same random bits.
  const std::uint64_t seed = run_seed * 0x9E3779B97F4A7C15ull + std::uint64_t(k) + 1;
  return Rounder::to(p[k], arithmetic, p.rounding == Rounding::stochastic, seed);
}

nlohmann::json to_json(const Plan& p, const Realization& r) {
  nlohmann::json knobs = nlohmann::json::object();
  for (Knob k : all_knobs)
    knobs[name(k)] = {{"format", text(p[k])}, {"native", r.native[int(k)]}, {"how", r.how[int(k)]}};
  return {{"preset", minisgd::to_string(p.preset)},
          {"rounding", minisgd::to_string(p.rounding)},
          {"compiled",
           {{"storage", text(r.storage)},
            {"gram_input", text(r.gram_input)},
            {"compute", text(r.compute)},
            {"wire", text(r.wire)},
            {"wire_single_step", text(r.margins_wire)}}},
          {"knobs", knobs}};
}

}  // namespace minisgd::precision
