// CUDALANCZOS_HOST_DEVICE: a function of a CUDA-free core header that the device kernels call too (the
// random entries of random.hpp, the step rule of step_rule.hpp) is compiled for both sides under nvcc.
#pragma once

#if defined(__CUDACC__)
#define CUDALANCZOS_HOST_DEVICE __host__ __device__
#else
#define CUDALANCZOS_HOST_DEVICE
#endif
