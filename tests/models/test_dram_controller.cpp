// The channel controller: FR-FCFS order, page policy, address-map strides and random reads,
// each expected figure derived from the timing parameters of tests/models/dram_test_spec.h.

#include <algorithm>
#include <catch2/catch.hpp>

#include "models/hbm/address_map.h"
#include "models/hbm/dram_controller.h"
#include "tests/models/dram_test_spec.h"

using namespace tpusim;
using namespace tpusim::models;
using namespace tpusim::test::dram;

namespace {

// One channel, 4 groups x 4 banks, 1024 rows x 32 bursts.
DramSpec spec(PagePolicy page = PagePolicy::kOpen, DramScheduler sched = DramScheduler::kFrFcfs) {
  DramSpec s = channel_spec();
  s.page_policy = page;
  s.scheduler = sched;
  s.queue_depth = 32;
  return s;
}

DramRequest read(std::uint32_t group, std::uint32_t bank, std::uint32_t row, std::uint64_t arrival,
                 std::uint32_t column = 0) {
  DramRequest r;
  r.address.bank_group = group;
  r.address.bank = bank;
  r.address.row = row;
  r.address.column = column;
  r.arrival = arrival;
  return r;
}

// Schedules one request as a batch of its own; returns when its data is done.
std::uint64_t one(DramController& c, const DramRequest& r) {
  std::vector<DramRequest> batch{r};
  return c.schedule(batch);
}

}  // namespace

TEST_CASE("dram controller: FR-FCFS serves a row hit queued behind a conflict first",
          "[dram][controller]") {
  const std::uint64_t t = 1000;  // long after the first access: only the row state matters
  SECTION("frfcfs") {
    DramController c(spec());
    CHECK(one(c, read(0, 0, 3, 0)) == RCD + CL + BURST);  // opens row 3
    std::vector<DramRequest> batch{read(0, 0, 5, t), read(0, 0, 3, t)};
    c.schedule(batch);
    // The hit reads at once; the conflict then precharges after the hit's tRTP.
    CHECK(batch[1].done == t + CL + BURST);
    CHECK(batch[1].outcome == RowOutcome::kHit);
    CHECK(batch[0].done == t + RTP + RP + RCD + CL + BURST);
    CHECK(batch[0].outcome == RowOutcome::kConflict);
  }
  SECTION("fcfs keeps arrival order, and the hit becomes a second conflict") {
    DramController c(spec(PagePolicy::kOpen, DramScheduler::kFcfs));
    one(c, read(0, 0, 3, 0));
    std::vector<DramRequest> batch{read(0, 0, 5, t), read(0, 0, 3, t)};
    c.schedule(batch);
    CHECK(batch[0].done == t + RP + RCD + CL + BURST);
    // Row 3 again: PRE after row 5's tRAS (RAS > RCD + RTP), ACT after tRC from row 5's ACT.
    static_assert(RAS > RCD + RTP && RC > RAS + RP - RP, "derivation assumes these");
    const std::uint64_t act5 = t + RP;
    CHECK(batch[1].done == std::max(act5 + RAS + RP, act5 + RC) + RCD + CL + BURST);
    CHECK(batch[1].outcome == RowOutcome::kConflict);
    CHECK(c.stats().row_conflicts == 2);
  }
}

TEST_CASE("dram controller: FR-FCFS lets a younger write hit go before an older read hit",
          "[dram][controller]") {
  // A write to bank group 1 ends its data at RCD + WL + BURST; a read must then wait tWTR_S
  // after that, a write need not. The read to group 0 is older than the write to the same row,
  // but the write can issue first, so it does (the earliest command first); the read follows.
  DramController c(spec());
  std::vector<DramRequest> batch{read(1, 0, 0, 0), read(0, 0, 0, 0), read(0, 0, 0, 0)};
  batch[0].write = batch[2].write = true;
  c.schedule(batch);
  const std::uint64_t act_other = 0, act_same = RRD_S;  // the oldest burst's bank first
  const std::uint64_t other_end = act_other + RCD + WL + BURST;
  CHECK(batch[0].done == other_end);
  const std::uint64_t write_at = act_same + RCD;
  static_assert(RRD_S + RCD < RCD + WL + BURST + WTR_S, "the read is held longer than the write");
  static_assert(RRD_S >= CCD_S && RRD_S >= BURST, "the other write holds the write back no more");
  CHECK(batch[2].done == write_at + WL + BURST);
  const std::uint64_t read_at = std::max(write_at + CCD_L, write_at + WL + BURST + WTR_L);
  CHECK(batch[1].done == read_at + CL + BURST);
}

