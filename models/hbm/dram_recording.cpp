#include "models/hbm/dram_recording.h"

#include <algorithm>
#include <chrono>

#include "sim/base/errors.h"

namespace tpusim::models {

namespace {
// 64-bit words in the machine's byte order: a magic word and the channel count, then records. A
// record's first word is its kind in the low half and its channel in the high half.
constexpr std::uint64_t kMagic = 0x31'6d'72'64'73'75'70'74;  // "tpusdrm1"
enum Kind : std::uint32_t { kServe = 1, kSettle = 2, kRelease = 3, kEnd = 4 };
// No run reaches this DRAM cycle (SystemC's time ends near 9,223 s): a later one is damage, and
// replaying it would reserve refresh windows for hours.
constexpr std::uint64_t kMaxCycle = std::uint64_t{1} << 47;

std::uint64_t head(Kind kind, std::uint32_t channel) {
  return std::uint64_t{kind} | std::uint64_t{channel} << 32;
}
std::uint64_t pair(std::uint32_t low, std::uint32_t high) {
  return std::uint64_t{low} | std::uint64_t{high} << 32;
}
std::uint32_t low(std::uint64_t w) { return static_cast<std::uint32_t>(w); }
std::uint32_t high(std::uint64_t w) { return static_cast<std::uint32_t>(w >> 32); }
}  // namespace

DramRecorder::DramRecorder(const std::string& path, std::uint32_t channels)
    : path_(path), file_(std::fopen(path.c_str(), "wb")) {
  if (!file_) throw InputError(path + ": cannot write the DRAM recording");
  put({kMagic, channels});
}

DramRecorder::~DramRecorder() {
  if (file_) std::fclose(file_);
}

void DramRecorder::put(std::initializer_list<std::uint64_t> words) {
  if (std::fwrite(words.begin(), sizeof(std::uint64_t), words.size(), file_) != words.size())
    throw SimError(path_ + ": writing the DRAM recording failed");
}

void DramRecorder::serve(std::uint32_t channel, const DramAddress* bursts, std::uint32_t n,
                         bool write, std::uint64_t arrival, std::uint64_t now,
                         DramTimeline::PieceId id) {
  put({head(kServe, channel), pair(n, write ? 1 : 0), arrival, now, id});
  for (std::uint32_t i = 0; i < n; ++i)
    put({pair(bursts[i].bank_group, bursts[i].bank), pair(bursts[i].row, bursts[i].column)});
}

void DramRecorder::settle(std::uint32_t channel, std::uint64_t now) {
  put({head(kSettle, channel), now});
}

void DramRecorder::release(std::uint32_t channel, DramTimeline::PieceId id,
                           const DramTimeline::Piece& r) {
  put({head(kRelease, channel), id, r.first_done, r.last_done, pair(r.done ? 1 : 0, r.bursts),
       pair(r.hits, r.misses), pair(r.conflicts, r.activates)});
}

void DramRecorder::end_run(std::uint64_t cycle) {
  put({head(kEnd, 0), cycle});
  if (std::fflush(file_) != 0) throw SimError(path_ + ": writing the DRAM recording failed");
}

DramRecording::DramRecording(const std::string& path) : path_(path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw InputError(path + ": cannot read the DRAM recording");
  std::uint64_t header[2] = {0, 0};
  const bool headed = std::fread(header, sizeof header[0], 2, f) == 2 && header[0] == kMagic;
  std::uint64_t block[4096];
  for (std::size_t got; headed && (got = std::fread(block, sizeof block[0], 4096, f)) > 0;)
    words_.insert(words_.end(), block, block + got);
  const bool read_failed = std::ferror(f) != 0;
  std::fclose(f);
  if (read_failed) throw InputError(path + ": reading the DRAM recording failed");
  if (!headed || header[1] == 0 || header[1] > ~std::uint32_t{0})
    throw InputError(path + ": not a DRAM recording (bad header)");
  channels_ = static_cast<std::uint32_t>(header[1]);
  // Walk the records once, so replay() meets only whole ones, with ids it can map.
  const auto bad = [&](std::size_t at, const char* why) {
    return InputError(path + ": word " + std::to_string(at + 2) + ": " + why);
  };
  std::vector<std::uint64_t> served(channels_, 0);  // a channel's ids are below its serves
  bool ended = false;
  for (std::size_t i = 0; i < words_.size();) {
    const Kind kind = static_cast<Kind>(low(words_[i]));
    const std::uint32_t channel = high(words_[i]);
    if (ended) throw bad(i, "a record after the end of the run");
    if (channel >= channels_) throw bad(i, "channel out of range");
    std::size_t size = 0;
    switch (kind) {
      case kServe:
        if (i + 1 < words_.size()) {
          if (low(words_[i + 1]) == 0) throw bad(i, "a piece of no bursts");
          size = 5 + 2 * std::size_t{low(words_[i + 1])};
        }
        break;
      case kSettle:
        size = 2;
        break;
      case kRelease:
        size = 7;
        break;
      case kEnd:
        size = 2;
        ended = true;
        break;
      default:
        throw bad(i, "unknown record kind");
    }
    if (size == 0 || i + size > words_.size()) throw bad(i, "record cut short");
    if (kind == kServe && words_[i + 4] > served[channel]++)
      throw bad(i, "a piece id its channel cannot have given yet");
    if (kind == kRelease && words_[i + 1] >= served[channel])
      throw bad(i, "the release of a piece never served");
    const std::uint64_t cycle =
        kind == kServe ? std::max(words_[i + 2], words_[i + 3]) : words_[i + 1];
    if (kind != kRelease && cycle > kMaxCycle) throw bad(i, "a cycle no run reaches");
    i += size;
  }
  if (!ended) throw InputError(path + ": the recording stops before the end of the run");
}

DramReplay DramRecording::replay(const DramSpec& spec) const {
  if (spec.total_channels() != channels_)
    throw InputError(path_ + ": the spec has " + std::to_string(spec.total_channels()) +
                     " channels, the recording " + std::to_string(channels_));
  std::vector<DramTimeline> channels;
  channels.reserve(channels_);
  for (std::uint32_t c = 0; c < channels_; ++c) channels.emplace_back(spec);
  // A recorded piece id to the id the replay gave it: they differ once the replay diverges.
  std::vector<std::vector<DramTimeline::PieceId>> ids(channels_);
  constexpr DramTimeline::PieceId kUnknown = ~DramTimeline::PieceId{0};
  std::vector<DramAddress> bursts;
  DramReplay r;
  const auto start = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < words_.size();) {
    const std::uint32_t channel = high(words_[i]);
    const std::uint64_t* w = &words_[i];
    switch (static_cast<Kind>(low(w[0]))) {
      case kServe: {
        const std::uint32_t n = low(w[1]);
        bursts.resize(n);
        for (std::uint32_t b = 0; b < n; ++b) {
          DramAddress& a = bursts[b];
          a.channel = channel;
          a.bank_group = low(w[5 + 2 * b]);
          a.bank = high(w[5 + 2 * b]);
          a.row = low(w[6 + 2 * b]);
          a.column = high(w[6 + 2 * b]);
          if (a.bank_group >= spec.bank_groups || a.bank >= spec.banks_per_group ||
              a.row >= spec.rows || a.column >= spec.columns)
            throw InputError(path_ + ": a burst outside the spec's banks, rows or columns");
        }
        const auto id = channels[channel].serve(bursts.data(), n, high(w[1]) != 0, w[2], w[3]);
        std::vector<DramTimeline::PieceId>& map = ids[channel];
        if (w[4] >= map.size()) map.resize(w[4] + 1, kUnknown);  // w[4] <= serves: checked
        map[w[4]] = id;
        r.mismatches += id != w[4];
        ++r.serves;
        i += 5 + 2 * std::size_t{n};
        break;
      }
      case kSettle:
        channels[channel].settle(w[1]);
        ++r.settles;
        i += 2;
        break;
      case kRelease: {
        std::vector<DramTimeline::PieceId>& map = ids[channel];
        if (w[1] >= map.size() || map[w[1]] == kUnknown)
          throw InputError(path_ + ": piece " + std::to_string(w[1]) + " of channel " +
                           std::to_string(channel) + " is released while not served");
        const DramTimeline::Piece& p = channels[channel].piece(map[w[1]]);
        r.mismatches += p.first_done != w[2] || p.last_done != w[3] ||
                        w[4] != pair(p.done ? 1 : 0, p.bursts) || w[5] != pair(p.hits, p.misses) ||
                        w[6] != pair(p.conflicts, p.activates);
        // A piece the replay has not decided stays with its channel: released, its id would be
        // reused while the channel still decides it. Later ids then differ, and count.
        if (p.done) channels[channel].release(map[w[1]]);
        map[w[1]] = kUnknown;
        ++r.releases;
        i += 7;
        break;
      }
      case kEnd:
        for (DramTimeline& c : channels) c.end_run(w[1]);
        i += 2;
        break;
    }
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace tpusim::models
