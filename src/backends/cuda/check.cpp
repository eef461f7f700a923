#include "backends/cuda/check.h"

#include "core/error.h"

namespace lathe::cuda {

void throw_error(const std::string& message) { throw Error(message); }

void throw_cuda_error(cudaError_t status, const char* expr, const char* file, int line) {
  fail("CUDA error {} ({}): {} at {}:{}", cudaGetErrorName(status), cudaGetErrorString(status), expr, file, line);
}

void throw_cublas_error(cublasStatus_t status, const char* expr, const char* file, int line) {
  fail("cuBLAS error {} ({}): {} at {}:{}", cublasGetStatusName(status), cublasGetStatusString(status), expr, file,
       line);
}

}  // namespace lathe::cuda
