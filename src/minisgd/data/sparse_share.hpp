#pragma once
// Laying out a sparse share (data.layout: sparse): the readers count each row's entries in
// every rank's column block first, so that each rank allocates its CSR arrays exactly once,
// at their final size, and the rows that arrive later are written in place (no growth, no
// second copy: the share's peak is its own size).
#include <cstdint>
#include <vector>

#include "minisgd/comm/communicator.hpp"
#include "minisgd/config/config.hpp"
#include "minisgd/data/dataset.hpp"

namespace minisgd {

/// data.layout: auto stores data sparse below this density (nonzeros / (rows · features)).
/// A sparse value costs 4 index bytes beside its own, and a margin gathers w where a dense row
/// streams it. One core, fp32, b = 32, d = 2000: the sparse step is the faster up to a density
/// of about 0.2 (docs/data.md, "Which layout"); a tenth leaves room for dense kernels built for
/// a wider vector unit.
inline constexpr double kSparseDensity = 0.1;

/// data.layout: auto stores CA-SGD's share sparse below this density, on host backends. Its
/// dense Gram is a library GEMM, the sparse one a merge of each pair of rows' column lists:
/// one core, fp32, b = 32, d = 2 000, s = 4 and 16, a run on sparse storage is 0.65–1.08× as
/// fast as on dense at 1%, 1.6–2.5× at 0.5% and 6–9× at 0.2% (docs/data.md, "Which layout").
/// On a device, where the dense Gram is cuBLAS's or a team kernel's, the crossover is not
/// measured: auto keeps CA-SGD dense there.
inline constexpr double kCaSgdSparseDensity = 0.01;

/// The layout a run asks of its data: data.layout, where `auto` is dense for standardizing (which
/// needs it) and otherwise chooses by density (stores_sparse).
Layout storage_layout(const Config& c);

/// The density under which `auto` stores the run's share sparse: kCaSgdSparseDensity for
/// CA-SGD on a host backend (0 on a device), else kSparseDensity.
double sparse_density(const Config& c);

/// Whether a share of data with `entries` nonzeros in rows × features is stored sparse, `auto`
/// choosing sparse under `density` (nonzeros / (rows · features)).
bool stores_sparse(Layout layout, double entries, std::int64_t rows, std::int64_t features,
                   double density = kSparseDensity);

/// Whether this run stores such a share sparse: storage_layout(c) at sparse_density(c).
bool stores_sparse(const Config& c, double entries, std::int64_t rows, std::int64_t features);

/// The boundaries of the ranks' column blocks, P + 1 of them (one block, [0, cols), in the row
/// decomposition): what each rank's entry counts are per row.
std::vector<std::int64_t> count_blocks(const Partition& p);

/// Collective: routes the entry counts of rows [first_row, first_row + R) read here, `blocks`
/// counts per row (row-major; count_blocks), to the ranks that keep those rows, and returns
/// the count of each of this rank's local rows. `position[r]`: the shuffled position of
/// original row r (empty: the identity).
std::vector<std::int64_t> route_row_counts(const Partition& p,
                                           const std::vector<std::int64_t>& position,
                                           std::int64_t first_row,
                                           const std::vector<std::int32_t>& counts,
                                           comm::Communicator& comm);

/// Collective: refuses (InputError naming `what`, on every rank) a sparse share that cannot fit
/// in this node's memory, then allocates it: row_map from the local rows' entry counts,
/// entries and values zeroed, y.
template <class T>
void allocate_sparse_share(Dataset<T>& ds, const std::vector<std::int64_t>& counts,
                           const std::string& what, comm::Communicator& comm);

}  // namespace minisgd
