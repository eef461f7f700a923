#pragma once
// Checked CUDA, cuBLAS and cuBLASLt calls. Every call in the CUDA backend goes through one of
// these macros; a failure throws lathe::Error naming the call, the status and file:line, so a
// bad launch or an exhausted device surfaces as a message instead of a silent wrong answer.
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <string>

namespace lathe::cuda {

// Throws lathe::Error(message). For .cu files, which must not include core/error.h: fmt 9's
// headers do not compile under nvcc's C++20 mode.
[[noreturn]] void throw_error(const std::string& message);
[[noreturn]] void throw_cuda_error(cudaError_t status, const char* expr, const char* file, int line);
[[noreturn]] void throw_cublas_error(cublasStatus_t status, const char* expr, const char* file, int line);

inline void check_cuda(cudaError_t status, const char* expr, const char* file, int line) {
  if (status != cudaSuccess) throw_cuda_error(status, expr, file, line);
}
inline void check_cublas(cublasStatus_t status, const char* expr, const char* file, int line) {
  if (status != CUBLAS_STATUS_SUCCESS) throw_cublas_error(status, expr, file, line);
}

}  // namespace lathe::cuda

#define LATHE_CUDA_CHECK(expr) ::lathe::cuda::check_cuda((expr), #expr, __FILE__, __LINE__)
#define LATHE_CUBLAS_CHECK(expr) ::lathe::cuda::check_cublas((expr), #expr, __FILE__, __LINE__)
// After a kernel launch: reports launch-configuration errors at the launching line.
#define LATHE_CUDA_CHECK_LAUNCH() ::lathe::cuda::check_cuda(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)
