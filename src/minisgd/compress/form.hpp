#pragma once
// A compressor's two bodies. Kernels that a device runs well (a team per block or group, a
// branch per value on run-time shapes) are slow on a CPU, so the compressors with such kernels
// also have plain loops over host memory with the shapes compile-time constants, which the
// compiler vectorizes: the same codes, merges and sums, value for value. A build runs its
// native form; a host backend can run either, which is how the tests check the device form
// on a CPU (tests/compress/test_compressors.cpp, "CompressorForms").
#include <stdexcept>
#include <vector>

#include "minisgd/core/kokkos.hpp"

namespace minisgd::compress {

/// host: loops over host memory; device: the kernels a device runs, on the execution space.
enum class Form { host, device };

/// The form a build runs: the host loops where kernels run on memory the host reads.
inline constexpr Form kNativeForm = kHostMemory ? Form::host : Form::device;

/// The forms this build can run: both on a host backend, the device form on a device.
inline std::vector<Form> runnable_forms() {
  if constexpr (kHostMemory) return {Form::host, Form::device};
  return {Form::device};
}

inline const char* to_string(Form f) { return f == Form::host ? "host" : "device"; }

/// `form`, or an error where this build cannot run it (host loops on a device's memory).
inline Form checked(Form form) {
  if (form == Form::host && !kHostMemory)
    throw std::invalid_argument("compressor form host: this build's kernels run on a device");
  return form;
}

}  // namespace minisgd::compress
