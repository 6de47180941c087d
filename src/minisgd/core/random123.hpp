#pragma once
// Random123's Philox, callable from host and device code. Random123 marks its functions for
// the device only under nvcc (which compiles them once per side); under HIP's clang, which
// compiles one function for both sides, they are marked __host__ __device__ here, and its SSE
// types (unused here) are left out: their declarations carry no such mark.
#if defined(__HIP__)
#ifndef R123_CUDA_DEVICE
#define R123_CUDA_DEVICE __host__ __device__
#endif
#ifndef R123_USE_SSE
#define R123_USE_SSE 0
#endif
#endif
#include <Random123/philox.h>
