// Encode/decode throughput of the Qwen3 tokenizer, single thread, on deterministic text:
//   english  ~1 MB of English prose: common words (Zipf-like) plus invented words for a long tail
//   mixed    ~1 MB of mixed text: several scripts, emoji, numbers, code, whitespace runs, specials
// Warm runs reuse the word cache across iterations (the steady state of a server); the cold run
// encodes with a freshly loaded tokenizer each iteration (loading is not timed).
//
//   bench_tokenizer [--tokenizer DIR] [google-benchmark flags]
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace {

using lathe::tokenizer::Tokenizer;

std::string g_tokenizer_dir = std::string(LATHE_SHARED_DIR) + "/tokenizers/qwen3";

// A fixed 64-bit LCG: the text is identical on every machine and run.
class Lcg {
 public:
  explicit Lcg(uint64_t seed) : state_(seed) {}
  uint32_t next() {
    state_ = state_ * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<uint32_t>(state_ >> 33);
  }
  size_t below(size_t n) { return next() % n; }

 private:
  uint64_t state_;
};

const char* const kCommon[] = {
    "the", "of", "and", "to", "a", "in", "is", "it", "you", "that", "he", "was", "for", "on", "are", "with", "as",
    "I", "his", "they", "be", "at", "one", "have", "this", "from", "or", "had", "by", "not", "word", "but", "what",
    "some", "we", "can", "out", "other", "were", "all", "there", "when", "up", "use", "your", "how", "said", "an",
    "each", "she", "which", "do", "their", "time", "if", "will", "way", "about", "many", "then", "them", "write",
    "would", "like", "so", "these", "her", "long", "make", "thing", "see", "him", "two", "has", "look", "more",
    "day", "could", "go", "come", "did", "number", "sound", "no", "most", "people", "my", "over", "know", "water",
    "than", "call", "first", "who", "may", "down", "side", "been", "now", "find", "any", "new", "work", "part",
    "take", "get", "place", "made", "live", "where", "after", "back", "little", "only", "round", "man", "year",
    "came", "show", "every", "good", "me", "give", "our", "under", "name", "very", "through", "just", "form",
    "sentence", "great", "think", "say", "help", "low", "line", "differ", "turn", "cause", "much", "mean",
    "before", "move", "right", "boy", "old", "too", "same", "tell", "does", "set", "three", "want", "air", "well",
    "also", "play", "small", "end", "put", "home", "read", "hand", "port", "large", "spell", "add", "even",
    "land", "here", "must", "big", "high", "such", "follow", "act", "why", "ask", "men", "change", "went",
    "light", "kind", "off", "need", "house", "picture", "try", "us", "again", "animal", "point", "mother",
    "world", "near", "build", "self", "earth", "father", "don't", "it's", "we're", "they'll", "I've"};
const char* const kSyllables[] = {"ca", "ro", "ten", "mi", "lo", "vex", "dra", "gon", "ul", "pha", "stri",
                                  "an", "bel", "qui", "zor", "ith", "ment", "tion", "ous", "ble", "ing", "er"};

std::string english_prose(size_t bytes) {
  Lcg rng(42);
  std::string text;
  text.reserve(bytes + 64);
  size_t in_sentence = 0, in_paragraph = 0;
  while (text.size() < bytes) {
    std::string word;
    if (rng.below(100) < 85) {
      // Zipf-like: favour the head of the list.
      size_t n = sizeof(kCommon) / sizeof(kCommon[0]);
      size_t a = rng.below(n), b = rng.below(n);
      word = kCommon[a < b ? a : b];
    } else {
      for (size_t s = 0, k = 2 + rng.below(3); s < k; ++s) word += kSyllables[rng.below(sizeof(kSyllables) / sizeof(kSyllables[0]))];
    }
    if (in_sentence == 0) word[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(word[0])));
    if (!text.empty() && text.back() != '\n') text += ' ';
    text += word;
    ++in_sentence;
    if (rng.below(12) == 0) text += ',';
    if (in_sentence > 8 + rng.below(14)) {
      text += rng.below(10) == 0 ? "?" : ".";
      in_sentence = 0;
      if (++in_paragraph > 3 + rng.below(5)) {
        text += "\n\n";
        in_paragraph = 0;
      }
    }
    if (rng.below(200) == 0) {
      text += ' ';
      text += std::to_string(rng.next() % 100000);
    }
  }
  return text;
}

