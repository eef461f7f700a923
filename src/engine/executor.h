#pragma once
// The two seams between the Engine and the layers it must not know about: the Executor (model
// forward + sampling on some backend) and the Detokenizer (token ids -> text pieces).
//
// Binding them (for whoever wires the real model and tokenizer):
//  - Executor: wrap a model (model/qwen3.h) and its backend. execute() uploads the batch
//    (Backend::upload_batch), runs the forward over it (the KV cache has num_blocks blocks of
//    block_size slots, the same numbers given to EngineConfig; block 0 is the scratch block),
//    gathers batch.logits_rows and samples one token per row with Backend::sample under
//    sampling[i]. Plan/run and CUDA graphs are the executor's business; to keep block tables at
//    a fixed width, set EngineConfig::pad_blocks_per_seq.
//  - Detokenizer: one per request, wrapping the tokenizer's streaming detokenizer.
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ops/batch.h"
#include "ops/sampling.h"

namespace lathe::engine {

class Executor {
 public:
  virtual ~Executor() = default;
  // Runs one step and returns batch.logits_rows.size() token ids, the i-th sampled from the
  // logits of row batch.logits_rows[i] under sampling[i] (sampling[i].step is already the index
  // of the token being generated in its request). Called only from the engine thread, one step
  // at a time. May throw (std::exception): the engine ends the step's sequences with
  // FinishReason::kError, reports the message to them, and keeps serving.
  virtual std::vector<int32_t> execute(const ops::ForwardBatch& batch,
                                       std::span<const ops::SamplingParams> sampling) = 0;
};

// Incremental detokenization of one request's generated tokens.
class Detokenizer {
 public:
  virtual ~Detokenizer() = default;
  // The text newly completed by `token` (may be empty, e.g. while a multi-byte UTF-8 character
  // is still incomplete). Concatenating every piece gives the detokenized output.
  virtual std::string append(int32_t token) = 0;
  // The stream has ended: whatever is still pending (e.g. an incomplete UTF-8 tail).
  virtual std::string flush() = 0;
};

// Makes the Detokenizer of one request; `prompt` is its prompt token ids (context a tokenizer may
// need to decode the first generated tokens exactly).
using DetokenizerFactory = std::function<std::unique_ptr<Detokenizer>(std::span<const int32_t> prompt)>;

}  // namespace lathe::engine
