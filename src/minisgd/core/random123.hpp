#pragma once
// Random123's Philox, callable from host and device code. Random123 marks its functions for
// the device only under nvcc (which compiles them once per side); under HIP's clang, which
// compiles one function for both sides, they are marked __host__ __device__ here.
#if defined(__HIP__) && !defined(R123_CUDA_DEVICE)
#define R123_CUDA_DEVICE __host__ __device__
#endif
#include <Random123/philox.h>
