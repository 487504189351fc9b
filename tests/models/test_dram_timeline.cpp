// The timeline engine (`controller.engine: timeline`): one decision per piece on bank state and
// bus and activate timelines. Each expected cycle is derived from tests/models/dram_test_spec.h
// and the rules of models/hbm/README.md ("The timeline engine").

#include <algorithm>
#include <array>
#include <vector>

#include <catch2/catch.hpp>

#include "models/hbm/dram_controller.h"
#include "models/hbm/dram_timeline.h"
#include "tests/models/dram_test_spec.h"

using namespace tpusim;
using namespace tpusim::models;
using namespace tpusim::test::dram;

namespace {

// Activates are spaced by the longer of tRRD_S and a quarter of tFAW: ceil(30 / 4) = 8.
constexpr std::uint64_t kActSlot = 8;

DramSpec spec() {
  DramSpec s = channel_spec();
  s.engine = DramEngine::kTimeline;
  return s;
}

DramAddress at(std::uint32_t group, std::uint32_t bank, std::uint32_t row,
               std::uint32_t column = 0) {
  DramAddress a;
  a.bank_group = group;
  a.bank = bank;
  a.row = row;
  a.column = column;
  return a;
}

// One burst arriving at `arrival`, the present being `arrival` too.
DramTimeline::PieceId one(DramTimeline& d, const DramAddress& a, std::uint64_t arrival,
                          bool write = false) {
  return d.serve(&a, 1, write, arrival, arrival);
}

}  // namespace

TEST_CASE("dram timeline: a closed bank then a hit then a conflict", "[dram][timeline]") {
  DramTimeline d(spec());
  const auto miss = one(d, at(0, 0, 5), 0);
  REQUIRE(d.piece(miss).done);
  CHECK(d.piece(miss).last_done == RCD + CL + BURST);  // ACT at 0
  CHECK(d.piece(miss).first_done == RCD + CL + BURST);
  CHECK(d.piece(miss).misses == 1);
  CHECK(d.piece(miss).activates == 1);

  const auto hit = one(d, at(0, 0, 5, 1), 100);
  REQUIRE(d.piece(hit).done);
  CHECK(d.piece(hit).last_done == 100 + CL + BURST);
  CHECK(d.piece(hit).hits == 1);
  CHECK(d.piece(hit).activates == 0);

  // Another row: the precharge waits until no hit can still arrive before it, so the piece is
  // decided only once the present has passed its cycle (200: tRAS and tRTP long over).
  const auto conflict = one(d, at(0, 0, 6), 200);
  CHECK_FALSE(d.piece(conflict).done);
  CHECK(d.not_before(conflict) == 200);
  d.settle(200);
  CHECK_FALSE(d.piece(conflict).done);
  d.settle(201);
  REQUIRE(d.piece(conflict).done);
  CHECK(d.piece(conflict).last_done == 200 + RP + RCD + CL + BURST);
  CHECK(d.piece(conflict).conflicts == 1);

  d.end_run(1000);
  const DramControllerStats s = d.stats();
  CHECK(s.reads == 3);
  CHECK(s.read_bytes == 3 * 32);
  CHECK(s.row_hits == 1);
  CHECK(s.row_misses == 1);
  CHECK(s.row_conflicts == 1);
  CHECK(s.activates == 2);
  CHECK(s.precharges == 1);
  CHECK(s.data_bus_cycles == 3 * BURST);
  CHECK(s.last_done_cycle == 200 + RP + RCD + CL + BURST);
  CHECK(s.latency_cycles == (RCD + CL + BURST) + (CL + BURST) + (RP + RCD + CL + BURST));
}

TEST_CASE("dram timeline: a row change waits for the hits that arrive before it",
          "[dram][timeline][frfcfs]") {
  DramTimeline d(spec());
  one(d, at(0, 0, 5), 0);  // row 5 open, its ACT at 0, read at RCD
  // Another row at 40: its precharge could go at max(40, tRAS = 34, tRCD + tRTP = 19) = 40.
  const auto change = one(d, at(0, 0, 6), 40);
  CHECK_FALSE(d.piece(change).done);
  // A hit arriving by then goes first and moves the precharge to its read + tRTP = 45.
  const auto hit = one(d, at(0, 0, 5, 1), 40);
  REQUIRE(d.piece(hit).done);
  CHECK(d.piece(hit).last_done == 40 + CL + BURST);
  CHECK(d.not_before(change) == 40 + RTP);
  // A hit arriving after that cycle finds the row changing: it waits for row 5 to come back.
  const auto late = d.serve(std::array<DramAddress, 1>{at(0, 0, 5, 2)}.data(), 1, false, 50, 40);
  CHECK_FALSE(d.piece(late).done);
  d.settle(46);
  REQUIRE(d.piece(change).done);
  const std::uint64_t pre = 40 + RTP, act = pre + RP;
  CHECK(d.piece(change).last_done == act + RCD + CL + BURST);
  CHECK_FALSE(d.piece(late).done);
  // Row 5 again once row 6 may close: tRAS after its ACT (the read's tRTP is earlier); the
  // activate also waits tRC after row 6's.
  const std::uint64_t back = act + RAS;
  CHECK(d.not_before(late) == back);
  d.settle(back + 1);
  REQUIRE(d.piece(late).done);
  const std::uint64_t act_back = std::max(back + RP, act + RC);
  CHECK(d.piece(late).last_done == act_back + RCD + CL + BURST);
  CHECK(d.piece(late).conflicts == 1);
}

