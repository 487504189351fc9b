// The channel controller against a reference written straight from its rules
// (models/hbm/README.md): for every command, every queued burst is examined with
// DramChannel::earliest(). The controller keeps per-bank summaries and stops its scans early to
// be fast; on random traffic, fed the lazy way the memory feeds it, it must decide exactly the
// same commands.

#include <algorithm>
#include <catch2/catch.hpp>
#include <limits>

#include "models/hbm/dram_controller.h"
#include "tests/models/dram_test_spec.h"

using namespace tpusim;
using namespace tpusim::models;

namespace {

DramSpec spec(PagePolicy page, DramScheduler sched, std::uint32_t depth, std::uint64_t refi) {
  DramSpec s = test::dram::channel_spec();
  s.timing.tREFI = Duration::of_cycles(refi);
  s.timing.tRTW = Duration::of_cycles(3);  // so that read-to-write turnaround binds too
  s.page_policy = page;
  s.scheduler = sched;
  s.queue_depth = depth;
  return s;
}

struct Outcome {
  std::uint64_t done;
  RowOutcome outcome;
  bool operator==(const Outcome& o) const { return done == o.done && outcome == o.outcome; }
};

// The rules, directly: the earliest command of any queued burst; a column command before a row
// command at the same cycle, then the older burst; FR-FCFS holds a precharge back while a burst
// that entered by its cycle hits the open row; FCFS looks at the oldest burst only; refreshes
// due by the chosen cycle go first; close page precharges after a column command unless a
// queued burst (entered by then) still hits the row. A burst enters the queue at its arrival,
// but not before the (k - depth)-th burst left it.
std::vector<Outcome> reference(const DramSpec& s, const std::vector<DramRequest>& in,
                               DramChannelStats& stats) {
  DramChannel ch(s);
  const bool fcfs = s.scheduler == DramScheduler::kFcfs;
  std::vector<Outcome> out(in.size(), Outcome{0, RowOutcome::kHit});
  std::vector<std::uint64_t> entry(in.size()), left;
  std::vector<bool> started(in.size(), false);
  std::vector<std::size_t> queue;  // ids, oldest first
  std::size_t next = 0;
  const auto hit = [&](std::size_t i) { return ch.open_row(in[i].address) == in[i].address.row; };
  const auto hits_entered_by = [&](const DramAddress& a, std::uint64_t t) {
    return std::any_of(queue.begin(), queue.end(), [&](std::size_t j) {
      const DramAddress& b = in[j].address;
      return b.bank_group == a.bank_group && b.bank == a.bank && hit(j) && entry[j] <= t;
    });
  };
  for (;;) {
    while (queue.size() < s.queue_depth && next < in.size()) {
      entry[next] = in[next].arrival;
      if (next >= s.queue_depth) entry[next] = std::max(entry[next], left[next - s.queue_depth]);
      queue.push_back(next++);
    }
    if (queue.empty()) break;
    std::size_t best = 0;
    DramCommand best_cmd = DramCommand::kActivate;
    std::uint64_t best_at = std::numeric_limits<std::uint64_t>::max();
    bool best_column = false;
    for (std::size_t k = 0; k < (fcfs ? 1 : queue.size()); ++k) {
      const std::size_t i = queue[k];
      const DramAddress& a = in[i].address;
      const DramCommand cmd = hit(i) ? (in[i].write ? DramCommand::kWrite : DramCommand::kRead)
                              : ch.open_row(a) < 0 ? DramCommand::kActivate
                                                   : DramCommand::kPrecharge;
      const std::uint64_t at = ch.earliest(cmd, a, entry[i]);
      const bool column = cmd == DramCommand::kRead || cmd == DramCommand::kWrite;
      if (!fcfs && cmd == DramCommand::kPrecharge && hits_entered_by(a, at)) continue;
      if (at < best_at || (at == best_at && column && !best_column)) {
        best = k;  // ids ascend along the queue: a later burst never wins a full tie
        best_cmd = cmd;
        best_at = at;
        best_column = column;
      }
    }
    if (ch.next_refresh() <= best_at) {
      ch.refresh_until(best_at);
      continue;
    }
    const std::size_t i = queue[best];
    if (!started[i]) {
      started[i] = true;
      out[i].outcome = best_column                          ? RowOutcome::kHit
                       : best_cmd == DramCommand::kActivate ? RowOutcome::kMiss
                                                            : RowOutcome::kConflict;
    }
    const std::uint64_t end = ch.issue(best_cmd, in[i].address, best_at);
    if (!best_column) continue;
    out[i].done = end;
    left.push_back(best_at);
    queue.erase(queue.begin() + static_cast<std::ptrdiff_t>(best));
    const DramAddress& a = in[i].address;
    if (s.page_policy == PagePolicy::kClose && !hits_entered_by(a, best_at))
      ch.issue(DramCommand::kPrecharge, a, ch.earliest(DramCommand::kPrecharge, a, best_at));
  }
  stats = ch.stats();
  return out;
}

// A fixed linear congruential sequence (Knuth's MMIX constants).
struct Lcg {
  std::uint64_t state;
  std::uint64_t next(std::uint64_t n) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return (state >> 33) % n;
  }
};

