#include "minisgd/perfmodel/machine.hpp"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include "minisgd/compress/record.hpp"
#include "minisgd/core/errors.hpp"

namespace minisgd::perfmodel {

namespace {

// Reads positive numbers (counts: zero too) from one map of the file, refusing unknown and
// missing keys.
class Section {
 public:
  Section(const YAML::Node& root, const std::string& name, const std::string& origin)
      : node_(root[name]), name_(name), origin_(origin) {
    if (!node_ || !node_.IsMap()) fail(root, name + ": expected a map of keys");
  }
  double number(const std::string& key, double scale) {
    if (!node_[key]) fail(node_, name_ + "." + key + ": missing");
    return optional(key, scale, 0);
  }
  // A key that may be left out (`absent` then).
  double optional(const std::string& key, double scale, double absent) {
    return read(key, scale, absent, false);
  }
  // A count that may be 0 or left out (0 then): passes a kernel makes.
  double count(const std::string& key) { return read(key, 1, 0, true); }
  // An optional list of [x, y] pairs named `x` and `y` in errors, each scaled, x > 0 and
  // increasing, y > 0 (`y_zero`: >= 0) and monotone (`rising`: not decreasing; else not
  // increasing); empty when absent.
  std::vector<std::pair<double, double>> pairs(const std::string& key, const std::string& x,
                                               const std::string& y, double x_scale, double y_scale,
                                               bool y_zero, bool rising) {
    read_.insert(key);
    const YAML::Node v = node_[key];
    std::vector<std::pair<double, double>> out;
    if (!v) return out;
    const std::string what = name_ + "." + key, pair = "[" + x + ", " + y + "]";
    if (!v.IsSequence() || v.size() == 0) fail(v, what + ": expected a list of " + pair + " pairs");
    for (const YAML::Node& p : v) {
      if (!p.IsSequence() || p.size() != 2)
        fail(p, what + ": expected a " + pair + " pair of numbers");
      double a = 0, b = 0;
      try {
        a = p[0].as<double>() * x_scale;
        b = p[1].as<double>() * y_scale;
      } catch (const YAML::Exception&) {
        fail(p, what + ": expected a " + pair + " pair of numbers");
      }
      if (!(a > 0) || !(y_zero ? b >= 0 : b > 0))
        fail(p, what + ": " + x + " must be > 0 and " + y + (y_zero ? " >= 0" : " > 0"));
      if (!out.empty() &&
          !(a > out.back().first && (rising ? b >= out.back().second : b <= out.back().second)))
        fail(p, what + ": " + x + " must increase and " + y +
                    (rising ? " must not decrease" : " must not increase"));
      out.emplace_back(a, b);
    }
    return out;
  }
  void finish() const {
    for (const auto& kv : node_)
      if (!read_.count(kv.first.as<std::string>()))
        fail(kv.first, name_ + "." + kv.first.as<std::string>() + ": unknown key");
  }

