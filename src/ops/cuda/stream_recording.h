#pragma once
// The CUDA side of two optional Backend facilities, both bound to one stream:
//  - capture_stream_graph: records the ops `body` issues on `stream` into an instantiated CUDA
//    graph (Backend::capture; decode graphs, model/decode_graphs.h);
//  - make_stream_op_clock: profiling marks as events recorded on `stream`, read once per step
//    (Backend::make_op_clock; ops/profiling_backend.h).
#include <cuda_runtime_api.h>

#include <functional>
#include <memory>

#include "ops/backend.h"

namespace lathe::ops::cuda {

// Thread-local capture mode: only the calling thread's unsafe calls (a cudaMalloc) break the
// recording. Throws lathe::Error when recording or instantiation fails (the stream is left out
// of capture mode).
std::unique_ptr<OpGraph> capture_stream_graph(cudaStream_t stream, const std::function<void()>& body);

std::unique_ptr<OpClock> make_stream_op_clock(cudaStream_t stream);

}  // namespace lathe::ops::cuda
