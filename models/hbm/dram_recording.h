#pragma once
// A recording of the calls a memory makes on its timeline-engine channels: each piece served
// (its bursts, arrival and present), each settle, and each release with the result the channel
// decided. A channel's decisions depend on these calls alone, so replaying them on fresh channels
// of the same spec must reproduce every recorded result: the timeline engine can be timed and
// checked apart from the rest of a run (bench/dram_replay, docs/performance.md). No SystemC.

#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <string>
#include <vector>

#include "models/hbm/dram_timeline.h"

namespace tpusim::models {

class DramRecorder {
 public:
  // Throws InputError naming `path` when it cannot be written.
  DramRecorder(const std::string& path, std::uint32_t channels);
  ~DramRecorder();
  DramRecorder(const DramRecorder&) = delete;
  DramRecorder& operator=(const DramRecorder&) = delete;

  void serve(std::uint32_t channel, const DramAddress* bursts, std::uint32_t n, bool write,
             std::uint64_t arrival, std::uint64_t now, DramTimeline::PieceId id);
  void settle(std::uint32_t channel, std::uint64_t now);
  void release(std::uint32_t channel, DramTimeline::PieceId id, const DramTimeline::Piece& result);
  // Also flushes: a run that ends records its last calls whole.
  void end_run(std::uint64_t cycle);

 private:
  void put(std::initializer_list<std::uint64_t> words);
  std::string path_;
  std::FILE* file_;
};

struct DramReplay {
  std::uint64_t serves = 0, settles = 0, releases = 0;
  // Serves that gave another piece id than recorded, and released pieces decided otherwise
  // (undecided, other cycles or row outcomes). Ids follow the serve and release order, so they
  // differ only once the replay has left undecided a piece that the run had decided.
  std::uint64_t mismatches = 0;
  double seconds = 0;  // wall time of the calls alone, the file already read
};

class DramRecording {
 public:
  // Reads the whole file; throws InputError naming it when it is not a whole recording.
  explicit DramRecording(const std::string& path);
  std::uint32_t channels() const { return channels_; }
  // Replays every call on fresh channels of `spec`. Throws InputError unless the channel count
  // is the recorded one and every burst lies within the spec's banks, rows and columns.
  DramReplay replay(const DramSpec& spec) const;

 private:
  std::string path_;
  std::uint32_t channels_ = 0;
  std::vector<std::uint64_t> words_;  // the records, header stripped
};

}  // namespace tpusim::models
