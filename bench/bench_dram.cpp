// The DRAM channel controller alone, without SystemC: bursts per wall second on traffic shaped
// as the memory feeds it (transfers of a few bursts, posted as they arrive, completed when a
// bounded number are in flight), and a checksum of every decision so that two builds can be
// compared for identical schedules.
//   bench_dram stream|mixed|random BURSTS [frfcfs|fcfs] [open|close] [QUEUE_DEPTH]
// stream: 4-burst transfers over the 4 bank groups, one row after another (the presets' mapping
// of a sequential read); mixed: four such streams in the same banks at different rows, a
// quarter of them writes; random: 2-burst transfers to random rows and banks.

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <vector>

#include "models/hbm/dram_controller.h"

using namespace tpusim;
using namespace tpusim::models;

namespace {

DramSpec hbm2_2400() {
  DramSpec s;
  s.stacks = s.channels = s.pseudo_channels = 1;
  s.bank_groups = 4;
  s.banks_per_group = 4;
  s.rows = 16384;
  s.columns = 32;
  s.burst_length = 4;
  s.bus_width_bits = 64;
  s.transfers_per_clock = 2;
  s.clock = Hertz(1.2e9);
  const auto c = [](std::uint64_t n) { return Duration::of_cycles(n); };
  s.timing = {c(17), c(17), c(40), c(57), c(17), c(6), c(2),   c(4),    c(5),
              c(5),  c(19), c(19), c(8),  c(10), c(6), c(420), c(4680), c(0)};
  return s;
}

struct Lcg {
  std::uint64_t state = 12345;
  std::uint64_t next(std::uint64_t n) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return (state >> 33) % n;
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(
        stderr,
        "usage: bench_dram stream|mixed|random BURSTS [frfcfs|fcfs] [open|close] [DEPTH]\n");
    return 2;
  }
  const std::string pattern = argv[1];
  const std::uint64_t total = std::strtoull(argv[2], nullptr, 10);
  DramSpec spec = hbm2_2400();
  if (argc > 3 && std::strcmp(argv[3], "fcfs") == 0) spec.scheduler = DramScheduler::kFcfs;
  if (argc > 4 && std::strcmp(argv[4], "close") == 0) spec.page_policy = PagePolicy::kClose;
  if (argc > 5) spec.queue_depth = static_cast<std::uint32_t>(std::atoi(argv[5]));
  DramController ctl(spec);

  // Decided once: a string compare per transfer was 7% of the stream's instructions.
  const bool random = pattern == "random", mixed = pattern == "mixed";
  if (!random && !mixed && pattern != "stream") {
    std::fprintf(stderr, "bench_dram: unknown pattern '%s' (stream, mixed or random)\n",
                 pattern.c_str());
    return 2;
  }
  const std::uint32_t per = random ? 2 : 4;
  const std::size_t in_flight = 16;  // four engines x four chunks, as on the TPU presets
  struct Posted {
    DramController::TransferId transfer;
    DramController::BurstId first;
  };
  std::deque<Posted> posted;
  Lcg rng;
  std::uint64_t now = 0, checksum = 0, column[4] = {0, 0, 0, 0};
  std::vector<DramAddress> bursts(per);
  const auto start = std::chrono::steady_clock::now();
  for (std::uint64_t done = 0; done < total; done += per) {
    bool write = false;
    if (random) {
      for (DramAddress& a : bursts) {
        a.bank_group = static_cast<std::uint32_t>(rng.next(4));
        a.bank = static_cast<std::uint32_t>(rng.next(4));
        a.row = static_cast<std::uint32_t>(rng.next(spec.rows));
      }
    } else {
      // Stream k of 1 (stream) or 4 (mixed): 32 columns per row, rows 1000 apart per stream.
      const std::uint64_t k = mixed ? (done / per) % 4 : 0;
      write = mixed && k == 3;
      const std::uint64_t c = column[k]++;
      for (std::uint32_t g = 0; g < per; ++g) {
        bursts[g].bank_group = g;
        bursts[g].bank = static_cast<std::uint32_t>(c / 32 % 4);
        bursts[g].row = static_cast<std::uint32_t>(k * 1000 + c / 128);
      }
    }
    const DramController::TransferId t = ctl.open_transfer();
    const DramController::BurstId first = ctl.enqueue(bursts[0], write, now, t);
    for (std::uint32_t b = 1; b < per; ++b) ctl.enqueue(bursts[b], write, now, t);
    posted.push_back({t, first});
    if (posted.size() == in_flight) {
      const Posted p = posted.front();
      posted.pop_front();
      for (std::uint32_t b = 0; b < per; ++b) {
        while (!ctl.done(p.first + b)) {
          ctl.advance(now);
          if (ctl.done(p.first + b)) break;
          now = std::max(now, ctl.not_before(p.first + b) + 1);
        }
      }
      const DramController::Transfer& r = ctl.transfer(p.transfer);
      checksum = checksum * 31 + r.last_done * 7 + r.first_done + r.hits * 3 + r.misses * 5;
      ctl.release(p.transfer);
    }
    ++now;  // one chunk posted per cycle at most
  }
  ctl.advance(~std::uint64_t{0});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const DramControllerStats s = ctl.stats();
  std::printf(
      "%s: %llu bursts in %.3f s = %.1f ns/burst; %llu cycles, hits %llu misses %llu conflicts "
      "%llu, checksum %016llx\n",
      pattern.c_str(), static_cast<unsigned long long>(s.reads + s.writes), seconds,
      seconds * 1e9 / double(s.reads + s.writes),
      static_cast<unsigned long long>(s.last_done_cycle),
      static_cast<unsigned long long>(s.row_hits), static_cast<unsigned long long>(s.row_misses),
      static_cast<unsigned long long>(s.row_conflicts), static_cast<unsigned long long>(checksum));
  return 0;
}