TEST_CASE("dram controller: close-page makes a row-hit stream pay tRC per access",
          "[dram][controller][page]") {
  const std::uint64_t n = 16;  // n * RC stays below tREFI: no refresh
  static_assert(n * RC < REFI, "no refresh inside the test");
  DramController open(spec()), closed(spec(PagePolicy::kClose));
  std::uint64_t open_done = 0, closed_done = 0;
  for (std::uint64_t k = 0; k < n; ++k) {
    open_done = one(open, read(0, 0, 7, 0, static_cast<std::uint32_t>(k)));
    closed_done = one(closed, read(0, 0, 7, 0, static_cast<std::uint32_t>(k)));
  }
  // Open page: one ACT, then a read per tCCD_L (same bank group).
  CHECK(open_done == RCD + (n - 1) * CCD_L + CL + BURST);
  // Close page: PRE after tRAS (> tRCD + tRTP), next ACT max(tRAS + tRP, tRC) after the last.
  const std::uint64_t cycle = std::max(RAS + RP, RC);
  CHECK(closed_done == (n - 1) * cycle + RCD + CL + BURST);
  CHECK(closed_done - open_done == (n - 1) * (cycle - CCD_L));
  CHECK(open.stats().row_hits == n - 1);
  CHECK(closed.stats().row_misses == n);
  CHECK(closed.stats().activates == n);
  SECTION("close-page keeps the row open while queued requests hit it") {
    DramController batched(spec(PagePolicy::kClose));
    std::vector<DramRequest> batch;
    for (std::uint64_t k = 0; k < n; ++k)
      batch.push_back(read(0, 0, 7, 0, static_cast<std::uint32_t>(k)));
    CHECK(batched.schedule(batch) == open_done);
    CHECK(batched.stats().activates == 1);
    CHECK(batched.stats().precharges == 1);
  }
}

TEST_CASE("dram controller: a stride onto one bank is slower than one spread over banks",
          "[dram][controller][mapping]") {
  DramSpec s = spec();
  s.address_mapping = "ro-ba-bg-ch-co";
  const AddressMap map(s);
  const std::uint64_t row_span = 32 * 1 * 4 * 4 * kBurstBytes;  // co x ch x bg x ba bursts
  const std::uint64_t group_span = 32 * 1 * kBurstBytes;        // next bank group, same row index
  const std::uint64_t n = 64;
  DramController one_bank(s), spread(s);
  std::uint64_t same_done = 0, spread_done = 0;
  for (std::uint64_t k = 0; k < n; ++k) {
    DramRequest a, b;
    a.address = map.map(k * row_span);
    b.address = map.map(k * group_span);
    same_done = one(one_bank, a);
    spread_done = one(spread, b);
  }
  // One bank: every access after the first is a conflict, one ACT per max(tRC, tRAS + tRP).
  const std::uint64_t same = (n - 1) * std::max(RC, RAS + RP) + RCD + CL + BURST;
  // Spread over 4 groups x 4 banks: ACTs tRRD_S apart, four per tFAW window; a bank comes back
  // every 16 ACTs = 4 tFAW = 120 cycles > tRC, so banks never bind.
  static_assert(4 * FAW >= RC && 4 * RRD_S <= FAW, "derivation assumes these");
  const std::uint64_t last_act = (n - 1) / 4 * FAW + (n - 1) % 4 * RRD_S;
  const std::uint64_t spread_expect = last_act + RCD + CL + BURST;
  CHECK(same_done == same);
  CHECK(spread_done == spread_expect);
  CHECK(double(same_done) / double(spread_done) == Approx(double(same) / double(spread_expect)));
  CHECK(double(same_done) / double(spread_done) > 6.0);  // tRC / (tFAW / 4) = 6.7 in the limit
}

namespace {
// A fixed linear congruential sequence (Knuth's MMIX constants): deterministic "random" addresses.
struct Lcg {
  std::uint64_t state = 12345;
  std::uint64_t next() {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return state >> 17;
  }
};
}  // namespace

