#include "ops/cuda/stream_recording.h"

#include <vector>

#include "backends/cuda/check.h"

namespace lathe::ops::cuda {
namespace {

// One instantiated CUDA graph replayed on the backend's stream.
class CudaOpGraph final : public OpGraph {
 public:
  CudaOpGraph(cudaGraphExec_t exec, cudaStream_t stream) : exec_(exec), stream_(stream) {}
  ~CudaOpGraph() override { cudaGraphExecDestroy(exec_); }
  CudaOpGraph(const CudaOpGraph&) = delete;
  CudaOpGraph& operator=(const CudaOpGraph&) = delete;
  void replay() override { LATHE_CUDA_CHECK(cudaGraphLaunch(exec_, stream_)); }

 private:
  cudaGraphExec_t exec_;
  cudaStream_t stream_;
};

// Profiling marks as CUDA events recorded on the backend's stream (no host wait per mark); the
// events are created on first use and reused by every later step.
class CudaOpClock final : public OpClock {
 public:
  explicit CudaOpClock(cudaStream_t stream) : stream_(stream) {}
  ~CudaOpClock() override {
    for (cudaEvent_t event : events_) cudaEventDestroy(event);
  }
  CudaOpClock(const CudaOpClock&) = delete;
  CudaOpClock& operator=(const CudaOpClock&) = delete;

  void mark() override {
    if (used_ == events_.size()) {
      cudaEvent_t event = nullptr;
      LATHE_CUDA_CHECK(cudaEventCreate(&event));
      events_.push_back(event);
    }
    LATHE_CUDA_CHECK(cudaEventRecord(events_[used_++], stream_));
  }

  std::vector<double> collect() override {
    std::vector<double> seconds(used_, 0.0);
    if (used_ == 0) return seconds;
    LATHE_CUDA_CHECK(cudaEventSynchronize(events_[used_ - 1]));
    for (size_t i = 1; i < used_; ++i) {
      float ms = 0.0f;
      LATHE_CUDA_CHECK(cudaEventElapsedTime(&ms, events_[0], events_[i]));
      seconds[i] = static_cast<double>(ms) * 1e-3;
    }
    used_ = 0;
    return seconds;
  }

 private:
  cudaStream_t stream_;
  std::vector<cudaEvent_t> events_;
  size_t used_ = 0;
};

}  // namespace

std::unique_ptr<OpGraph> capture_stream_graph(cudaStream_t stream, const std::function<void()>& body) {
  LATHE_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  try {
    body();
  } catch (...) {
    cudaGraph_t partial = nullptr;
    cudaStreamEndCapture(stream, &partial);
    if (partial) cudaGraphDestroy(partial);
    cudaGetLastError();  // clear the error the broken recording left behind
    throw;
  }
  cudaGraph_t graph = nullptr;
  LATHE_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec = nullptr;
  const cudaError_t instantiated = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  LATHE_CUDA_CHECK(instantiated);
  return std::make_unique<CudaOpGraph>(exec, stream);
}

std::unique_ptr<OpClock> make_stream_op_clock(cudaStream_t stream) { return std::make_unique<CudaOpClock>(stream); }

}  // namespace lathe::ops::cuda