TEST_CASE("dram timeline: a hit that waited goes first once another hit delays the change",
          "[dram][timeline][frfcfs]") {
  DramTimeline d(spec());
  one(d, at(0, 0, 5), 0);  // row 5 open; its precharge floor is tRAS = 34
  // Row 6 at 40: the change is due at max(40, 34) = 40.
  const auto change = one(d, at(0, 0, 6), 40);
  // A hit entering at 42 comes after the change is due: it waits behind it.
  const auto late = d.serve(std::array<DramAddress, 1>{at(0, 0, 5, 1)}.data(), 1, false, 42, 40);
  CHECK_FALSE(d.piece(late).done);
  d.settle(40);  // nothing is due before 40
  CHECK_FALSE(d.piece(change).done);
  CHECK_FALSE(d.piece(late).done);
  // A hit entering at 40 goes before the change, and its read at 40 moves the change to
  // 40 + tRTP = 45: now the waiting hit enters before it too.
  const auto early = one(d, at(0, 0, 5, 2), 40);
  REQUIRE(d.piece(early).done);
  CHECK(d.piece(early).last_done == 40 + CL + BURST);
  d.settle(41);
  REQUIRE(d.piece(late).done);
  CHECK(d.piece(late).hits == 1);
  CHECK(d.piece(late).last_done == 42 + CL + BURST);
  // Its read at 42 holds the precharge to 42 + tRTP.
  CHECK_FALSE(d.piece(change).done);
  CHECK(d.not_before(change) == 42 + RTP);
}

TEST_CASE("dram timeline: a waiting change becomes a hit when another piece opens its row",
          "[dram][timeline][frfcfs]") {
  DramTimeline d(spec());
  one(d, at(0, 0, 5), 0);  // bank A: row 5, ACT at 0
  one(d, at(1, 0, 5), 0);  // bank B: row 5, ACT in the next slot
  // B to row 6 at 40: due at B's precharge floor, kActSlot + tRAS = 42.
  const auto b_change = one(d, at(1, 0, 6), 40);
  d.settle(40);
  CHECK_FALSE(d.piece(b_change).done);
  // A piece for row 6 in both banks at 41 waits on A, whose change is due at once (tRAS = 34).
  const std::array<DramAddress, 2> both{at(0, 0, 6), at(1, 0, 6)};
  const auto p = d.serve(both.data(), 2, false, 41, 41);
  CHECK_FALSE(d.piece(p).done);
  d.settle(42);  // B's change is not due before 42; A's is
  REQUIRE(d.piece(p).done);
  CHECK(d.piece(p).conflicts == 2);
  CHECK_FALSE(d.piece(b_change).done);
  // p opened row 6 in B too: B's waiting piece is a hit now, and goes at the next settle.
  d.settle(43);
  REQUIRE(d.piece(b_change).done);
  CHECK(d.piece(b_change).hits == 1);
  CHECK(d.piece(b_change).conflicts == 0);
  // Its read follows B's ACT for p by tRCD, and p's data on the bus.
  const std::uint64_t act_a = std::max(RC, 41 + RP);
  const std::uint64_t act_b = std::max({kActSlot + RC, kActSlot + RAS + RP, act_a + kActSlot});
  const std::uint64_t p_data = std::max(act_a + RCD, act_b + RCD - CCD_S) + CL;
  CHECK(d.piece(p).last_done == p_data + CCD_S + BURST);
  CHECK(d.piece(b_change).last_done == std::max(act_b + RCD + CL, d.piece(p).last_done) + BURST);
}