std::string mixed_text(size_t bytes) {
  Lcg rng(7);
  const char* const pieces[] = {
      "人工智能正在改变世界，我们需要负责任地使用它。", "私はガラスを食べられます。", "나는 유리를 먹을 수 있어요. ",
      "Я могу есть стекло, оно мне не вредит. ", "أنا قادر على أكل الزجاج و هذا لا يؤلمني. ", "मैं काँच खा सकता हूँ। ",
      "ฉันกินกระจกได้ แต่มันไม่ทำให้ฉันเจ็บ ", "Μπορώ να φάω σπασμένα γυαλιά. ", "👨‍👩‍👧‍👦 🇺🇸 👋🏽 😀 ",
      "def f(x):\n    return x * 2  # double\n", "for (int i = 0; i < n; ++i) { sum += a[i]; }\n",
      "https://example.com/a/b?c=d&e=f ", "3.14159 2718281828 1,000,000 ", "    \t  \n\n", "\r\n",
      "<|im_start|>user\n", "<|im_end|>\n", "<think>\n", "</think>\n", "It's we're THEY'LL don't ",
      "Zwölf Boxkämpfer jagen Viktor quer über den großen Sylter Deich. ", "caf\u00e9 cafe\u0301 ",
      "The quick brown fox jumps over the lazy dog. "};
  std::string text;
  text.reserve(bytes + 256);
  while (text.size() < bytes) text += pieces[rng.below(sizeof(pieces) / sizeof(pieces[0]))];
  return text;
}

const Tokenizer& tokenizer() {
  static const Tokenizer tok = Tokenizer::load(g_tokenizer_dir);
  return tok;
}

const std::string& english() {
  static const std::string text = english_prose(1 << 20);
  return text;
}
const std::string& mixed() {
  static const std::string text = mixed_text(1 << 20);
  return text;
}

void encode_warm(benchmark::State& state, const std::string& text) {
  const Tokenizer& tok = tokenizer();
  size_t tokens = tok.encode(text).size();  // warms the word cache
  for (auto _ : state) benchmark::DoNotOptimize(tok.encode(text));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
  state.counters["tokens"] = static_cast<double>(tokens);
  state.counters["bytes/token"] = static_cast<double>(text.size()) / static_cast<double>(tokens);
}

void BM_EncodeEnglish(benchmark::State& state) { encode_warm(state, english()); }
void BM_EncodeMixed(benchmark::State& state) { encode_warm(state, mixed()); }

void BM_EncodeEnglishColdCache(benchmark::State& state) {
  const std::string& text = english();
  for (auto _ : state) {
    state.PauseTiming();
    Tokenizer fresh = Tokenizer::load(g_tokenizer_dir);
    state.ResumeTiming();
    benchmark::DoNotOptimize(fresh.encode(text));
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}

void BM_DecodeMixed(benchmark::State& state) {
  const Tokenizer& tok = tokenizer();
  std::vector<int32_t> ids = tok.encode(mixed());
  for (auto _ : state) benchmark::DoNotOptimize(tok.decode(ids, false));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * mixed().size()));
}

void BM_Load(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(Tokenizer::load(g_tokenizer_dir));
}

BENCHMARK(BM_EncodeEnglish)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_EncodeMixed)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_EncodeEnglishColdCache)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_DecodeMixed)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Load)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace

int main(int argc, char** argv) {
  // --tokenizer DIR before the Google Benchmark flags.
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--tokenizer") == 0 && i + 1 < argc) {
      g_tokenizer_dir = argv[++i];
    } else {
      args.push_back(argv[i]);
    }
  }
  int count = static_cast<int>(args.size());
  benchmark::Initialize(&count, args.data());
  if (benchmark::ReportUnrecognizedArguments(count, args.data())) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