 private:
  double read(const std::string& key, double scale, double absent, bool zero_allowed) {
    read_.insert(key);
    const YAML::Node v = node_[key];
    if (!v) return absent;
    double x = 0;
    try {
      x = v.as<double>();
    } catch (const YAML::Exception&) {
      fail(v, name_ + "." + key + ": expected a number");
    }
    if (zero_allowed ? !(x >= 0) : !(x > 0))
      fail(v, name_ + "." + key + (zero_allowed ? ": must be >= 0" : ": must be > 0"));
    return x * scale;
  }
  [[noreturn]] void fail(const YAML::Node& at, const std::string& what) const {
    std::ostringstream msg;
    msg << origin_ << ":" << at.Mark().line + 1 << ": " << what;
    throw InputError(msg.str());
  }
  YAML::Node node_;
  std::string name_, origin_;
  std::set<std::string> read_;
};

}  // namespace

Machine parse_machine(const std::string& yaml_text, const std::string& origin) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    throw InputError(origin + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  if (!root.IsMap()) throw InputError(origin + ": expected a map of keys");
  for (const auto& kv : root) {
    const std::string k = kv.first.as<std::string>();
    if (k != "name" && k != "source" && k != "memory" && k != "kernels" && k != "host" &&
        k != "network" && k != "compressors" && k != "compressors_streaming" && k != "merges")
      throw InputError(origin + ":" + std::to_string(kv.first.Mark().line + 1) + ": " + k +
                       ": unknown key");
  }
  Machine m;
  m.name = root["name"] ? root["name"].as<std::string>() : origin;
  m.source = root["source"] ? root["source"].as<std::string>() : "";
  Section memory(root, "memory", origin), kernels(root, "kernels", origin),
      host(root, "host", origin), network(root, "network", origin);
  m.memory_Bps = memory.number("bandwidth_GBps", 1e9);
  m.cache_bytes = memory.number("cache_MB", 1e6);
  m.resident = memory.pairs("resident_GBps", "MB", "GBps", 1e6, 1e9, false, false);
  m.reread_Bps = memory.optional("reread_GBps", 1e9, 0);
  m.stream_efficiency = kernels.number("stream_efficiency", 1);
  m.row_s = kernels.number("row_ns", 1e-9);
  m.launch_s = kernels.number("launch_us", 1e-6);
  m.sync_s = kernels.optional("sync_us", 1e-6, 0);
  m.gemm_fp64_Fps = kernels.number("gemm_fp64_GFps", 1e9);
  m.gemm_fp32_Fps = kernels.number("gemm_fp32_GFps", 1e9);
  m.gemm_bf16_Fps = kernels.number("gemm_bf16_GFps", 1e9);
  m.gram_entry_s = kernels.number("gram_entry_ns", 1e-9);
  m.gram_call_s = kernels.optional("gram_call_us", 1e-6, 0);
  m.gram_whole_rows = kernels.count("gram_whole_rows");
  m.gram_scratch_passes = kernels.count("gram_scratch_passes");
  m.gram_bf16_scratch_passes = kernels.count("gram_bf16_scratch_passes");
  m.scalar_Fps = kernels.number("scalar_GFps", 1e9);
  m.decode_s = kernels.number("decode_ns", 1e-9);
  m.sparse_nnz_s = kernels.optional("sparse_nnz_ns", 1e-9, m.sparse_nnz_s);
  m.ca_row_s = kernels.number("ca_row_ns", 1e-9);
  m.update_value_s[std::size_t(OptimizerKind::momentum)] = kernels.optional("momentum_ns", 1e-9, 0);
  m.update_value_s[std::size_t(OptimizerKind::adam)] = kernels.optional("adam_ns", 1e-9, 0);
  m.sgd_step_host_s = host.number("sgd_step_us", 1e-6);
  m.ca_outer_host_s = host.number("ca_outer_us", 1e-6);
  m.ca_inner_host_s = host.number("ca_inner_us", 1e-6);
  m.wait_overshoot_s = host.number("wait_overshoot_us", 1e-6);
  m.cores = host.optional("cores", 1, 0);
  m.switch_s = m.cores > 0 ? host.number("switch_us", 1e-6) : host.optional("switch_us", 1e-6, 0);
  m.latency_s = network.number("latency_us", 1e-6);
  m.network_Bps = network.number("bandwidth_GBps", 1e9);
  m.transfer = network.pairs("transfer_us", "bytes", "us", 1, 1e-6, true, true);
  m.network_ranks = network.optional("ranks", 1, 0);
  // Optional sections of ns per value by the deck's method names, for the methods `has`.
  const auto per_method = [&](const char* key, PerMethod& figures, auto has) {
    if (!root[key]) return;
    Section section(root, key, origin);
    for (const auto& [method, name] : names(CompressionMethod{}))
      if (has(method)) figures[std::size_t(method)] = section.optional(name, 1e-9, 0);
    section.finish();
  };
  per_method("compressors", m.compress_value_s,
             [](CompressionMethod c) { return c != CompressionMethod::none; });
  per_method("compressors_streaming", m.compress_streaming_value_s,
             [](CompressionMethod c) { return c != CompressionMethod::none; });
  per_method("merges", m.merge_value_s, compress::merges_payloads);  // the methods that merge
  memory.finish();
  kernels.finish();
  host.finish();
  network.finish();
  return m;
}

double Machine::transfer_seconds(double bytes) const {
  if (transfer.empty()) return bytes / network_Bps;
  const auto& t = transfer;
  if (bytes <= t.front().first || t.size() == 1) return t.front().second * bytes / t.front().first;
  std::size_t i = 1;  // the segment [t[i-1], t[i]] holding bytes, or the last one
  while (i + 1 < t.size() && bytes > t[i].first) ++i;
  const double slope = (t[i].second - t[i - 1].second) / (t[i].first - t[i - 1].first);
  return t[i - 1].second + slope * (bytes - t[i - 1].first);
}

double Machine::rows_Bps(double bytes) const {
  const double memory = memory_Bps * stream_efficiency;
  const auto& r = resident;
  if (r.empty() || bytes > r.back().first) return memory;
  if (bytes <= r.front().first) return r.front().second;
  std::size_t i = 1;  // the segment [r[i-1], r[i]] holding bytes
  while (bytes > r[i].first) ++i;
  const double f = std::log(bytes / r[i - 1].first) / std::log(r[i].first / r[i - 1].first);
  return r[i - 1].second + f * (r[i].second - r[i - 1].second);
}

Machine load_machine(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot open the machine file");
  std::stringstream buf;
  buf << in.rdbuf();
  return parse_machine(buf.str(), path);
}

}  // namespace minisgd::perfmodel