TEST_CASE("dram controller: random 64 B reads pay the row-miss timing",
          "[dram][controller][random]") {
  DramSpec s = spec();
  s.address_mapping = "ro-ba-bg-ch-co";  // a 64 B read is two bursts in one row of one bank
  const AddressMap map(s);
  const std::uint64_t capacity = s.capacity().value();
  Lcg rng;
  const auto random_read = [&](std::uint64_t arrival, std::vector<DramRequest>& out) {
    const std::uint64_t addr = rng.next() % (capacity / 64) * 64;
    for (std::uint64_t b = 0; b < 64; b += kBurstBytes) {
      DramRequest r;
      r.address = map.map(addr + b);
      r.arrival = arrival;
      out.push_back(r);
    }
  };

  SECTION("one at a time: miss = tRCD + tCCD_L + tCL + burst, conflict adds tRP") {
    DramController c(s);
    std::vector<std::int64_t> open_row(16, -1);  // the test's own row-state bookkeeping
    const std::uint64_t gap = 200;               // > tRC + tCL: every earlier access has finished
    for (std::uint64_t k = 0; k < 16; ++k) {
      std::vector<DramRequest> batch;
      random_read(k * gap, batch);
      const DramAddress& a = batch[0].address;
      std::int64_t& row = open_row[a.bank_group * 4 + a.bank];
      // The second burst is a hit in the same bank group: tCCD_L after the first.
      std::uint64_t expect = k * gap + CCD_L + CL + BURST;
      if (row != std::int64_t(a.row)) expect += RCD + (row >= 0 ? RP : 0);
      row = a.row;
      CHECK(c.schedule(batch) == expect);
    }
  }

  SECTION("a full queue reaches the bank-parallelism bound; in order it cannot") {
    // Every read needs one ACT (a hit is rare among 16 x 1024 rows). Two bounds hold:
    //  - activate rate: four per tFAW and one per tRRD_S (16 banks / tRC would allow more);
    //  - per bank: a bank that receives m reads activates m times, tRC apart.
    const double act_interval = std::max(double(FAW) / 4, double(RRD_S));
    static_assert(RC / 16.0 < FAW / 4.0, "the bank bound alone is looser than tFAW");
    const std::uint64_t reads = 64;  // 128 bursts through a 32-burst queue
    std::vector<DramRequest> batch;
    for (std::uint64_t k = 0; k < reads; ++k) random_read(0, batch);
    std::vector<std::uint64_t> per_bank(16, 0);
    for (std::uint64_t k = 0; k < reads; ++k)
      ++per_bank[batch[2 * k].address.bank_group * 4 + batch[2 * k].address.bank];
    const std::uint64_t busiest = *std::max_element(per_bank.begin(), per_bank.end());
    DramController queued(s);
    const std::uint64_t done = queued.schedule(batch);
    const std::uint64_t acts = queued.stats().activates;
    CHECK(acts >= reads - 2);
    const std::uint64_t tail = RCD + CCD_L + CL + BURST;  // last ACT to last data
    const double bound = std::max((double(acts) - 1) * act_interval,
                                  double(busiest - 1) * double(std::max(RC, RAS + RP))) +
                         double(tail);
    CHECK(double(done) >= bound);
    CHECK(double(done) <= 1.15 * bound);  // FR-FCFS steers around busy banks
    // The same reads one at a time, each finished before the next arrives (a queue that never
    // holds two): no reordering, so a read to a bank still in its tRC stalls every read after it.
    DramController in_order(s);
    std::uint64_t serial_done = 0;
    for (std::uint64_t k = 0; k < reads; ++k) {
      std::vector<DramRequest> two(batch.begin() + 2 * k, batch.begin() + 2 * k + 2);
      serial_done = in_order.schedule(two);
    }
    CHECK(serial_done > done);
    CHECK(serial_done <= (reads - 1) * std::max(RC, RAS + RP) + tail);
    WARN("random 64 B reads: queued " << done << " cycles, in order " << serial_done << ", bound "
                                      << bound << " (busiest bank " << busiest << " reads, " << acts
                                      << " ACTs)");
  }
}

TEST_CASE("dram controller: the shortest tREFI the config allows still serves every request",
          "[dram][controller][refresh]") {
  // chip_validate.cpp's bound: a refresh due at d starts once the rows a command just before d
  // opened can close (at most max(tRAS, tRTP, tWL + burst + tWR) + tRP later), frees the banks
  // tRFC after that, and a row opened then reaches its column command tRCD later, before the
  // next refresh is due.
  DramSpec s = spec();
  const std::uint64_t least_refi = RFC + RP + std::max({RAS, RTP, WL + BURST + WR}) + RCD + 1;
  s.timing.tREFI = Duration::of_cycles(least_refi);
  DramController c(s);
  // Every request a row conflict in a few banks, reads and writes mixed: each needs PRE, ACT
  // and its column command, and some leave a write's recovery before the next refresh.
  std::vector<DramRequest> batch;
  for (std::uint32_t i = 0; i < 200; ++i) {
    DramRequest r = read(i % 2, i % 3, i % 7, 0, i % 32);
    r.write = i % 3 == 0;
    batch.push_back(r);
  }
  const std::uint64_t last = c.schedule(batch);
  CHECK(c.stats().reads + c.stats().writes == batch.size());
  // At least one request per refresh interval: no more intervals than requests.
  CHECK(last <= batch.size() * least_refi);
}
