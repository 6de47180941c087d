#include "minisgd/core/json_value.hpp"

#include <nlohmann/json.hpp>

namespace minisgd {

JsonValue::JsonValue() : value_(std::make_unique<nlohmann::json>()) {}
JsonValue::JsonValue(const JsonValue& other) : value_(std::make_unique<nlohmann::json>(*other)) {}
JsonValue& JsonValue::operator=(const JsonValue& other) {
  *value_ = *other;
  return *this;
}
JsonValue::~JsonValue() = default;

}  // namespace minisgd