// Feeds `bursts` (one transfer each) to a controller in the rounds `round_end` marks, advancing
// to `decided[k]` after round k (0: not at all), then to the end; returns how many bursts differ
// from the reference and checks the command counts.
std::size_t mismatches_against_reference(const DramSpec& s, const std::vector<DramRequest>& bursts,
                                         const std::vector<std::size_t>& round_end,
                                         const std::vector<std::uint64_t>& decided) {
  DramController ctl(s);
  std::vector<DramController::BurstId> ids;
  std::vector<DramController::TransferId> transfers;
  std::size_t next = 0;
  for (std::size_t k = 0; k < round_end.size(); ++k) {
    for (; next < round_end[k]; ++next) {
      transfers.push_back(ctl.open_transfer());
      ids.push_back(ctl.enqueue(bursts[next].address, bursts[next].write, bursts[next].arrival,
                                transfers.back()));
    }
    if (decided[k] > 0) ctl.advance(decided[k]);
  }
  ctl.advance(std::numeric_limits<std::uint64_t>::max());
  DramChannelStats expect_stats;
  const std::vector<Outcome> expect = reference(s, bursts, expect_stats);
  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    REQUIRE(ctl.done(ids[i]));
    const DramController::Transfer& t = ctl.transfer(transfers[i]);
    const Outcome got{t.last_done, t.hits     ? RowOutcome::kHit
                                   : t.misses ? RowOutcome::kMiss
                                              : RowOutcome::kConflict};
    if (!(got == expect[i])) ++mismatches;
  }
  CHECK(ctl.channel().stats().activates == expect_stats.activates);
  CHECK(ctl.channel().stats().precharges == expect_stats.precharges);
  CHECK(ctl.channel().stats().refreshes == expect_stats.refreshes);
  return mismatches;
}

}  // namespace

