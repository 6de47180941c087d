#include "minisgd/solvers/ca_sgd.hpp"

#include <stdexcept>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "minisgd/comm/view_collectives.hpp"
#include "minisgd/core/huge_pages.hpp"
#include "minisgd/core/launch.hpp"
#include "minisgd/kernels/glm_kernels.hpp"
#include "minisgd/precision/dispatch.hpp"

namespace minisgd {

using precision::Format;
using precision::Knob;

namespace {
template <class T>
Vector<T> slice(const Vector<T>& v, std::int64_t first, std::int64_t count) {
  return Kokkos::subview(v, Kokkos::make_pair(first, first + count));
}
}  // namespace

template <class S, class A>
CaSgdStepper<S, A>::CaSgdStepper(const Config& c, const Dataset<S>& data, comm::Communicator& comm,
                                 Timers& timers)
    : data_(data),
      comm_(comm),
      timers_(timers),
      loss_(c.model.loss),
      s_(c.solver.s),
      b_(c.solver.batch_size),
      rows_(c.solver.batch_size),
      plan_(c.precision.plan),
      real_(c.precision.realized),
      w_("w", data.part.local_cols()),
      gradient_("gradient", data.part.local_cols()),
      packed_(zeroed_in_huge_pages<Vector<A>>("packed", message_size(c.solver.s))),
      u_("u", std::int64_t(s_) * b_),
      v_("v", std::int64_t(s_) * b_),
      first_("batch_rows", s_),
      first_host_(Kokkos::create_mirror_view(first_)),
      coef_{Kokkos::View<double**, Kokkos::LayoutRight, MemSpace>("coef", s_ + 1, s_),
            Kokkos::View<double*, MemSpace>("scale", s_ + 1)},
      coef_host_("coef_host", s_ + 1, s_),
      scale_host_("scale_host", s_ + 1) {
  const Format arithmetic = precision::format_traits<A>::format;
  if (arithmetic != real_.compute || precision::format_traits<S>::format != real_.storage)
    throw std::logic_error("CaSgdStepper instantiated with types that do not realize the plan");
  gram_.set_engine(c.precision.gram_engine, c.precision.tf32);
  // Every rank rounds its own columns' data with its own random bits; only the recurrence,
  // which every rank computes identically from the reduced Gram, shares the run's seed.
  const auto seed = c.run.seed, own = precision::rank_seed(seed, comm.rank());
  // Gram inputs come from storage of any width, so their rounding is relative to fp64.
  gram_input_ = precision::rounder(plan_, Knob::gram_input, Format::fp64, own);
  gram_accum_ = precision::rounder(plan_, Knob::gram_accum, arithmetic, own);
  gram_wire_ = precision::rounder(plan_, Knob::gram_wire, arithmetic, own);
  margin_accum_ = precision::rounder(plan_, Knob::margin_accum, arithmetic, own);
  margin_wire_ = precision::rounder(plan_, Knob::margin_wire, arithmetic, own);
  recurrence_ = precision::rounder(plan_, Knob::recurrence, arithmetic, seed);
  gradient_accum_ = precision::rounder(plan_, Knob::gradient_accum, arithmetic, own);
  weights_ = precision::rounder(plan_, Knob::weights, arithmetic, own);
  // A sparse share's s·b rows for the Gram: room for s·b of its longest rows, so an outer
  // step never has to ask how many entries its batches hold (the set-up's memory check counts
  // this).
  if (data.sparse() && s_ > 1)
    gathered_ = GatheredRows<A>(std::int64_t(s_) * b_, longest_row(data.csr));
  if (c.solver.averaging != Averaging::none) {
    average_ = IterateAverage<A>(data.part.local_cols());
    u_average_ = Vector<A>("u_average", std::int64_t(s_) * b_);
  }
}

template <class S, class A>
void CaSgdStepper<S, A>::advance(const std::vector<StepSpec>& steps) {
  // The short batch that ends an epoch (trainer.hpp, Epoch) has fewer rows than the blocks of
  // the Gram: it is an outer step of its own, and the steps around it are outer steps of theirs.
  const std::int64_t whole = data_.part.whole_batches();
  std::size_t begin = 0;
  for (std::size_t j = 0; j < steps.size(); ++j) {
    if (steps[j].batch < whole) continue;
    if (j > begin) outer_step({steps.begin() + begin, steps.begin() + j}, b_);
    outer_step({steps[j]}, data_.part.last_batch_rows());
    begin = j + 1;
  }
  if (begin == 0)
    outer_step(steps, b_);
  else if (begin < steps.size())
    outer_step({steps.begin() + begin, steps.end()}, b_);
}

template <class S, class A>
void CaSgdStepper<S, A>::outer_step(const std::vector<StepSpec>& steps, std::int64_t rows) {
  const int n = int(steps.size());
  rows_ = rows;
  set_up_step(steps);
  const std::int64_t nG = gram_packed_size(n, rows_);
  Timers::Sequence phases(timers_);
  phases.enter("gram");
  form_gram(n);
  phases.enter("margins");
  margins(n);
  phases.enter("allreduce");
  exchange(n);
  phases.enter("recurrence");
  with_loss(loss_, [&](auto loss) {
    inner_recurrence<decltype(loss)::value>(packed_, slice(packed_, nG, n * rows_), coef_, data_.y,
                                            first_, rows_, n, recurrence_, u_, v_);
  });
  phases.enter("update");
  average(steps);  // reads the w of the outer step's start
  update(n, v_, scale_host_(n), weights_, 2 * outer_, w_);
  ++outer_;
}

template <class S, class A>
void CaSgdStepper<S, A>::margins(int steps) {
  const Vector<A> r = slice(packed_, gram_packed_size(steps, rows_), steps * rows_);
  if (data_.sparse())
    csr_partial_margins(data_.csr, first_, rows_, w_, margin_accum_, r);
  else
    partial_margins(data_.X, first_, rows_, w_, margin_accum_, r);
}

template <class S, class A>
void CaSgdStepper<S, A>::update(int steps, const Vector<A>& v, double scale,
                                const precision::Rounder& weights, std::uint64_t step,
                                const Vector<A>& w_out) {
  if (data_.sparse())
    csr_update_weights(data_.csr, first_, rows_, steps, v, scale, gradient_accum_, weights, step,
                       data_.part.col_begin(), gradient_, w_out);
  else
    update_weights(data_.X, first_, rows_, steps, v, scale, gradient_accum_, weights, step,
                   data_.part.col_begin(), gradient_, w_out);
}

// The iterates of the inner steps enter w̄ through the same ℓ' (averaging.hpp): w̄ ← keep·w̄ +
// take·w − Σ_q X(row q)·κ_{q/b}·u(q), one more pass over the outer step's rows, no message.
template <class S, class A>
void CaSgdStepper<S, A>::average(const std::vector<StepSpec>& steps) {
  if (u_average_.extent(0) == 0) return;
  const OuterAverage o = average_coefficients(steps, coef_host_, scale_host_);
  if (!o.any) return;
  const int n = int(steps.size());
  scale_by_step(u_, o.kappa, rows_, n, u_average_);
  average_.scale_and_add(w_, o.keep, o.take);
  update(n, u_average_, 1.0, precision::Rounder{}, 0, average_.value());
}

template <class S, class A>
void CaSgdStepper<S, A>::set_up_step(const std::vector<StepSpec>& steps) {
  const int n = int(steps.size());
  adjacent_ = true;
  eta_.resize(std::size_t(n));  // (no allocation after the first outer step)
  rho_.resize(std::size_t(n));
  for (int j = 0; j < n; ++j) {
    first_host_(j) = steps[j].batch * b_;
    eta_[std::size_t(j)] = steps[j].eta;
    rho_[std::size_t(j)] = steps[j].rho;
    if (j > 0 && steps[j].batch != steps[j - 1].batch + 1) adjacent_ = false;
  }
  // The host's coefficients (the averaging and the update's scale read them here).
  for (int j = 0; j <= n; ++j)
    scale_host_(j) = coefficient_row(j, eta_.data(), rho_.data(), double(b_), &coef_host_(j, 0));
  if (n <= kLaunchedSteps) {
    OuterSteps o;
    o.steps = n;
    o.b = b_;
    for (int j = 0; j < n; ++j) {
      o.batch[j] = steps[j].batch;
      o.eta[j] = steps[j].eta;
      o.rho[j] = steps[j].rho;
    }
    set_up_outer_step(o, first_, coef_);
  } else {
    Kokkos::deep_copy(first_, first_host_);
    Kokkos::deep_copy(coef_.coef, coef_host_);
    Kokkos::deep_copy(coef_.scale, scale_host_);
  }
}

template <class S, class A>
void CaSgdStepper<S, A>::form_gram(int steps) {
  if (steps < 2) return;  // no block below the diagonal
  if (data_.sparse()) return form_sparse_gram(steps);
  precision::with_compiled_type(
      real_.gram_input, [&](auto tag) { form_gram_from<typename decltype(tag)::type>(steps); });
}

template <class S, class A>
template <class In>
void CaSgdStepper<S, A>::form_gram_from(int steps) {
  const std::int64_t rows = steps * rows_, n = data_.X.extent(1);
  const Vector<A> G = slice(packed_, 0, gram_packed_size(steps, rows_));
  if constexpr (std::is_same_v<In, S>) {
    // The Gram reads X in place when the batches are adjacent rows already in its format.
    const auto& d = plan_[Knob::data];
    const auto& g = plan_[Knob::gram_input];
    const bool same =
        d.format == g.format &&
        (d.format != Format::custom || (d.custom.E == g.custom.E && d.custom.M == g.custom.M));
    if (same && adjacent_) {
      gram_path_ = gram_.compute(row_block(data_.X, first_host_(0), rows), rows_, G, gram_accum_);
      return;
    }
  }
  Matrix<In>& Y = std::get<Matrix<In>>(input_);
  if (Y.extent(0) == 0) Y = Matrix<In>("gram_input", std::int64_t(s_) * b_, n);
  const Matrix<In> Ys = row_block(Y, 0, rows);
  gather_batches(data_.X, first_, rows_, gram_input_, outer_, Ys);
  gram_path_ = gram_.compute(Ys, rows_, G, gram_accum_);
}

template <class S, class A>
void CaSgdStepper<S, A>::form_sparse_gram(int steps) {
  gather_csr_batches(data_.csr, first_, rows_, steps, gram_input_, outer_, data_.part.local_cols(),
                     gathered_);
  csr_gram(gathered_, rows_, steps, gram_accum_, slice(packed_, 0, gram_packed_size(steps, rows_)));
  gram_path_ = GramPath::sparse;
}

template <class S, class A>
void CaSgdStepper<S, A>::exchange(int steps) {
  const std::int64_t nG = gram_packed_size(steps, rows_);
  const Vector<A> G = slice(packed_, 0, nG), r = slice(packed_, nG, steps * rows_);
  // Round to the wire formats before the sum, and once more after it when the message
  // travels in a wider container than a knob's format (an emulated wire format).
  round_in_place(G, nG, gram_wire_, 2 * outer_);
  round_in_place(r, steps * rows_, margin_wire_, 2 * outer_);
  sum_message(steps);
  const Format W = message_format(steps);
  if (W != plan_[Knob::gram_wire].format) round_in_place(G, nG, gram_wire_, 2 * outer_ + 1);
  if (W != plan_[Knob::margin_wire].format)
    round_in_place(r, steps * rows_, margin_wire_, 2 * outer_ + 1);
}

template <class S, class A>
void CaSgdStepper<S, A>::sum_message(int steps) {
  precision::with_compiled_type(message_format(steps), [&](auto tag) {
    exchange_as<typename decltype(tag)::type>(message_size(steps));
  });
}

template <class S, class A>
void CaSgdStepper<S, A>::warm_up(const std::vector<int>& group_sizes) {
  for (const int steps : group_sizes)
    for (int call = 0; call < 2; ++call) sum_message(steps);
  if (data_.part.last_batch_rows() > 0) {  // the short batch's outer step
    rows_ = data_.part.last_batch_rows();
    for (int call = 0; call < 2; ++call) sum_message(1);
    rows_ = b_;
  }
}

template <class S, class A>
template <class W>
void CaSgdStepper<S, A>::exchange_as(std::int64_t count) {
  const Vector<A> message = slice(packed_, 0, count);
  if constexpr (std::is_same_v<W, A>) {
    comm::allreduce(comm_, message);
  } else {
    Vector<W>& buffer = std::get<Vector<W>>(wire_);
    if (buffer.extent(0) == 0) buffer = zeroed_in_huge_pages<Vector<W>>("wire", packed_.extent(0));
    const Vector<W> wire = slice(buffer, 0, count);
    // Exact: the values were rounded to the wire formats, which W holds.
    const std::int64_t bytes = count * std::int64_t(sizeof(A) + sizeof(W));
    for_each_index(
        "minisgd::pack_wire", count, bytes,
        KOKKOS_LAMBDA(const std::int64_t i) { wire(i) = precision::convert<W>(message(i)); });
    comm::allreduce(comm_, wire);
    for_each_index(
        "minisgd::unpack_wire", count, bytes,
        KOKKOS_LAMBDA(const std::int64_t i) { message(i) = precision::convert<A>(wire(i)); });
  }
}

template <class S, class A>
nlohmann::json CaSgdStepper<S, A>::kernels() const {
  nlohmann::json k = {{"gram", name(gram_path_)}};
  // Vendor libraries pick their own summation order over the columns, and OpenBLAS's changes
  // with its thread count (docs/output.md, "Reproducibility").
  if (gram_path_ != GramPath::none)
    k["gram_summation"] =
        gram_path_ == GramPath::team || gram_path_ == GramPath::sparse ? "fixed" : "library";
  if (gram_path_ == GramPath::dnnl) k["gram_implementation"] = gram_.dnnl_implementation();
  // bf16 × bf16 → fp32 was widened for the same-precision library where oneDNN could have
  // served it: say why.
  if (gram_path_ == GramPath::widened_blas && std::is_same_v<A, float>)
    precision::with_compiled_type(real_.gram_input, [&](auto tag) {
      if (std::is_same_v<typename decltype(tag)::type, precision::bf16>)
        k["gram_fallback"] = gram_.dnnl_unavailable_reason();
    });
  return k;
}

template <class S, class A>
void CaSgdStepper<S, A>::state(StateArchive& a) {
  a.view("ca_sgd.w", w_);
  a.value("ca_sgd.outer", outer_);  // keys the stochastic rounding of later outer steps
  average_.state(a);
}

template <class S, class A>
Vector<double> CaSgdStepper<S, A>::local_weights() const {
  Vector<double> w("w_fp64", w_.extent(0));
  convert_copy(average_.started() ? average_.value() : w_, w);
  return w;
}

template class CaSgdStepper<double, double>;
template class CaSgdStepper<double, float>;
template class CaSgdStepper<float, double>;
template class CaSgdStepper<float, float>;
template class CaSgdStepper<precision::bf16, double>;
template class CaSgdStepper<precision::bf16, float>;
template class CaSgdStepper<precision::fp16, double>;
template class CaSgdStepper<precision::fp16, float>;

}  // namespace minisgd
