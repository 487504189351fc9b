#pragma once
// A latency histogram with bounded relative error, cheap enough to update per DRAM burst:
// values below 128 have a bucket each; above, every power-of-two octave is split into 32
// buckets (3% resolution). Percentiles are derived from it by sim/report, not here.

#include <algorithm>
#include <cstdint>
#include <vector>

namespace tpusim::models {

class LatencyHistogram {
 public:
  static constexpr std::uint32_t kExact = 128;  // values with a bucket each
  static constexpr std::uint32_t kSubBuckets = 32;
  static constexpr std::uint32_t kMaxOctave = 40;  // larger values share the last bucket

  void add(std::uint64_t value, std::uint64_t count = 1) {
    const std::size_t i = index(value);
    if (i >= counts_.size()) counts_.resize(i + 1, 0);
    counts_[i] += count;
  }
  const std::vector<std::uint64_t>& counts() const { return counts_; }

  // The largest value that falls into bucket `i`.
  static std::uint64_t upper_bound(std::size_t i) {
    if (i < kExact) return i;
    const std::size_t octave = (i - kExact) / kSubBuckets + 7;  // log2 of the bucket's values
    const std::size_t sub = (i - kExact) % kSubBuckets;
    return ((std::uint64_t{kSubBuckets} + sub + 1) << (octave - 5)) - 1;
  }
  static std::size_t index(std::uint64_t value) {
    if (value < kExact) return static_cast<std::size_t>(value);
    std::uint32_t octave = 63 - static_cast<std::uint32_t>(__builtin_clzll(value));
    if (octave > kMaxOctave) {
      octave = kMaxOctave;
      value = (std::uint64_t{2} << kMaxOctave) - 1;
    }
    const std::uint64_t sub = (value >> (octave - 5)) & (kSubBuckets - 1);
    return kExact + (octave - 7) * kSubBuckets + static_cast<std::size_t>(sub);
  }

 private:
  std::vector<std::uint64_t> counts_;
};

}  // namespace tpusim::models
