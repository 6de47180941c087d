#pragma once
// A JSON value held by pointer, so that a struct can carry one (Config's resolved deck) while
// its header includes only the JSON library's json_fwd.hpp: json.hpp takes about a second to
// parse, and most translation units never read the value.
#include <memory>

#include <nlohmann/json_fwd.hpp>

namespace minisgd {

// Copies copy the value (a move copies too: Config is copied, rarely moved).
class JsonValue {
 public:
  JsonValue();  // null
  JsonValue(const JsonValue& other);
  JsonValue& operator=(const JsonValue& other);
  ~JsonValue();

  nlohmann::json& operator*() { return *value_; }
  const nlohmann::json& operator*() const { return *value_; }
  nlohmann::json* operator->() { return value_.get(); }
  const nlohmann::json* operator->() const { return value_.get(); }

 private:
  std::unique_ptr<nlohmann::json> value_;  // never null
};

}  // namespace minisgd
