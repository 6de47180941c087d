#include "minisgd/compress/gtopk.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>

#include <nlohmann/json.hpp>

#include "minisgd/comm/merge_allreduce.hpp"
#include "minisgd/compress/record.hpp"

namespace minisgd::compress {
namespace {

// In the list a partner sends back to a folded-in rank, this index bit marks the entries that
// still hold that rank's contribution (indices are below 2^31).
constexpr std::uint32_t kCarried = 0x80000000u;

/// Larger magnitude first, ties to the smaller index; NaN above everything, so a NaN in a
/// gradient survives every merge instead of falling out of an unordered comparison.
bool larger(const IndexValue& x, const IndexValue& y) {
  const bool nx = std::isnan(x.value), ny = std::isnan(y.value);
  if (nx != ny) return nx;
  const float ax = nx ? 0.0f : std::fabs(x.value), ay = ny ? 0.0f : std::fabs(y.value);
  return ax > ay || (ax == ay && x.index < y.index);
}

std::vector<std::int32_t> indices_of(const IndexValue* list, std::size_t n) {
  std::vector<std::int32_t> out(n);
  for (std::size_t j = 0; j < n; ++j) out[j] = list[j].index;
  return out;
}

/// Elements of both sorted index lists.
std::vector<std::int32_t> intersect(const std::vector<std::int32_t>& a,
                                    const std::vector<std::int32_t>& b) {
  std::vector<std::int32_t> out;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

}  // namespace

std::vector<IndexValue> merge_top_k(const IndexValue* a, const IndexValue* b, std::size_t k) {
  std::vector<IndexValue> all;
  all.reserve(2 * k);
  std::size_t i = 0, j = 0;
  while (i < k || j < k) {
    if (j == k || (i < k && a[i].index < b[j].index))
      all.push_back(a[i++]);
    else if (i == k || b[j].index < a[i].index)
      all.push_back(b[j++]);
    else
      all.push_back({a[i].index, a[i++].value + b[j++].value});  // fp32 sum: commutative
  }
  if (all.size() > k) {
    std::nth_element(all.begin(), all.begin() + std::ptrdiff_t(k) - 1, all.end(), larger);
    all.resize(k);
    std::sort(all.begin(), all.end(),
              [](const IndexValue& x, const IndexValue& y) { return x.index < y.index; });
  }
  return all;
}

double gtopk_density(const GTopKParams& p, std::int64_t epoch) {
  if (epoch >= p.warmup_epochs || p.warmup_density <= p.density) return p.density;
  const double f = double(epoch) / double(p.warmup_epochs);
  return std::fmax(p.density, p.warmup_density * std::pow(p.density / p.warmup_density, f));
}

template <class T>
GTopK<T>::GTopK(comm::Communicator& comm, std::size_t d, const GTopKParams& p, Form form)
    : comm_(comm), form_(checked(form)), params_(p), d_(d), local_(d, p.density) {
  // (set_epoch applies the warm-up)
  merged_ = Staged<IndexValue>("gtopk_merged", k());
  consumed_ = Staged<IndexValue>("gtopk_consumed", k());
}

template <class T>
void GTopK<T>::set_epoch(std::int64_t epoch) {
  const std::size_t k = top_k_count(d_, gtopk_density(params_, epoch));
  if (k == this->k()) return;
  local_.selection = Staged<IndexValue>("selection", k);
  merged_ = Staged<IndexValue>("gtopk_merged", k);
  consumed_ = Staged<IndexValue>("gtopk_consumed", k);
}

template <class T>
nlohmann::json GTopK<T>::describe() const {
  return {{"method", "gtopk"},
          {"density", params_.density},
          {"k", top_k_count(d_, params_.density)},
          {"warmup_epochs", params_.warmup_epochs},
          {"warmup_density", params_.warmup_density}};
}

template <class T>
void GTopK<T>::reduce(const Vector<T>& local, const Vector<T>& sum) {
  const std::size_t k = local_.k();
  const IndexValue* mine = local_.select(local, form_);
  IndexValue* list = merged_.host.data();
  std::memcpy(list, mine, k * sizeof(IndexValue));

  // Which of this rank's entries (and of a folded-in rank's) are still inside the merged list.
  std::vector<std::int32_t> alive = indices_of(mine, k), extra_alive;
  const comm::MergeFn merge = [&](std::uint8_t* own, const std::uint8_t* received, std::size_t,
                                  std::size_t n, const comm::PlanStep& s) {
    auto* a = reinterpret_cast<IndexValue*>(own);
    const auto* b = reinterpret_cast<const IndexValue*>(received);
    if (s.phase == comm::Phase::fold_in) extra_alive = indices_of(b, n);
    const std::vector<IndexValue> out = merge_top_k(a, b, n);
    std::copy(out.begin(), out.end(), a);
    const std::vector<std::int32_t> kept = indices_of(a, n);
    alive = intersect(alive, kept);
    extra_alive = intersect(extra_alive, kept);
  };
  const int P = comm_.size(), rank = comm_.rank();
  const comm::MergePlan plan = comm::make_merge_plan(P, rank, k, comm::MergeShape::whole);
  const auto run = [&](IndexValue* data, comm::Phase first, comm::Phase last) {
    comm::run_plan(comm_, plan, reinterpret_cast<std::uint8_t*>(data), sizeof(IndexValue), merge,
                   first, last);
  };
  run(list, comm::Phase::fold_in, comm::Phase::gather);
  if (rank >= plan.p2) {  // folded in: learn which own entries the result still carries
    run(list, comm::Phase::fold_out, comm::Phase::fold_out);
    std::vector<std::int32_t> carried;
    for (std::size_t j = 0; j < k; ++j) {
      const auto u = std::uint32_t(list[j].index);
      list[j].index = std::int32_t(u & ~kCarried);
      if (u & kCarried) carried.push_back(list[j].index);
    }
    alive = intersect(alive, carried);
  } else if (rank + plan.p2 < P) {
    std::vector<IndexValue> marked(list, list + k);
    for (IndexValue& e : marked)
      if (std::binary_search(extra_alive.begin(), extra_alive.end(), e.index))
        e.index = std::int32_t(std::uint32_t(e.index) | kCarried);
    run(marked.data(), comm::Phase::fold_out, comm::Phase::fold_out);
  }

  // Consumed: this rank's entries that made it into the result; the rest stays in r.
  std::size_t consumed = 0;
  for (std::size_t m = 0; m < k; ++m)
    if (std::binary_search(alive.begin(), alive.end(), mine[m].index))
      consumed_.host(consumed++) = mine[m];
  consumed_.to_device();
  merged_.to_device();
  local_.keep_unsent(
      Kokkos::subview(consumed_.device, Kokkos::make_pair(std::size_t(0), consumed)));
  Kokkos::deep_copy(sum, T(0));
  scatter_add(merged_.device, sum);
}

template class GTopK<float>;
template class GTopK<double>;

namespace {

/// What the layers above the deck know of compression.method: gtopk (record.hpp).
struct GTopKMethod {
  template <class T>
  static std::unique_ptr<Compressor<T>> make(const CompressionConfig& c, const Setup& s) {
    return std::make_unique<GTopK<T>>(s.comm, s.d, c.gtopk, s.form);
  }

  /// At its steady density (after the warm-up).
  static std::vector<Collective> traffic(const CompressionConfig& c, const Exchange& e) {
    const double k = double(top_k_count(std::size_t(e.d), c.gtopk.density));
    return {Collective::merge(comm::MergeShape::whole, k, 8)};
  }

  /// As top-k's; the selection and two merge lists of k pairs, at the warm-up's density.
  static double bytes_held(const CompressionConfig& c, const Exchange& e) {
    const double density = c.gtopk.warmup_epochs > 0
                               ? std::max(c.gtopk.density, c.gtopk.warmup_density)
                               : c.gtopk.density;
    const double k = std::max(1.0, std::ceil(density * e.d));
    return (2 * e.value_bytes + 4) * e.d + 3 * 8 * k;
  }

  static constexpr bool merges = true;
};

}  // namespace

const CompressorRecord gtopk_record = record_of<GTopKMethod>();

}  // namespace minisgd::compress
