#pragma once
// One name table per closed set of choices (an enum): the same strings parse a deck, print
// --dry-run, fill the report and appear in error messages. An enum E takes part by
// declaring, in its own namespace, `constexpr NameTable<E, N> names(E)`.
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace minisgd {

template <class E, std::size_t N>
using NameTable = std::array<std::pair<E, const char*>, N>;

/// The name of `e` in its table ("?" if the table lacks it, which a test rules out).
template <class E, class = decltype(names(E{}))>
constexpr const char* to_string(E e) {
  for (const auto& [value, name] : names(E{}))
    if (value == e) return name;
  return "?";
}

/// The value named `text`, or nothing.
template <class E>
std::optional<E> from_string(std::string_view text) {
  for (const auto& [value, name] : names(E{}))
    if (text == name) return value;
  return std::nullopt;
}

/// "a | b | c": the names of E, for messages.
template <class E>
std::string choices() {
  std::string list;
  for (const auto& [value, name] : names(E{}))
    list += (list.empty() ? "" : " | ") + std::string(name);
  return list;
}

}  // namespace minisgd
