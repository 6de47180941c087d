#include "minisgd/comm/nccl_communicator.hpp"

#include <cstring>
#include <stdexcept>
#include <string>

#include "minisgd/comm/timed_call.hpp"

namespace minisgd::comm {
namespace {

#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 10, 0) && CUDART_VERSION >= 11000
#define MINISGD_NCCL_HAS_BF16 1
#endif

void check_cuda(cudaError_t rc, const char* what) {
  if (rc != cudaSuccess)
    throw std::runtime_error(std::string("CUDA error in ") + what + ": " + cudaGetErrorName(rc) +
                             ": " + cudaGetErrorString(rc));
}

void check_mpi(int rc, const char* what) {
  if (rc != MPI_SUCCESS) throw std::runtime_error(std::string("MPI error in ") + what);
}

ncclDataType_t nccl_type(DType t) {
  switch (t) {
    case DType::f64: return ncclFloat64;
    case DType::f32: return ncclFloat32;
    case DType::f16: return ncclFloat16;
    case DType::bf16:
#ifdef MINISGD_NCCL_HAS_BF16
      return ncclBfloat16;
#else
      throw std::logic_error("this NCCL has no bf16 reduction (needs NCCL >= 2.10, CUDA >= 11)");
#endif
    case DType::i8: return ncclInt8;
    case DType::u8: return ncclUint8;
    case DType::i32: return ncclInt32;
    case DType::u32: return ncclUint32;
    case DType::i64: return ncclInt64;
    case DType::u64: return ncclUint64;
    case DType::i16:
    case DType::u16: throw std::logic_error("NCCL has no 16-bit integer reduction");
  }
  throw std::logic_error("nccl_type: unknown DType");
}

ncclRedOp_t nccl_op(Op op) {
  switch (op) {
    case Op::sum: return ncclSum;
    case Op::max: return ncclMax;
    case Op::min: return ncclMin;
  }
  throw std::logic_error("nccl_op: unknown Op");
}

/// Device or managed memory: NCCL may read it as it is. Anything else (plain host memory,
/// pinned host memory) is staged.
bool on_device(const void* p) {
  cudaPointerAttributes a;
  std::memset(&a, 0, sizeof a);
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    cudaGetLastError();  // CUDA < 11 reports unregistered host memory as an error: clear it
    return false;
  }
  return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged;
}

constexpr std::size_t align256(std::size_t n) { return (n + 255) / 256 * 256; }

}  // namespace

void NcclCommunicator::check(ncclResult_t r, const char* what) const {
  if (r == ncclSuccess) return;
  std::string msg = std::string("NCCL error in ") + what + ": " + ncclGetErrorString(r);
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 13, 0)
  if (const char* last = ncclGetLastError(comm_); last && *last)
    msg += std::string(" (") + last + ")";
#endif
  throw std::runtime_error(msg);
}

NcclCommunicator::NcclCommunicator(MPI_Comm parent, cudaStream_t stream) : stream_(stream) {
  check_mpi(MPI_Comm_dup(parent, &mpi_), "MPI_Comm_dup");
  MPI_Comm_rank(mpi_, &rank_);
  MPI_Comm_size(mpi_, &size_);
  // Agree on failure before the collective NCCL init, so no rank is left waiting in it.
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess) {
    cudaGetLastError();
    devices = 0;
  }
  int fewest = devices;
  check_mpi(MPI_Allreduce(&devices, &fewest, 1, MPI_INT, MPI_MIN, mpi_), "MPI_Allreduce");
  if (fewest == 0)
    throw std::runtime_error("NCCL communicator: a rank sees no GPU (cudaGetDeviceCount = 0)");

  struct {
    ncclUniqueId id;
    int status;
  } root{};
  if (rank_ == 0) root.status = int(ncclGetUniqueId(&root.id));
  check_mpi(MPI_Bcast(&root, sizeof root, MPI_BYTE, 0, mpi_), "MPI_Bcast");
  check(ncclResult_t(root.status), "ncclGetUniqueId (rank 0)");
  check(ncclCommInitRank(&comm_, size_, root.id, rank_), "ncclCommInitRank");
}

NcclCommunicator::~NcclCommunicator() {
  // Teardown errors cannot be reported from a destructor: ignored.
  if (comm_) {
    cudaStreamSynchronize(stream_);
    ncclCommDestroy(comm_);
  }
  if (scratch_) cudaFree(scratch_);
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && mpi_ != MPI_COMM_NULL) MPI_Comm_free(&mpi_);
}

void* NcclCommunicator::scratch(std::size_t bytes) {
  if (bytes > scratch_bytes_) {
    if (scratch_) check_cuda(cudaFree(scratch_), "cudaFree");
    scratch_ = nullptr;
    scratch_bytes_ = 0;
    check_cuda(cudaMalloc(&scratch_, bytes), "cudaMalloc (NCCL staging buffer)");
    scratch_bytes_ = bytes;
  }
  return scratch_;
}

