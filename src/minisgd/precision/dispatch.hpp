#pragma once
// From a run-time format to the compiled type that holds it.
#include <stdexcept>
#include <string>

#include "minisgd/precision/format_spec.hpp"
#include "minisgd/precision/storage_types.hpp"

namespace minisgd::precision {

template <class T>
struct type_tag {
  using type = T;
};

/// Calls fn(type_tag<T>{}) with T the compiled type of f: double, float, bf16 or fp16.
template <class F>
decltype(auto) with_compiled_type(Format f, F&& fn) {
  switch (f) {
    case Format::fp64: return fn(type_tag<double>{});
    case Format::fp32: return fn(type_tag<float>{});
    case Format::bf16: return fn(type_tag<bf16>{});
    case Format::fp16: return fn(type_tag<fp16>{});
    default: break;
  }
  throw std::logic_error(std::string("no compiled type for format ") + name(f));
}

/// Calls fn(type_tag<A>{}) with A the arithmetic type of f: double (fp64) or float (fp32).
template <class F>
decltype(auto) with_arithmetic_type(Format f, F&& fn) {
  if (f == Format::fp64) return fn(type_tag<double>{});
  if (f == Format::fp32) return fn(type_tag<float>{});
  throw std::logic_error(std::string("no arithmetic type for format ") + name(f));
}

}  // namespace minisgd::precision
