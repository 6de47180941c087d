#include "minisgd/comm/mpi_communicator.hpp"

#include <limits>
#include <stdexcept>
#include <string>

#include "minisgd/comm/timed_call.hpp"
#include "minisgd/precision/storage_types.hpp"

namespace minisgd::comm {
namespace {

MPI_Datatype mpi_type(DType t) {
  switch (t) {
    case DType::f64: return MPI_DOUBLE;
    case DType::f32: return MPI_FLOAT;
    case DType::i8: return MPI_INT8_T;
    case DType::i16: return MPI_INT16_T;
    case DType::i32: return MPI_INT32_T;
    case DType::i64: return MPI_INT64_T;
    case DType::u8: return MPI_UINT8_T;
    case DType::u16:
    case DType::f16:
    case DType::bf16: return MPI_UINT16_T;
    case DType::u32: return MPI_UINT32_T;
    case DType::u64: return MPI_UINT64_T;
  }
  throw std::logic_error("mpi_type: unknown DType");
}

MPI_Op mpi_op(Op op) {
  switch (op) {
    case Op::sum: return MPI_SUM;
    case Op::max: return MPI_MAX;
    case Op::min: return MPI_MIN;
  }
  throw std::logic_error("mpi_op: unknown Op");
}

int checked_count(std::size_t n) {
  if (n > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw std::runtime_error("MPI message of " + std::to_string(n) + " elements exceeds INT_MAX");
  return static_cast<int>(n);
}

void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) throw std::runtime_error(std::string("MPI error in ") + what);
}

// 16-bit float reductions: each partial result is computed in float and rounded back to
// the format. The float sum of two bf16 or fp16 values rounded once more to the format is
// the correctly rounded sum (float has at least 2p+2 bits for both), so every reduction step
// is one correctly rounded addition, as a native 16-bit adder would do it.
template <class T, Op op>
void reduce_16bit(void* in, void* inout, int* len, MPI_Datatype*) {
  const T* a = static_cast<const T*>(in);
  T* b = static_cast<T*>(inout);
  for (int i = 0; i < *len; ++i) {
    const float x = precision::to_float(a[i]), y = precision::to_float(b[i]);
    float r = x + y;
    if (op == Op::max) r = (x > y || x != x) ? x : y;
    if (op == Op::min) r = (x < y || x != x) ? x : y;
    b[i] = precision::from_float<T>(r);
  }
}

template <class T>
void create_16bit_ops(std::array<MPI_Op, 3>& ops) {
  check(MPI_Op_create(&reduce_16bit<T, Op::sum>, 1, &ops[int(Op::sum)]), "MPI_Op_create");
  check(MPI_Op_create(&reduce_16bit<T, Op::max>, 1, &ops[int(Op::max)]), "MPI_Op_create");
  check(MPI_Op_create(&reduce_16bit<T, Op::min>, 1, &ops[int(Op::min)]), "MPI_Op_create");
}

}  // namespace

MpiCommunicator::MpiCommunicator(MPI_Comm parent, bool gpu_aware) : gpu_aware_(gpu_aware) {
  check(MPI_Comm_dup(parent, &comm_), "MPI_Comm_dup");
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  create_16bit_ops<precision::fp16>(f16_ops_);
  create_16bit_ops<precision::bf16>(bf16_ops_);
}

MpiCommunicator::~MpiCommunicator() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  for (MPI_Op& op : f16_ops_) MPI_Op_free(&op);
  for (MPI_Op& op : bf16_ops_) MPI_Op_free(&op);
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

void MpiCommunicator::allreduce(void* buf, std::size_t count, DType t, Op op) {
  const MPI_Op mop = t == DType::f16    ? f16_ops_[int(op)]
                     : t == DType::bf16 ? bf16_ops_[int(op)]
                                        : mpi_op(op);
  const double bytes = 2.0 * (size_ - 1) / size_ * double(count * size_of(t));
  timed(stats_[Kind::allreduce], std::uint64_t(bytes), [&] {
    check(MPI_Allreduce(MPI_IN_PLACE, buf, checked_count(count), mpi_type(t), mop, comm_),
          "MPI_Allreduce");
  });
}

void MpiCommunicator::allgather(const void* send, void* recv, std::size_t count, DType t) {
  const std::uint64_t bytes = std::uint64_t(size_ - 1) * count * size_of(t);
  timed(stats_[Kind::allgather], bytes, [&] {
    check(MPI_Allgather(send, checked_count(count), mpi_type(t), recv, checked_count(count),
                        mpi_type(t), comm_),
          "MPI_Allgather");
  });
}

void MpiCommunicator::alltoall(const void* send, void* recv, std::size_t count, DType t) {
  const std::uint64_t bytes = std::uint64_t(size_ - 1) * count * size_of(t);
  timed(stats_[Kind::alltoall], bytes, [&] {
    check(MPI_Alltoall(send, checked_count(count), mpi_type(t), recv, checked_count(count),
                       mpi_type(t), comm_),
          "MPI_Alltoall");
  });
}

void MpiCommunicator::sendrecv(const void* send, std::size_t send_count, int dest, void* recv,
                               std::size_t recv_count, int source, DType t) {
  timed(stats_[Kind::sendrecv], send_count * size_of(t), [&] {
    check(MPI_Sendrecv(send, checked_count(send_count), mpi_type(t), dest, 0, recv,
                       checked_count(recv_count), mpi_type(t), source, 0, comm_, MPI_STATUS_IGNORE),
          "MPI_Sendrecv");
  });
}

void MpiCommunicator::bcast(void* buf, std::size_t count, DType t, int root) {
  const std::uint64_t bytes = (rank_ == root && size_ > 1) ? count * size_of(t) : 0;
  timed(stats_[Kind::bcast], bytes, [&] {
    check(MPI_Bcast(buf, checked_count(count), mpi_type(t), root, comm_), "MPI_Bcast");
  });
}

void MpiCommunicator::barrier() {
  timed(stats_[Kind::barrier], 0, [&] { check(MPI_Barrier(comm_), "MPI_Barrier"); });
}

}  // namespace minisgd::comm
