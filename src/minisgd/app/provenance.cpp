#include "minisgd/app/provenance.hpp"

#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <KokkosKernels_config.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "minisgd/app/capabilities.hpp"
#include "minisgd/build_info.hpp"
#include "minisgd/core/kokkos.hpp"
#include "minisgd/core/simd/tier.hpp"
#include "minisgd/version.hpp"

namespace minisgd {
namespace {

std::string iso_date() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

nlohmann::json split(const std::string& list, char sep) {
  nlohmann::json out = nlohmann::json::array();
  std::istringstream in(list);
  for (std::string item; std::getline(in, item, sep);)
    if (!item.empty()) out.push_back(item);
  return out;
}

/// The host name, or with MINISGD_HASH_HOSTNAMES set its 64-bit FNV-1a hash ("fnv1a:…"): the
/// same node gives the same hash, the name does not appear (not a secret: names are guessable).
std::string host_name() {
  char host[256] = "unknown";
  gethostname(host, sizeof host - 1);
  host[sizeof host - 1] = '\0';
  if (!std::getenv("MINISGD_HASH_HOSTNAMES")) return host;
  std::uint64_t h = 14695981039346656037ull;
  for (const char* p = host; *p; ++p) h = (h ^ static_cast<unsigned char>(*p)) * 1099511628211ull;
  char out[32];
  std::snprintf(out, sizeof out, "fnv1a:%016llx", static_cast<unsigned long long>(h));
  return out;
}

nlohmann::json min_max(MPI_Comm world, int value) {
  int lo = 0, hi = 0;
  MPI_Allreduce(&value, &lo, 1, MPI_INT, MPI_MIN, world);
  MPI_Allreduce(&value, &hi, 1, MPI_INT, MPI_MAX, world);
  return {{"min", lo}, {"max", hi}};
}

/// Nodes (distinct host names over ranks), ranks per node and host threads per rank.
nlohmann::json layout(MPI_Comm world, const std::string& host) {
  int P = 1;
  MPI_Comm_size(world, &P);
  constexpr int kWidth = 256;
  char mine[kWidth] = {};
  std::strncpy(mine, host.c_str(), kWidth - 1);
  std::vector<char> all(std::size_t(P) * kWidth);
  MPI_Allgather(mine, kWidth, MPI_CHAR, all.data(), kWidth, MPI_CHAR, world);
  std::map<std::string, int> ranks_on;
  for (int r = 0; r < P; ++r) ++ranks_on[std::string(&all[std::size_t(r) * kWidth])];
  int lo = P, hi = 0;
  for (const auto& [name, n] : ranks_on) {
    lo = std::min(lo, n);
    hi = std::max(hi, n);
  }
  const int threads = Kokkos::DefaultHostExecutionSpace().concurrency();
  return {{"ranks", P},
          {"nodes", ranks_on.size()},
          {"ranks_per_node", {{"min", lo}, {"max", hi}}},
          {"threads_per_rank", min_max(world, threads)},
          {"host", host}};
}

/// Loaded shared libraries that look like a BLAS, with symbolic links resolved.
int add_blas_library(dl_phdr_info* info, std::size_t, void* out) {
  const char* name = info->dlpi_name;
  if (!name || !*name) return 0;
  char real[PATH_MAX];
  const std::string path = realpath(name, real) ? real : name;
  const std::string file = path.substr(path.find_last_of('/') + 1);
  for (const char* tag : {"blas", "mkl_rt", "mkl_core", "blis", "armpl", "essl"})
    if (file.find(tag) != std::string::npos) {
      static_cast<nlohmann::json*>(out)->push_back(path);
      break;
    }
  return 0;
}

/// The BLAS behind Kokkos Kernels: the vendor's own version query where the process has one.
nlohmann::json blas_info() {
  nlohmann::json libraries = nlohmann::json::array();
  dl_iterate_phdr(add_blas_library, &libraries);
  std::string vendor = libraries.empty() ? "none" : "unknown", detail;
  using Text = const char* (*)();
  using Fill = void (*)(char*, int);
  if (auto f = reinterpret_cast<Text>(dlsym(RTLD_DEFAULT, "openblas_get_config"))) {
    vendor = "OpenBLAS";
    detail = f();
  } else if (auto g = reinterpret_cast<Fill>(dlsym(RTLD_DEFAULT, "MKL_Get_Version_String"))) {
    char buf[256] = {};
    g(buf, sizeof buf - 1);
    vendor = "Intel oneMKL";
    detail = buf;
  } else if (auto h = reinterpret_cast<Text>(dlsym(RTLD_DEFAULT, "bli_info_get_version_str"))) {
    vendor = "BLIS";
    detail = h();
  } else {
    for (const auto& l : libraries)
      if (l.get<std::string>().find("/blas/libblas.so") != std::string::npos)
        vendor = "reference BLAS (Netlib)";
  }
  nlohmann::json tpls = nlohmann::json::array();
#ifdef KOKKOSKERNELS_ENABLE_TPL_BLAS
  tpls.push_back("BLAS");
#endif
#ifdef KOKKOSKERNELS_ENABLE_TPL_MKL
  tpls.push_back("MKL");
#endif
#ifdef KOKKOSKERNELS_ENABLE_TPL_CUBLAS
  tpls.push_back("CUBLAS");
#endif
  return {{"vendor", vendor},
          {"detail", detail},
          {"libraries", libraries},
          {"kokkos_kernels_tpls", tpls}};
}

nlohmann::json mpi_info() {
  char lib[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  MPI_Get_library_version(lib, &len);
  std::string s(lib, std::size_t(std::max(len, 0)));
  while (!s.empty() && (s.back() == '\0' || std::isspace(static_cast<unsigned char>(s.back()))))
    s.pop_back();
  int major = 0, minor = 0;
  MPI_Get_version(&major, &minor);
  return {{"library_version", s},
          {"standard", std::to_string(major) + "." + std::to_string(minor)}};
}

/// Rank 0's GPU, or null without CUDA or without a visible device.
nlohmann::json gpu_info() {
  const gpu::DeviceInfo d = gpu::current_device();
  if (d.model.empty()) return nullptr;
  return {{"model", d.model},
          {"compute_capability", d.compute_capability},
          {"driver_version", d.driver},
          {"cuda_driver_version", d.cuda_driver},
          {"cuda_runtime_version", d.cuda_runtime},
          {"devices_visible", d.visible}};
}

nlohmann::json kokkos_info() {
  nlohmann::json backends = nlohmann::json::array();
#ifdef KOKKOS_ENABLE_SERIAL
  backends.push_back("Serial");
#endif
#ifdef KOKKOS_ENABLE_OPENMP
  backends.push_back("OpenMP");
#endif
#ifdef KOKKOS_ENABLE_THREADS
  backends.push_back("Threads");
#endif
#ifdef KOKKOS_ENABLE_CUDA
  backends.push_back("Cuda");
#endif
#ifdef KOKKOS_ENABLE_HIP
  backends.push_back("HIP");
#endif
#ifdef KOKKOS_ENABLE_SYCL
  backends.push_back("SYCL");
#endif
  const int v = KOKKOS_VERSION;
  return {{"version", std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." +
                          std::to_string(v % 100)},
          {"backends", backends},
          {"arch", split(MINISGD_KOKKOS_ARCH, ';')},
          {"default_execution_space", ExecSpace::name()},
          {"concurrency", ExecSpace().concurrency()}};
}

nlohmann::json build_info() {
  nlohmann::json options = {
      {"cuda", gpu::kHaveCuda}, {"cublas", gpu::kHaveCublas}, {"nccl", gpu::kHaveNccl}};
#ifdef MINISGD_HAVE_DNNL
  options["dnnl"] = true;
#else
  options["dnnl"] = false;
#endif
  nlohmann::json tiers = nlohmann::json::array();
  for (simd::Tier t : {simd::Tier::generic, simd::Tier::avx2, simd::Tier::avx512})
    if (simd::compiled(t)) tiers.push_back(simd::name(t));
  return {{"type", MINISGD_BUILD_TYPE},
          {"cxx_flags", MINISGD_CXX_FLAGS},
          {"options", options},
          {"simd", {{"tier", simd::name(simd::active_tier())}, {"compiled", tiers}}}};
}

}  // namespace

nlohmann::json provenance(MPI_Comm world) {
  nlohmann::json p = {{"schema_version", kReportSchemaVersion},
                      {"program", "minisgd"},
                      {"version", MINISGD_VERSION},
                      {"git_hash", MINISGD_GIT_HASH},
                      {"compiler", MINISGD_CXX_COMPILER},
                      {"build", build_info()},
                      {"kokkos", kokkos_info()},
                      {"blas", blas_info()},
                      {"mpi", mpi_info()},
                      {"gpu", gpu_info()},
                      {"date", iso_date()}};
  p.update(layout(world, host_name()));
  return p;
}

}  // namespace minisgd