TEST_CASE("dram controller: decides exactly what the rules say, on random traffic",
          "[dram][controller][reference]") {
  struct Case {
    PagePolicy page;
    DramScheduler sched;
    std::uint32_t depth;
    std::uint64_t refi;
    std::uint32_t rows;   // rows in use: few gives hits, many gives conflicts
    std::uint32_t banks;  // banks in use, over two groups: one crowds every burst together
  };
  const Case cases[] = {
      {PagePolicy::kOpen, DramScheduler::kFrFcfs, 32, 3900, 2, 16},
      {PagePolicy::kOpen, DramScheduler::kFrFcfs, 32, 700, 8, 16},
      {PagePolicy::kOpen, DramScheduler::kFrFcfs, 8, 3900, 3, 16},
      {PagePolicy::kOpen, DramScheduler::kFrFcfs, 1, 3900, 2, 16},
      {PagePolicy::kOpen, DramScheduler::kFrFcfs, 32, 3900, 2, 1},
      {PagePolicy::kOpen, DramScheduler::kFrFcfs, 16, 3900, 3, 2},
      {PagePolicy::kClose, DramScheduler::kFrFcfs, 16, 3900, 2, 16},
      {PagePolicy::kClose, DramScheduler::kFrFcfs, 16, 3900, 2, 2},
      {PagePolicy::kOpen, DramScheduler::kFcfs, 32, 700, 4, 16},
      {PagePolicy::kClose, DramScheduler::kFcfs, 8, 3900, 2, 16},
  };
  for (const Case& c : cases) {
    const DramSpec s = spec(c.page, c.sched, c.depth, c.refi);
    for (std::uint64_t seed = 1; seed <= 6; ++seed) {
      Lcg rng{seed * 7919 + c.depth};
      // Bursts become known in rounds: each round's arrivals are at or after the cycle the
      // controller was last advanced to (never in its decided past), in any order within it,
      // and some rounds advance it part of the way, as the memory does when asked early.
      std::vector<DramRequest> bursts;
      std::vector<std::size_t> round_end;
      std::vector<std::uint64_t> decided;
      std::uint64_t now = 0;
      for (int round = 0; round < 600; ++round) {
        const std::uint64_t n = 1 + rng.next(12);
        const bool write = rng.next(3) == 0;
        for (std::uint64_t k = 0; k < n; ++k) {
          DramRequest r;
          const auto bank = static_cast<std::uint32_t>(rng.next(c.banks));
          r.address.bank_group = bank % 2 + bank / 8 * 2;
          r.address.bank = bank / 2 % 4;
          r.address.row = static_cast<std::uint32_t>(rng.next(c.rows));
          r.address.column = static_cast<std::uint32_t>(rng.next(32));
          r.write = rng.next(4) == 0 ? !write : write;
          r.arrival = now + (rng.next(2) == 0 ? 0 : rng.next(40));  // often ties
          bursts.push_back(r);
        }
        const bool advance = rng.next(3) != 0;
        if (advance) now += rng.next(4) == 0 ? 1 : rng.next(120);
        round_end.push_back(bursts.size());
        decided.push_back(advance ? now : 0);
      }
      INFO("depth " << c.depth << ", seed " << seed << ", " << bursts.size() << " bursts");
      CHECK(mismatches_against_reference(s, bursts, round_end, decided) == 0);
    }
  }
}

TEST_CASE("dram controller: decides exactly what the rules say, on streams",
          "[dram][controller][reference]") {
  // Streams as the memory posts them: transfers of four bursts, one per bank group in the same
  // bank and row, each stream along its rows (32 columns per row, 4 banks in turn); the queue
  // mostly holds row hits in order, with row changes, refreshes and a writing stream between.
  struct Case {
    std::uint32_t streams, depth;
    std::uint64_t refi;
    bool writes;  // the last stream writes
  };
  const Case cases[] = {{1, 32, 3900, false},
                        {2, 32, 3900, true},
                        {4, 32, 700, true},
                        {3, 8, 3900, false},
                        {1, 1, 3900, true}};
  for (const Case& c : cases) {
    const DramSpec s = spec(PagePolicy::kOpen, DramScheduler::kFrFcfs, c.depth, c.refi);
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
      Lcg rng{seed * 104729 + c.streams};
      std::vector<DramRequest> bursts;
      std::vector<std::size_t> round_end;
      std::vector<std::uint64_t> decided;
      std::vector<std::uint64_t> column(c.streams, 0);
      std::uint64_t now = 0;
      for (int round = 0; round < 400; ++round) {
        const std::uint64_t transfers = 1 + rng.next(4);
        for (std::uint64_t k = 0; k < transfers; ++k) {
          const auto stream = static_cast<std::uint32_t>(rng.next(c.streams));
          const std::uint64_t col = column[stream]++;
          for (std::uint32_t g = 0; g < 4; ++g) {
            DramRequest r;
            r.address.bank_group = g;
            r.address.bank = static_cast<std::uint32_t>(col / 32 % 4);
            r.address.row = static_cast<std::uint32_t>((stream * 100 + col / 128) % 1024);
            r.address.column = static_cast<std::uint32_t>(col % 32);
            r.write = c.writes && stream == c.streams - 1;
            r.arrival = now + rng.next(3);
            bursts.push_back(r);
          }
        }
        now += rng.next(8) == 0 ? rng.next(200) : rng.next(12);
        round_end.push_back(bursts.size());
        decided.push_back(now);
      }
      INFO(c.streams << " streams, depth " << c.depth << ", seed " << seed);
      CHECK(mismatches_against_reference(s, bursts, round_end, decided) == 0);
    }
  }
}
