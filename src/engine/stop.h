#pragma once
// Stop rules of a generation request (pure host code).
//
// Two kinds of rule end a sequence:
//  - token rules, checked by the Scheduler after every appended token: a stop token id (the
//    model's EOS ids merged with the request's stop_token_ids), max_tokens, max_model_len;
//  - stop strings, matched on the detokenized text by the Engine through StopStringMatcher,
//    which takes text pieces (whatever an incremental detokenizer yields per token) and
//    decides what may be streamed to the user.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace lathe::engine {

// Why a sequence ended. kStop: a stop token id or a stop string; kLength: max_tokens or
// max_model_len; kCancelled: the client cancelled it (or the engine shut down); kError: the
// executor failed while the sequence was in flight.
enum class FinishReason { kStop, kLength, kCancelled, kError };

// "stop", "length", "cancelled", "error" (the first two are OpenAI's finish_reason values).
const char* finish_reason_name(FinishReason reason);

// The token rules of one sequence. max_tokens is already resolved (>= 1, and
// prompt_len + max_tokens <= max_model_len once admitted).
struct TokenStopRules {
  int32_t max_tokens = 0;
  int32_t max_model_len = 0;
  std::vector<int32_t> stop_token_ids;
};

// Checks the rules after `num_output` tokens have been generated, the newest being `last_token`,
// for a sequence whose prompt has `prompt_len` tokens. Order (first match wins): stop token id
// -> kStop; num_output >= max_tokens or prompt_len + num_output >= max_model_len -> kLength.
// A stop token is part of the output token ids (it was generated) but not of the text.
std::optional<FinishReason> check_token_stop(const TokenStopRules& rules, int32_t prompt_len,
                                             int32_t num_output, int32_t last_token);

// Matches stop strings on a stream of text pieces.
//
// Contract: generation stops at the first piece after which the text contains any stop string,
// and the text is cut just before the earliest occurrence present at that point (a stop string
// that could only have completed with later pieces does not count: those pieces are never
// generated). The concatenation of every `text` returned by append() (plus flush() when the
// stream ends for another reason) is that cut text; the stop string and everything after it are
// never returned. A stop string may span any number of pieces. Text that could still be the start of
// a stop string (a suffix of the text so far that is a proper prefix of some stop string) is
// held back until later pieces resolve it, so nothing streamed ever has to be taken back.
//
// Why this is exact: at every point the held-back text starts at the earliest position p such
// that text[p:] is a prefix of some stop string. Any occurrence of a stop string that starts
// before p would have made text[start:] either contain it (found) or be a prefix of it (held),
// so every occurrence starts inside the held-back text and the released text never needs to
// be searched again.
class StopStringMatcher {
 public:
  struct Result {
    std::string text;      // newly releasable text (may be empty)
    bool stopped = false;  // a stop string matched; the stream must end here
    std::string matched;   // the stop string that matched (when stopped)
  };

  // Empty stop strings are ignored (validate_request rejects them before they get here).
  explicit StopStringMatcher(std::vector<std::string> stops = {});

  bool empty() const { return stops_.empty(); }
  // Appends one text piece. After a stop, further calls return nothing.
  Result append(std::string_view piece);
  // The stream ended without a stop string: releases the held-back text.
  std::string flush();
  // Bytes currently held back (for tests and diagnostics).
  size_t held_back() const { return pending_.size(); }

 private:
  std::vector<std::string> stops_;
  std::string pending_;  // text not yet released; every stop occurrence starts inside it
  bool stopped_ = false;
};

}  // namespace lathe::engine