TEST_CASE("dram timeline: a change another bank's piece makes due is settled at the next serve",
          "[dram][timeline][frfcfs]") {
  DramTimeline d(spec());
  one(d, at(0, 0, 5), 0);  // bank A: row 5, ACT at 0
  one(d, at(1, 0, 5), 0);  // bank B: row 5, ACT in the next slot
  // B's queue: row 6 entering at 300, then row 7 entering at 50 behind it.
  const auto c = d.serve(std::array<DramAddress, 1>{at(1, 0, 6)}.data(), 1, false, 300, 40);
  const auto late_d = d.serve(std::array<DramAddress, 1>{at(1, 0, 7)}.data(), 1, false, 50, 40);
  // Row 6 in A and B at 45: it waits on A, whose change is due at 45.
  const std::array<DramAddress, 2> both{at(0, 0, 6), at(1, 0, 6)};
  const auto q = d.serve(both.data(), 2, false, 45, 40);
  d.settle(200);  // B first: its change (c, at 300) is not due; then A: q goes
  REQUIRE(d.piece(q).done);
  CHECK_FALSE(d.piece(c).done);
  CHECK_FALSE(d.piece(late_d).done);
  // q opened row 6 in B: c is a hit now, and late_d's change, due at B's tRAS after q's ACT, is
  // already past. The next request at 200 settles it first.
  const std::uint64_t act_a = std::max(45 + RP, RC);
  const std::uint64_t act_b = std::max({45 + RP, kActSlot + RC, act_a + kActSlot});
  REQUIRE(act_b + RAS < 200);
  one(d, at(2, 0, 1), 200);
  REQUIRE(d.piece(late_d).done);
  const std::uint64_t act_d = std::max(act_b + RAS + RP, act_b + RC);
  CHECK(d.piece(late_d).last_done == act_d + RCD + CL + BURST);
}

TEST_CASE("dram timeline: pieces share the data bus and space their bursts by bank group",
          "[dram][timeline]") {
  DramTimeline d(spec());
  // Four bursts, one per bank group, bank 0 row 3: four ACTs one slot apart. The bursts go back
  // to back, each no sooner than its bank's tRCD: the last bank's sets the train, whose first
  // read issues 3 x tCCD_S before that (when the first bank has long been ready).
  const std::array<DramAddress, 4> spread{at(0, 0, 3), at(1, 0, 3), at(2, 0, 3), at(3, 0, 3)};
  const auto a = d.serve(spread.data(), 4, false, 0, 0);
  REQUIRE(d.piece(a).done);
  const std::uint64_t a_start = 3 * kActSlot + RCD - 3 * CCD_S + CL;
  CHECK(d.piece(a).first_done == a_start + BURST);
  CHECK(d.piece(a).last_done == a_start + 3 * CCD_S + BURST);
  CHECK(d.piece(a).activates == 4);
  // Four bursts in one bank group (bank 1 there, row 3): tCCD_L apart.
  const std::array<DramAddress, 4> packed{at(0, 1, 3, 0), at(0, 1, 3, 1), at(0, 1, 3, 2),
                                          at(0, 1, 3, 3)};
  const auto b = d.serve(packed.data(), 4, false, 0, 0);
  REQUIRE(d.piece(b).done);
  // The first finds the bank closed; its activate opens the row the other three hit.
  CHECK(d.piece(b).misses == 1);
  CHECK(d.piece(b).hits == 3);
  CHECK(d.piece(b).activates == 1);
  // Its ACT takes the fifth slot; its data follows a's on the bus.
  const std::uint64_t b_ready = 4 * kActSlot + RCD + CL;
  const std::uint64_t b_start = std::max(b_ready, a_start + 3 * CCD_S + BURST);
  CHECK(d.piece(b).last_done == b_start + 3 * CCD_L + BURST);
  // A hit arriving while b's data is on the bus waits for the bus, not for its bank.
  const auto c = d.serve(std::array<DramAddress, 1>{at(1, 0, 3, 5)}.data(), 1, false, a_start, 0);
  REQUIRE(d.piece(c).done);
  CHECK(d.piece(c).hits == 1);
  CHECK(d.piece(c).last_done == b_start + 3 * CCD_L + BURST + BURST);
}

TEST_CASE("dram timeline: in a piece the bursts whose banks are ready go first",
          "[dram][timeline]") {
  DramTimeline d(spec());
  one(d, at(0, 0, 1), 0);  // bank 0 of group 0: row 1, ACT at 0
  one(d, at(1, 0, 1), 0);  // bank 0 of group 1: row 1, ACT one slot later
  // A piece with another row in the first bank and a hit in the second. The row change is
  // decided once the present passes 200 (tRAS and tRTP long over): PRE at 200, ACT tRP later.
  const std::array<DramAddress, 2> mixed{at(0, 0, 2), at(1, 0, 1, 1)};
  const auto p = d.serve(mixed.data(), 2, false, 200, 200);
  CHECK_FALSE(d.piece(p).done);
  d.settle(201);
  REQUIRE(d.piece(p).done);
  CHECK(d.piece(p).conflicts == 1);
  CHECK(d.piece(p).hits == 1);
  // The hit's read goes one tCCD_S ahead of the other, which issues as its bank allows.
  const std::uint64_t last_read = 200 + RP + RCD;
  CHECK(d.piece(p).last_done == last_read + CL + BURST);
  CHECK(d.piece(p).first_done == last_read - CCD_S + CL + BURST);
}

