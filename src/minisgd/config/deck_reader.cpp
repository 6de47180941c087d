#include "minisgd/config/deck_reader.hpp"

#include <cmath>
#include <sstream>

#include <nlohmann/json.hpp>

#include "minisgd/core/errors.hpp"

namespace minisgd {

DeckSection::DeckSection(YAML::Node node, std::string path, std::string origin,
                         nlohmann::json* resolved, const std::set<std::string>* overridden,
                         std::map<std::string, std::string>* where)
    : node_(std::move(node)),
      path_(std::move(path)),
      origin_(std::move(origin)),
      resolved_(resolved),
      overridden_(overridden),
      where_(where) {
  if (node_ && !node_.IsNull() && !node_.IsMap()) {
    std::ostringstream msg;
    msg << origin_ << ":" << node_.Mark().line + 1 << ": " << path_ << ": expected a map of keys";
    throw InputError(msg.str());
  }
}

std::string DeckSection::full(const std::string& key) const {
  return path_.empty() ? key : path_ + "." + key;
}

std::string DeckSection::locate(const std::string& key) const {
  const std::string k = full(key);
  if (overridden_ && overridden_->count(k)) return "--set " + k;
  const YAML::Node n = (node_ && node_.IsMap() && node_[key]) ? node_[key] : node_;
  const int line = n ? n.Mark().line + 1 : 0;
  return origin_ + (line > 0 ? ":" + std::to_string(line) : "") + ": " + k;
}

void DeckSection::fail(const std::string& key, const std::string& what) const {
  throw InputError(locate(key) + ": " + what);
}

void DeckSection::refuse_null(const std::string& key) const {
  // `key: ~` or `key:` with nothing after it would otherwise read as the default.
  if (node_ && node_.IsMap() && node_[key] && node_[key].IsNull())
    fail(key, "no value given (null): give one, or leave the key out for its default");
}

bool DeckSection::has(const std::string& key) const {
  return node_ && node_.IsMap() && node_[key] && !node_[key].IsNull();
}

bool DeckSection::is_map(const std::string& key) const { return has(key) && node_[key].IsMap(); }

void DeckSection::record(const std::string& key, nlohmann::json value) {
  read_.insert(key);
  if (where_) (*where_)[full(key)] = locate(key);
  if (!resolved_) return;
  std::string pointer = "/" + full(key);
  for (char& c : pointer) c = (c == '.') ? '/' : c;
  (*resolved_)[nlohmann::json::json_pointer(pointer)] = std::move(value);
}

YAML::Node DeckSection::scalar(const std::string& key, const char* expected) {
  const YAML::Node n = node_[key];
  if (!n.IsScalar())
    fail(key, std::string("expected ") + expected + ", got a " + (n.IsMap() ? "map" : "list"));
  return n;
}

std::string DeckSection::text(const std::string& key, const std::string& def) {
  refuse_null(key);
  std::string v = def;
  if (has(key)) v = scalar(key, "a string").as<std::string>();
  record(key, v);
  return v;
}

double DeckSection::number(const std::string& key, double def, double lo, double hi) {
  refuse_null(key);
  double v = def;
  if (has(key)) {
    const YAML::Node n = scalar(key, "a number");
    try {
      v = n.as<double>();
    } catch (const YAML::Exception&) {
      fail(key, "expected a number, got '" + quoted_input(n.Scalar()) + "'");
    }
  }
  if (!std::isfinite(v) || v < lo || v > hi) {
    std::ostringstream msg;
    msg << v << " is out of range [" << lo << ", " << hi << "]";
    fail(key, msg.str());
  }
  record(key, v);
  return v;
}

std::optional<double> DeckSection::optional_number(const std::string& key, double lo, double hi) {
  refuse_null(key);
  if (!has(key)) {
    record(key, nullptr);
    return std::nullopt;
  }
  return number(key, 0.0, lo, hi);
}

std::int64_t DeckSection::integer(const std::string& key, std::int64_t def, std::int64_t lo,
                                  std::int64_t hi) {
  refuse_null(key);
  std::int64_t v = def;
  if (has(key)) {
    const YAML::Node n = scalar(key, "an integer");
    try {
      v = n.as<std::int64_t>();
    } catch (const YAML::Exception&) {
      // Accept 1e6-style integers users write for sizes, but nothing fractional.
      double d = 0;
      bool ok = true;
      try {
        d = n.as<double>();
      } catch (const YAML::Exception&) {
        ok = false;
      }
      if (!ok || d != std::floor(d) || std::fabs(d) > 9.0e15)
        fail(key, "expected an integer, got '" + quoted_input(n.Scalar()) + "'");
      v = static_cast<std::int64_t>(d);
    }
  }
  if (v < lo || v > hi) {
    std::ostringstream msg;
    msg << v << " is out of range [" << lo << ", " << hi << "]";
    fail(key, msg.str());
  }
  record(key, v);
  return v;
}

bool DeckSection::flag(const std::string& key, bool def) {
  refuse_null(key);
  bool v = def;
  if (has(key)) {
    const YAML::Node n = scalar(key, "true or false");
    try {
      v = n.as<bool>();
    } catch (const YAML::Exception&) {
      fail(key, "expected true or false, got '" + quoted_input(n.Scalar()) + "'");
    }
  }
  record(key, v);
  return v;
}

DeckSection DeckSection::section(const std::string& key) {
  read_.insert(key);
  YAML::Node child = has(key) ? node_[key] : YAML::Node();
  if (has(key) && !child.IsMap()) fail(key, "expected a map of keys");
  return DeckSection(child, full(key), origin_, resolved_, overridden_, where_);
}

void DeckSection::finish() const {
  if (!node_ || !node_.IsMap()) return;
  for (const auto& kv : node_) {
    const std::string key = kv.first.as<std::string>();
    if (!read_.count(key)) {
      if (overridden_) {  // an override made the key, or a section above the key it names
        const std::string k = full(key);
        for (const std::string& o : *overridden_)
          if (o == k)
            throw InputError("--set " + o + ": unknown key");
          else if (o.rfind(k + ".", 0) == 0)
            throw InputError("--set " + o + ": unknown section '" + k + "'");
      }
      std::ostringstream msg;
      msg << origin_ << ":" << kv.first.Mark().line + 1 << ": unknown key '" << full(key) << "'";
      throw InputError(msg.str());
    }
  }
}

}  // namespace minisgd
