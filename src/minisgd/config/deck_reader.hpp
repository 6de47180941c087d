#pragma once
// A YAML map with the path that leads to it. Every read is type- and range-checked and
// recorded (key -> value in force) for the report; keys never read are unknown keys.
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "minisgd/core/errors.hpp"
#include "minisgd/core/names.hpp"

namespace minisgd {

class DeckSection {
 public:
  DeckSection(YAML::Node node, std::string path, std::string origin, nlohmann::json* resolved,
              const std::set<std::string>* overridden,
              std::map<std::string, std::string>* where = nullptr);

  bool has(const std::string& key) const;
  bool is_map(const std::string& key) const;

  std::string text(const std::string& key, const std::string& def);
  /// One of the names of enum E (core/names.hpp); `def` when the key is absent.
  template <class E>
  E choice(const std::string& key, E def) {
    const std::string v = text(key, to_string(def));
    if (const auto e = from_string<E>(v)) return *e;
    fail(key, "'" + quoted_input(v) + "' is not one of " + choices<E>());
  }
  double number(const std::string& key, double def,
                double lo = -std::numeric_limits<double>::infinity(),
                double hi = std::numeric_limits<double>::infinity());
  std::optional<double> optional_number(const std::string& key, double lo, double hi);
  std::int64_t integer(const std::string& key, std::int64_t def, std::int64_t lo,
                       std::int64_t hi = std::numeric_limits<std::int64_t>::max());
  bool flag(const std::string& key, bool def);
  /// A nested map; an absent key gives an empty section.
  DeckSection section(const std::string& key);

  /// Throws InputError for the first key of this map that was never read.
  void finish() const;

  /// "origin:line: path.key: what" for the key (or "--set path.key: what").
  [[noreturn]] void fail(const std::string& key, const std::string& what) const;
  /// "origin:line: path.key" (or "--set path.key"): where the key was given.
  std::string locate(const std::string& key) const;

 private:
  YAML::Node scalar(const std::string& key, const char* expected);
  void refuse_null(const std::string& key) const;
  std::string full(const std::string& key) const;
  void record(const std::string& key, nlohmann::json value);

  YAML::Node node_;
  std::string path_;
  std::string origin_;
  nlohmann::json* resolved_;
  const std::set<std::string>* overridden_;
  std::map<std::string, std::string>* where_;
  std::set<std::string> read_;
};

}  // namespace minisgd
