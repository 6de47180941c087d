#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "minisgd/config/config.hpp"

namespace minisgd {

/// The most bytes a deck file may hold (decks are a few KiB; a data file given as the deck is
/// refused, not read into memory).
constexpr std::uint64_t kMaxDeckBytes = std::uint64_t(1) << 20;

/// Reads a YAML deck (a regular file, not empty), applies `section.key=value` overrides, validates
/// every key and returns the typed configuration. Throws InputError naming the key and the deck
/// line (or the --set override) for unknown keys, wrong types and out-of-range values.
Config load_deck(const std::string& path, const std::vector<std::string>& overrides = {});

/// Same, from YAML text (tests); `origin` names it in messages.
Config parse_deck(const std::string& yaml_text, const std::string& origin,
                  const std::vector<std::string>& overrides = {});

/// Throws InputError "deck.yaml:12: section.key: what" (or "--set section.key: what") for a
/// key of a parsed deck: for checks made after parsing, such as what this build can run.
[[noreturn]] void fail_key(const Config& c, const std::string& key, const std::string& what);

}  // namespace minisgd
