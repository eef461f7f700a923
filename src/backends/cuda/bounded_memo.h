#pragma once
// A thread-safe memo of values made from a key, for host-side descriptors that depend only on
// their description (the split-K launcher's tensor maps: one per layer's K and V, the same on every
// launch). Bounded: when it holds `capacity` values the next new key clears it first, so a process
// that keeps describing new tensors never grows it without limit. Pure C++ (no CUDA), host-tested.
#include <array>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <unordered_map>

namespace lathe::cuda {

// FNV-1a over the words of a fixed-size key.
template <size_t N>
struct WordsHash {
  size_t operator()(const std::array<uint64_t, N>& words) const {
    uint64_t h = 1469598103934665603ull;
    for (uint64_t w : words) {
      for (int b = 0; b < 8; ++b) h = (h ^ ((w >> (8 * b)) & 0xffu)) * 1099511628211ull;
    }
    return static_cast<size_t>(h);
  }
};

template <typename Key, typename Value, typename Hash>
class BoundedMemo {
 public:
  explicit BoundedMemo(size_t capacity) : capacity_(capacity > 0 ? capacity : 1) {}

  // The value stored for `key` into `out`; else make(out), stored when it returns true. Returns
  // whether `out` holds a value. make runs under the lock, so each key is made at most once while
  // it stays stored.
  template <typename Make>
  bool get_or_make(const Key& key, Value& out, Make&& make) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (const auto it = values_.find(key); it != values_.end()) {
      out = it->second;
      return true;
    }
    if (!make(out)) return false;
    if (values_.size() >= capacity_) values_.clear();
    values_.emplace(key, out);
    return true;
  }

  size_t size() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return values_.size();
  }

 private:
  const size_t capacity_;
  mutable std::mutex mutex_;
  std::unordered_map<Key, Value, Hash> values_;
};

}  // namespace lathe::cuda