TEST_CASE("dram timeline: a burst enters a full queue when the one ahead has left",
          "[dram][timeline][queue]") {
  // Two bursts for two closed banks at cycle 0: X's ACT at 0, Y's one activate slot later.
  const std::array<DramAddress, 2> two{at(0, 0, 1), at(1, 0, 1)};
  SECTION("room for both: Y's ACT waits only for its slot") {
    DramTimeline d(spec());
    one(d, two[0], 0);
    const auto y = one(d, two[1], 0);
    REQUIRE(d.piece(y).done);
    CHECK(d.piece(y).last_done == kActSlot + RCD + CL + BURST);
  }
  SECTION("a queue of one: Y enters when X's read issues, tRCD after its ACT") {
    DramSpec s = spec();
    s.queue_depth = 1;
    DramTimeline d(s);
    one(d, two[0], 0);
    const auto y = one(d, two[1], 0);
    REQUIRE(d.piece(y).done);
    CHECK(d.piece(y).last_done == RCD + RCD + CL + BURST);
    // Its latency counts from its arrival, the wait in line included.
    d.end_run(1000);
    CHECK(d.stats().latency_cycles == (RCD + CL + BURST) + (2 * RCD + CL + BURST));
  }
  SECTION("a burst leaves when its bank is ready, though its piece's train waits for another") {
    DramSpec s = spec();
    s.queue_depth = 2;
    DramTimeline d(s);
    one(d, at(0, 0, 1), 0);  // row 1 open in group 0, its ACT at 0
    // A hit in group 0 (ready at 100) and a closed bank in group 1 (ACT at 100, ready tRCD
    // later): the train starts when the second can follow the first, its data at 112 + CL.
    const std::array<DramAddress, 2> pair{at(0, 0, 1, 1), at(1, 0, 1)};
    const auto p = d.serve(pair.data(), 2, false, 100, 100);
    REQUIRE(d.piece(p).done);
    const std::uint64_t train = 100 + RCD - BURST;
    CHECK(d.piece(p).last_done == train + BURST + CL + BURST);
    // The queue is full: Y enters as the hit leaves, at 100, when the command engine would read
    // it, not at the train's 112. Its ACT takes the first free activate slot, after group 1's.
    const auto y = one(d, at(2, 0, 1), 100);
    REQUIRE(d.piece(y).done);
    CHECK(d.piece(y).last_done == 100 + kActSlot + RCD + CL + BURST);
  }
  SECTION("a piece larger than a queue of one goes whole; the next burst waits for its last") {
    DramSpec s = spec();
    s.queue_depth = 1;
    DramTimeline d(s);
    // Four closed banks, one per group: ACTs one slot apart, the last read at 3 slots + tRCD.
    const std::array<DramAddress, 4> spread{at(0, 0, 1), at(1, 0, 1), at(2, 0, 1), at(3, 0, 1)};
    const auto p = d.serve(spread.data(), 4, false, 0, 0);
    REQUIRE(d.piece(p).done);
    const std::uint64_t last_read = 3 * kActSlot + RCD;
    CHECK(d.piece(p).last_done == last_read + CL + BURST);
    // Another closed bank: it enters once that last read has issued, then takes its own ACT.
    const auto y = one(d, at(0, 1, 1), 0);
    REQUIRE(d.piece(y).done);
    CHECK(d.piece(y).last_done == last_read + RCD + CL + BURST);
  }
}

