#pragma once
// The training share is streamed every epoch; where the kernel gives 2 MiB pages only to
// memory that asks for them (transparent huge pages in `madvise` mode, the default of many
// distributions), minisgd asks. In 4 KiB pages a stream pays a page walk (two nested ones in a
// virtual machine) and a stop of the hardware prefetchers at every 4 KiB; on the development
// VM a read stream ran at 19.5 GB/s in 4 KiB pages and 31 GB/s in 2 MiB ones
// (docs/performance.md).
#include <cstddef>
#include <string>
#include <type_traits>

#include "minisgd/core/kokkos.hpp"

namespace minisgd {

/// The huge page the advice asks for (x86-64 and AArch64 with 4 KiB base pages).
inline constexpr std::size_t kHugePageBytes = std::size_t(2) << 20;

/// Asks the kernel to back the whole 2 MiB pages inside [p, p + bytes) with huge pages
/// (Linux madvise; elsewhere, or when refused, nothing changes). Effective for memory not
/// yet touched.
void advise_huge_pages(void* p, std::size_t bytes);

/// The same for a view in host memory; device memory is left alone.
template <class View>
void advise_huge_pages(const View& v) {
  if constexpr (std::is_same_v<typename View::memory_space, HostSpace>)
    advise_huge_pages(static_cast<void*>(v.data()), v.span() * sizeof(typename View::value_type));
}

/// An uninitialized view of the given extents, in huge pages where the host offers them on
/// request: advised before anything touches it, since the first touch places the pages (device
/// memory is left alone). For data and buffers streamed or sent every step.
template <class View, class... Extents>
View in_huge_pages(const std::string& label, Extents... extents) {
  View v(Kokkos::view_alloc(Kokkos::WithoutInitializing, label), extents...);
  advise_huge_pages(v);
  return v;
}

/// The same, zeroed. An 8 MB AllReduce of Open MPI 4.1 between two ranks of the development VM
/// took 1.0 ms from 2 MiB pages against 1.8-2.4 ms from 4 KiB ones.
template <class View, class... Extents>
View zeroed_in_huge_pages(const std::string& label, Extents... extents) {
  View v = in_huge_pages<View>(label, extents...);
  Kokkos::deep_copy(v, typename View::non_const_value_type{});
  return v;
}

}  // namespace minisgd
