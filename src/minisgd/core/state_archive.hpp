#pragma once
// A rank's saved run state for checkpoint and restart (docs/output.md, "Checkpoints"): named
// byte records in the order they were saved. Every stateful part has one function that takes
// a StateArchive and names its pieces; the same function saves (archive saving) and restores
// (archive loading), so the two directions cannot drift apart. Restoring checks every name and
// size, so a checkpoint that does not fit this run is refused instead of misread.
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "minisgd/core/errors.hpp"
#include "minisgd/core/kokkos.hpp"

namespace minisgd {

class StateArchive {
 public:
  /// An empty archive that records what is saved into it.
  StateArchive() = default;
  /// An archive that restores from `bytes` (one rank's state as saved).
  explicit StateArchive(std::string bytes) : bytes_(std::move(bytes)), loading_(true) {}

  bool loading() const { return loading_; }
  /// The saved records.
  const std::string& bytes() const { return bytes_; }

  /// Saves, or restores into, the n bytes at `data` under `name`.
  void raw(const std::string& name, void* data, std::size_t n) {
    if (!loading_) {
      put(std::uint64_t(name.size()));
      bytes_ += name;
      put(std::uint64_t(n));
      // (n = 0: an empty view's data may be null, which neither append nor memcpy accept)
      if (n > 0) bytes_.append(static_cast<const char*>(data), n);
      return;
    }
    const std::uint64_t name_size = take();
    const std::string found = name_size <= left() ? bytes_.substr(at_, name_size) : "";
    at_ += found.size();
    const std::uint64_t size = found.size() == name_size ? take() : ~0ull;
    if (found != name || size != n || size > left())
      throw InputError("checkpoint does not fit this run: expected '" + name + "' of " +
                       std::to_string(n) + " bytes, found '" + found + "' of " +
                       (size == ~0ull ? std::string("?") : std::to_string(size)) + " bytes");
    if (n > 0) std::memcpy(data, bytes_.data() + at_, n);
    at_ += n;
  }

  /// A trivially copyable value.
  template <class T>
  void value(const std::string& name, T& v) {
    static_assert(std::is_trivially_copyable_v<T>, "save plain values only");
    raw(name, &v, sizeof v);
  }

  /// A contiguous Kokkos view, through a host mirror (its length must match on restore).
  template <class V>
  void view(const std::string& name, const V& v) {
    using E = typename V::non_const_value_type;
    auto host = Kokkos::create_mirror_view(v);
    if (!loading_) {
      sync_for_host("state saved from the device");
      Kokkos::deep_copy(host, v);
    }
    raw(name, host.data(), host.span() * sizeof(E));
    if (loading_) Kokkos::deep_copy(v, host);
  }

  /// Throws unless a restore read every record (nothing of the checkpoint went unused).
  void finish() const {
    if (loading_ && at_ != bytes_.size())
      throw InputError("checkpoint does not fit this run: " + std::to_string(bytes_.size() - at_) +
                       " bytes of state left over");
  }

 private:
  std::size_t left() const { return bytes_.size() - at_; }
  void put(std::uint64_t n) { bytes_.append(reinterpret_cast<const char*>(&n), sizeof n); }
  std::uint64_t take() {
    std::uint64_t n = ~0ull;
    if (left() >= sizeof n) {
      std::memcpy(&n, bytes_.data() + at_, sizeof n);
      at_ += sizeof n;
    }
    return n;
  }

  std::string bytes_;
  bool loading_ = false;
  std::size_t at_ = 0;
};

/// Saves or restores a vector of plain values (its length travels with it).
template <class T>
void state_vector(StateArchive& a, const std::string& name, std::vector<T>& v) {
  std::uint64_t n = v.size();
  a.value(name + ".size", n);
  if (a.loading()) {
    if (n > a.bytes().size()) throw InputError("checkpoint does not fit this run: " + name);
    v.resize(n);
  }
  a.raw(name, v.data(), n * sizeof(T));
}

}  // namespace minisgd