TEST_CASE("dram timeline: a full queue of waiting bursts admits later pieces in order",
          "[dram][timeline][queue]") {
  // Two rows of one bank asked for alternately (A1 B1 A2 B2 ...), all at cycle 0, through a
  // queue of two. FR-FCFS serves a row's hits only among the bursts in the queue: A1 opens row
  // 1 and A2 enters as A1's read issues and hits, but B2 enters as A2's issues, and then both
  // queued bursts need row 2. From then on each row opening serves the two bursts queued for it
  // and the one that enters as the second of them leaves (the other row's next one enters as
  // the first leaves): B1 B2 B3, A3 A4 A5, B4 B5 B6, ...
  constexpr std::uint32_t kEach = 12;
  DramSpec s = spec();
  s.queue_depth = 2;
  DramTimeline d(s);
  std::vector<DramTimeline::PieceId> ids;  // A(i+1) is ids[2i], B(i+1) is ids[2i + 1]
  for (std::uint32_t k = 0; k < 2 * kEach; ++k) {
    const DramAddress a = at(0, 0, k % 2 == 0 ? 1 : 2, k / 2);
    ids.push_back(d.serve(&a, 1, false, 0, 0));
  }
  CHECK(d.piece(ids[2]).done);        // A2: the hit that entered as A1 left
  CHECK_FALSE(d.piece(ids[3]).done);  // B2 waits behind B1's row change
  // A3 waits for room: B1 and B2 fill the queue and their leaving is not decided yet. The
  // earliest change, B1's precharge at tRAS, may decide it.
  CHECK_FALSE(d.piece(ids[4]).done);
  CHECK(d.not_before(ids[4]) == RAS);
  d.end_run(100000);
  // Opening o activates at o * tRC (tRAS + tRP would be sooner); its reads follow tRCD after,
  // one burst apart (the timeline leaves out tCCD_L between pieces).
  const auto check = [&](DramTimeline::PieceId id, std::uint32_t opening, std::uint32_t slot) {
    REQUIRE(d.piece(id).done);
    CHECK(d.piece(id).last_done == opening * RC + RCD + CL + (slot + 1) * BURST);
  };
  for (std::uint32_t i = 0; i < kEach; ++i) {
    if (i < 2)
      check(ids[2 * i], 0, i);
    else
      check(ids[2 * i], 2 * ((i - 2) / 3 + 1), (i - 2) % 3);
    check(ids[2 * i + 1], 2 * (i / 3) + 1, i % 3);
  }
  // Openings 0 to 8: A12 is alone in the last.
  CHECK(d.stats().activates == 9);

  // The command engine, which chooses every command by FR-FCFS over the queue, serves them in
  // the same openings (its reads also keep tCCD_L apart).
  s.engine = DramEngine::kCommand;
  DramController reference(s);
  std::vector<DramController::TransferId> transfers;
  for (std::uint32_t k = 0; k < 2 * kEach; ++k) {
    const DramAddress a = at(0, 0, k % 2 == 0 ? 1 : 2, k / 2);
    transfers.push_back(reference.open_transfer());
    reference.enqueue(a, false, 0, transfers.back());
  }
  reference.advance(100000);
  std::uint32_t activates = 0;
  for (std::uint32_t k = 0; k < 2 * kEach; ++k) {
    const auto& t = reference.transfer(transfers[k]);
    activates += t.activates;
    CHECK((t.last_done - RCD - CL) / RC == (d.piece(ids[k]).last_done - RCD - CL) / RC);
  }
  CHECK(activates == 9);
}

TEST_CASE("dram timeline: refresh holds the bus and closes every row", "[dram][timeline]") {
  DramTimeline d(spec());
  one(d, at(0, 0, 5), 0);
  // Same row, but inside the first refresh window [tREFI, tREFI + tRP + tRFC): the refresh
  // closed it, so the read activates again after the window.
  const auto after = one(d, at(0, 0, 5, 1), REFI + 10);
  REQUIRE(d.piece(after).done);
  CHECK(d.piece(after).misses == 1);
  CHECK(d.piece(after).hits == 0);
  CHECK(d.piece(after).last_done == REFI + RP + RFC + RCD + CL + BURST);
  d.end_run(2 * REFI + 1);
  CHECK(d.stats().refreshes == 2);
  CHECK(d.stats().refresh_cycles == 2 * RFC);
}

TEST_CASE("dram timeline: a read after a write waits tWTR after the write's data",
          "[dram][timeline]") {
  DramTimeline d(spec());
  one(d, at(0, 0, 5), 0);  // opens row 5
  const std::uint64_t t = 200;
  const auto w = one(d, at(1, 0, 5), t, true);  // bank group 1 is closed: ACT at t
  REQUIRE(d.piece(w).done);
  const std::uint64_t write_end = t + RCD + WL + BURST;
  CHECK(d.piece(w).last_done == write_end);
  const auto r = one(d, at(0, 0, 5, 1), t + RCD);  // a hit, ready at once
  REQUIRE(d.piece(r).done);
  CHECK(d.piece(r).last_done == write_end + WTR_S + CL + BURST);
  d.end_run(1000);
  CHECK(d.stats().writes == 1);
  CHECK(d.stats().write_bytes == 32);
}
