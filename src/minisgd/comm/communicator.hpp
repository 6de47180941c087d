#pragma once
// The communicator interface every solver and compressor talks to (docs/design.md). Backends
// (MPI, NCCL) implement the untyped virtual calls; typed helpers sit on top. Every call is
// counted per kind: calls, bytes this rank sends, and wall time.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

namespace minisgd::precision {
struct bf16;
struct fp16;
}  // namespace minisgd::precision

namespace minisgd::comm {

enum class DType { f64, f32, f16, bf16, i8, i16, i32, i64, u8, u16, u32, u64 };
enum class Op { sum, max, min };
enum class Kind { allreduce, allgather, alltoall, sendrecv, bcast, barrier, count_ };

std::size_t size_of(DType t);
const char* name(Kind k);

template <class T>
constexpr DType dtype_of();
template <>
constexpr DType dtype_of<double>() {
  return DType::f64;
}
template <>
constexpr DType dtype_of<float>() {
  return DType::f32;
}
template <>
constexpr DType dtype_of<std::int8_t>() {
  return DType::i8;
}
template <>
constexpr DType dtype_of<std::int16_t>() {
  return DType::i16;
}
template <>
constexpr DType dtype_of<std::int32_t>() {
  return DType::i32;
}
template <>
constexpr DType dtype_of<std::int64_t>() {
  return DType::i64;
}
template <>
constexpr DType dtype_of<std::uint8_t>() {
  return DType::u8;
}
template <>
constexpr DType dtype_of<std::uint16_t>() {
  return DType::u16;
}
template <>
constexpr DType dtype_of<std::uint32_t>() {
  return DType::u32;
}
template <>
constexpr DType dtype_of<std::uint64_t>() {
  return DType::u64;
}
template <>
constexpr DType dtype_of<precision::fp16>() {
  return DType::f16;
}
template <>
constexpr DType dtype_of<precision::bf16>() {
  return DType::bf16;
}

struct KindStats {
  std::uint64_t calls = 0;
  std::uint64_t bytes_sent = 0;
  double seconds = 0.0;
};

struct Stats {
  std::array<KindStats, static_cast<int>(Kind::count_)> kinds{};
  KindStats& operator[](Kind k) { return kinds[static_cast<int>(k)]; }
  const KindStats& operator[](Kind k) const { return kinds[static_cast<int>(k)]; }
  std::uint64_t total_bytes() const;
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// True when the calls take device buffers (NCCL, CUDA-aware MPI): comm/view_collectives.hpp
  /// then hands device views over as they are instead of through a host mirror.
  virtual bool device_buffers() const { return false; }

  // Buffers are in the memory space the backend documents (host for MPI, device for NCCL).
  virtual void allreduce(void* buf, std::size_t count, DType t, Op op) = 0;
  /// recv holds size() * count elements, rank r's contribution at offset r * count.
  virtual void allgather(const void* send, void* recv, std::size_t count, DType t) = 0;
  /// send and recv hold size() * count elements; block r goes to / comes from rank r.
  virtual void alltoall(const void* send, void* recv, std::size_t count, DType t) = 0;
  virtual void sendrecv(const void* send, std::size_t send_count, int dest, void* recv,
                        std::size_t recv_count, int source, DType t) = 0;
  virtual void bcast(void* buf, std::size_t count, DType t, int root) = 0;
  virtual void barrier() = 0;

  template <class T>
  void allreduce(T* buf, std::size_t count, Op op = Op::sum) {
    allreduce(static_cast<void*>(buf), count, dtype_of<T>(), op);
  }
  template <class T>
  T allreduce_value(T v, Op op = Op::sum) {
    allreduce(&v, 1, op);
    return v;
  }
  template <class T>
  void allgather(const T* send, T* recv, std::size_t count) {
    allgather(static_cast<const void*>(send), static_cast<void*>(recv), count, dtype_of<T>());
  }
  template <class T>
  void bcast(T* buf, std::size_t count, int root) {
    bcast(static_cast<void*>(buf), count, dtype_of<T>(), root);
  }

  const Stats& stats() const { return stats_; }
  void reset_stats() { stats_ = Stats{}; }

 protected:
  Stats stats_;
};

}  // namespace minisgd::comm