template <class F>
void NcclCommunicator::run(Kind kind, std::uint64_t bytes, const void* send, std::size_t send_bytes,
                           void* recv, std::size_t recv_bytes, F&& enqueue) {
  timed(stats_[kind], bytes, [&] {
    const bool in_place = send == recv;
    const bool send_dev = send_bytes == 0 || on_device(send);
    const bool recv_dev = recv_bytes == 0 || on_device(recv);
    std::size_t need = 0, send_off = 0, recv_off = 0;
    if (!send_dev && !in_place) need = align256(send_bytes);
    if (!recv_dev) {
      recv_off = need;
      need += align256(recv_bytes);
    }
    char* base = need ? static_cast<char*>(scratch(need)) : nullptr;
    void* drecv = recv_dev ? recv : base + recv_off;
    const void* dsend = in_place ? drecv : send_dev ? send : base + send_off;
    if (!send_dev && send_bytes > 0)
      check_cuda(cudaMemcpyAsync(const_cast<void*>(dsend), send, send_bytes, cudaMemcpyHostToDevice,
                                 stream_),
                 "cudaMemcpyAsync (stage in)");
    enqueue(dsend, drecv);
    if (!recv_dev)
      check_cuda(cudaMemcpyAsync(recv, drecv, recv_bytes, cudaMemcpyDeviceToHost, stream_),
                 "cudaMemcpyAsync (stage out)");
    check_cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  });
}

void NcclCommunicator::allreduce(void* buf, std::size_t count, DType t, Op op) {
  const ncclDataType_t nt = nccl_type(t);  // throws before anything is counted
  const std::size_t n = count * size_of(t);
  const double bytes = 2.0 * (size_ - 1) / size_ * double(n);
  run(Kind::allreduce, std::uint64_t(bytes), buf, n, buf, n, [&](const void* s, void* r) {
    check(ncclAllReduce(s, r, count, nt, nccl_op(op), comm_, stream_), "ncclAllReduce");
  });
}

void NcclCommunicator::allgather(const void* send, void* recv, std::size_t count, DType t) {
  const std::size_t n = count * size_of(t);
  run(Kind::allgather, std::uint64_t(size_ - 1) * n, send, n, recv, n * size_,
      [&](const void* s, void* r) {
        check(ncclAllGather(s, r, n, ncclUint8, comm_, stream_), "ncclAllGather");
      });
}

void NcclCommunicator::alltoall(const void* send, void* recv, std::size_t count, DType t) {
  const std::size_t n = count * size_of(t);
  run(Kind::alltoall, std::uint64_t(size_ - 1) * n, send, n * size_, recv, n * size_,
      [&](const void* s, void* r) {
        const char* sb = static_cast<const char*>(s);
        char* rb = static_cast<char*>(r);
        // Own block: a device copy. The others: one NCCL group of point-to-point calls.
        check_cuda(
            cudaMemcpyAsync(rb + rank_ * n, sb + rank_ * n, n, cudaMemcpyDeviceToDevice, stream_),
            "cudaMemcpyAsync (alltoall own block)");
        ncclResult_t rc = ncclGroupStart();
        for (int p = 0; p < size_ && rc == ncclSuccess && n > 0; ++p) {
          if (p == rank_) continue;
          rc = ncclSend(sb + p * n, n, ncclUint8, p, comm_, stream_);
          if (rc == ncclSuccess) rc = ncclRecv(rb + p * n, n, ncclUint8, p, comm_, stream_);
        }
        const ncclResult_t end = ncclGroupEnd();
        check(rc, "ncclSend/ncclRecv (alltoall)");
        check(end, "ncclGroupEnd (alltoall)");
      });
}

void NcclCommunicator::sendrecv(const void* send, std::size_t send_count, int dest, void* recv,
                                std::size_t recv_count, int source, DType t) {
  const std::size_t sn = send_count * size_of(t), rn = recv_count * size_of(t);
  run(Kind::sendrecv, sn, send, sn, recv, rn, [&](const void* s, void* r) {
    if (dest == rank_ && source == rank_) {
      if (sn > 0)
        check_cuda(cudaMemcpyAsync(r, s, sn, cudaMemcpyDeviceToDevice, stream_),
                   "cudaMemcpyAsync (sendrecv to self)");
      return;
    }
    ncclResult_t rc = ncclGroupStart();
    if (rc == ncclSuccess && sn > 0) rc = ncclSend(s, sn, ncclUint8, dest, comm_, stream_);
    if (rc == ncclSuccess && rn > 0) rc = ncclRecv(r, rn, ncclUint8, source, comm_, stream_);
    const ncclResult_t end = ncclGroupEnd();
    check(rc, "ncclSend/ncclRecv");
    check(end, "ncclGroupEnd (sendrecv)");
  });
}

void NcclCommunicator::bcast(void* buf, std::size_t count, DType t, int root) {
  const std::size_t n = count * size_of(t);
  const std::uint64_t bytes = (rank_ == root && size_ > 1) ? n : 0;
  run(Kind::bcast, bytes, buf, n, buf, n, [&](const void* s, void* r) {
    check(ncclBroadcast(s, r, n, ncclUint8, root, comm_, stream_), "ncclBroadcast");
  });
}

void NcclCommunicator::barrier() {
  timed(stats_[Kind::barrier], 0, [&] {
    check_cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
    check_mpi(MPI_Barrier(mpi_), "MPI_Barrier");
  });
}

}  // namespace minisgd::comm
