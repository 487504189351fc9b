// The interconnect's timing: hop latency, link serialisation, and bandwidth shared only by flows
// that share a link. 1 GHz, 64 B links, 1-cycle hops, 64 B transfers: one cycle per transfer.

#include <algorithm>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "models/common/booking_horizon.h"
#include "models/noc/noc_timing.h"

using namespace tpusim;
using namespace tpusim::models;

namespace {

constexpr double kNs = 1e-9;
constexpr std::uint64_t kBytes = 64;  // one link cycle
constexpr std::uint64_t kTransfers = 1000;

NocSpec mesh(std::uint32_t columns) {
  NocSpec s;
  s.topology = NocTopology::kMesh;
  s.mesh_columns = columns;
  s.link_width = Bytes(64);
  s.hop_latency = Duration::of_cycles(1);
  return s;
}

struct Flow {
  std::uint32_t src, dst;
  double last = 0;  // when its last byte arrived
};

// Sends kTransfers transfers per flow, all ready at time 0, the flows taking turns.
void run(NocTiming& noc, std::vector<Flow>& flows) {
  for (std::uint64_t i = 0; i < kTransfers; ++i)
    for (Flow& f : flows) f.last = noc.transfer(f.src, f.dst, kBytes, 0, 0, 0);
}

}  // namespace

TEST_CASE("noc: a lone transfer takes one hop latency per link plus its serialisation",
          "[noc][timing]") {
  // A 1 x 4 mesh: cores at x0 and x1, memory channels at x2 and x3.
  NocTiming noc(mesh(4), 2, 2, Hertz(1e9));
  CHECK(noc.hops(0, 3) == 3);
  CHECK(noc.transfer(0, 3, 4 * kBytes, 0, 0, 0) / kNs == Approx(3 * 1 + 4));
  SECTION("crossbar: one hop between any two nodes") {
    NocSpec s = mesh(1);
    s.topology = NocTopology::kCrossbar;
    NocTiming xbar(s, 2, 2, Hertz(1e9));
    CHECK(xbar.hops(0, 3) == 1);
    CHECK(xbar.transfer(0, 3, 4 * kBytes, 0, 0, 0) / kNs == Approx(1 + 4));
  }
  SECTION("XY routing: along the row first, then down the column") {
    NocTiming grid(mesh(2), 2, 2, Hertz(1e9));  // 2 x 2: cores on row 0, channels on row 1
    CHECK(grid.hops(0, 3) == 2);
    grid.transfer(0, 3, kBytes, 0, 0, 0);
    for (std::size_t i = 0; i < grid.links(); ++i) {
      const bool used = grid.link_name(i) == "x0y0.east" || grid.link_name(i) == "x1y0.south";
      CHECK(grid.link_stats(i).bytes == (used ? kBytes : 0));
    }
  }
  SECTION("XY routing back: west along the row, then up the column") {
    // A 3 x 3 grid of 9 nodes: from x2y2 (node 8) to x0y0 (node 0), two links west, two north.
    NocTiming grid(mesh(3), 1, 8, Hertz(1e9));
    CHECK(grid.hops(8, 0) == 4);
    CHECK(grid.transfer(8, 0, kBytes, 0, 0, 0) / kNs == Approx(4 * 1 + 1));
    for (std::size_t i = 0; i < grid.links(); ++i) {
      const std::string& name = grid.link_name(i);
      const bool used = name == "x2y2.west" || name == "x1y2.west" || name == "x0y2.north" ||
                        name == "x0y1.north";
      INFO(name);
      CHECK(grid.link_stats(i).bytes == (used ? kBytes : 0));
    }
  }
}

TEST_CASE("noc: two flows on one mesh link each get half its bandwidth", "[noc][timing]") {
  const double alone_last = (kTransfers - 1) + 3 + 1;  // last starts at K-1, 3 hops, 1 cycle
  NocTiming alone(mesh(4), 2, 2, Hertz(1e9));
  std::vector<Flow> one{{0, 3}};
  run(alone, one);
  CHECK(one[0].last / kNs == Approx(alone_last));

  // 0 -> 3 and 1 -> 3 share the links x1.east and x2.east.
  NocTiming shared(mesh(4), 2, 2, Hertz(1e9));
  std::vector<Flow> two{{0, 3}, {1, 3}};
  run(shared, two);
  // The shared links carry 2K cycles of data: each flow's K transfers need 2K cycles.
  for (const Flow& f : two) {
    CHECK(f.last / kNs >= 2 * kTransfers);
    CHECK(f.last / kNs <= 2 * kTransfers + 4);  // plus at most the route's hops and one transfer
    const double bandwidth = double(kTransfers * kBytes) / (f.last / kNs);  // B per cycle
    CHECK(bandwidth == Approx(64.0 / 2).epsilon(0.005));
  }
  int found = 0;
  for (std::size_t i = 0; i < shared.links(); ++i) {
    if (shared.link_name(i) != "x1y0.east") continue;
    ++found;
    CHECK(shared.link_stats(i).bytes == 2 * kTransfers * kBytes);
    CHECK(shared.link_stats(i).busy_ps == 2 * kTransfers * 1000);
  }
  CHECK(found == 1);
}

TEST_CASE("noc: disjoint flows do not slow each other", "[noc][timing]") {
  // 0 -> 1 uses x0.east only; 2 -> 3 uses x2.east only.
  NocTiming a(mesh(4), 2, 2, Hertz(1e9)), b(mesh(4), 2, 2, Hertz(1e9));
  std::vector<Flow> left{{0, 1}}, both{{0, 1}, {2, 3}};
  run(a, left);
  run(b, both);
  CHECK(left[0].last / kNs == Approx((kTransfers - 1) + 1 + 1));
  CHECK(both[0].last == left[0].last);
  CHECK(both[1].last == left[0].last);
}

TEST_CASE("noc: a link wider than its source adds only hop latency", "[noc][timing]") {
  // Data trickles out of a source over 100 ns; the 64 B/cycle link carries 640 B in 10 ns
  // while it arrives, so the last byte lands one hop after it left.
  NocSpec s = mesh(1);
  s.topology = NocTopology::kCrossbar;
  NocTiming xbar(s, 1, 1, Hertz(1e9));
  CHECK(xbar.transfer(1, 0, 640, 0, 100 * kNs, 0) / kNs == Approx(100 + 1));
}

TEST_CASE("noc: a source link that cannot queue is counted but not booked", "[noc][timing]") {
  // Two cores (nodes 0, 1) and one channel (node 2). The channel sends 640 B to each core, both
  // ready over [0, 10 ns): ten link cycles each. Booked, the second waits for the first on the
  // channel's link (done at 20 + 1 ns); the caller's promise that the source's windows never
  // overlap lets its link go unbooked (done at 10 + 1 ns). Its statistics count both either way.
  NocSpec s = mesh(1);
  s.topology = NocTopology::kCrossbar;
  for (const bool unqueued : {false, true}) {
    NocTiming xbar(s, 2, 1, Hertz(1e9));
    const UnqueuedLinks links{unqueued, false};
    CHECK(xbar.transfer(2, 0, 640, 0, 10 * kNs, 0, links) / kNs == Approx(10 + 1));
    CHECK(xbar.transfer(2, 1, 640, 0, 10 * kNs, 0, links) / kNs ==
          Approx((unqueued ? 10 : 20) + 1));
    REQUIRE(xbar.link_name(4) == "ch0.to_switch");
    CHECK(xbar.link_stats(4).bytes == 1280);
    CHECK(xbar.link_stats(4).busy_ps == 20000);
  }
  SECTION("a mesh's links also carry traffic passing through: booked all the same") {
    // 1 x 4: cores at x0 and x1, channels at x2 and x3. Channel 1's data for core 1 crosses
    // x3.west over [0, 10) and x2.west over [1, 11) ns. Channel 0's data for core 0 starts on
    // x2.west, so it waits until 11, takes 10 ns to cross and then two hops: 23 ns.
    NocTiming line(mesh(4), 2, 2, Hertz(1e9));
    const UnqueuedLinks links{true, true};
    CHECK(line.transfer(3, 1, 640, 0, 10 * kNs, 0, links) / kNs == Approx(10 + 2));
    CHECK(line.transfer(2, 0, 640, 0, 10 * kNs, 0, links) / kNs == Approx(11 + 10 + 2));
    // 1 x 3: the core at x0, channels at x1 and x2. Channel 0's data crosses x1.west over
    // [0, 10) ns. Channel 1's reaches x1.west over [1, 11), waits for it until 10, and lands at
    // 20 + 1: the core's last link is booked too.
    NocTiming three(mesh(3), 1, 2, Hertz(1e9));
    CHECK(three.transfer(1, 0, 640, 0, 10 * kNs, 0, links) / kNs == Approx(10 + 1));
    CHECK(three.transfer(2, 0, 640, 0, 10 * kNs, 0, links) / kNs == Approx(20 + 1));
  }
}

TEST_CASE("noc: a core link no slower than all its sources together is counted but not booked",
          "[noc][timing]") {
  // One core (node 0) and two channels (nodes 1, 2), each sending 640 B over [0, 20 ns): 32 B/ns
  // each, 64 B/ns together, the core link's rate. Crossing as it leaves, all of it is through by
  // 20 ns, plus the hop. Booked as a block at the end of its window, the second channel's data
  // waits for the first's: [10, 20) then [20, 30), done at 30 + 1 ns. The caller's promise that
  // the sources together never exceed the link lets it skip the booking and give 20 + 1 to both.
  NocSpec s = mesh(1);
  s.topology = NocTopology::kCrossbar;
  for (const bool unqueued : {false, true}) {
    NocTiming xbar(s, 1, 2, Hertz(1e9));
    const UnqueuedLinks links{false, unqueued};
    CHECK(xbar.transfer(1, 0, 640, 0, 20 * kNs, 0, links) / kNs == Approx(20 + 1));
    CHECK(xbar.transfer(2, 0, 640, 0, 20 * kNs, 0, links) / kNs ==
          Approx((unqueued ? 20 : 30) + 1));
    REQUIRE(xbar.link_name(1) == "core0.from_switch");
    CHECK(xbar.link_stats(1).bytes == 1280);
    CHECK(xbar.link_stats(1).transfers == 2);
    CHECK(xbar.link_stats(1).busy_ps == 20000);
  }
  SECTION("a source's own link is still booked unless it cannot queue either") {
    // Channel 1 sends twice over the same window: its own link queues the second block.
    NocTiming xbar(s, 1, 2, Hertz(1e9));
    const UnqueuedLinks links{false, true};
    CHECK(xbar.transfer(1, 0, 640, 0, 20 * kNs, 0, links) / kNs == Approx(20 + 1));
    CHECK(xbar.transfer(1, 0, 640, 0, 20 * kNs, 0, links) / kNs == Approx(30 + 1));
  }
}

TEST_CASE("noc: a reservation fills an earlier gap in a link's timeline", "[noc][timing]") {
  LinkTimeline t;
  CHECK(t.reserve(10, 5) == 10);
  CHECK(t.reserve(0, 4) == 0);   // fits before [10, 15)
  CHECK(t.reserve(2, 7) == 15);  // the gap [4, 10) is too short for 7
  CHECK(t.reserve(2, 6) == 4);   // ... and exactly long enough for 6
  CHECK(t.intervals() == 1);     // touching intervals merge: [0, 22)
  t.forget_before(23);
  CHECK(t.intervals() == 0);
}

TEST_CASE("noc: an integer timeline serves a request that can go now before one booked ahead",
          "[noc][timing]") {
  // An SRAM port in picoseconds: a DMA books [1000, 1500) for data still in flight; an access
  // that can start at 0 takes the gap before it, and fit() agrees with reserve().
  BusyTimeline<std::uint64_t> port;
  CHECK(port.reserve(1000, 500) == 1000);
  CHECK(port.fit(0, 1000) == 0);
  CHECK(port.fit(0, 1001) == 1500);
  CHECK(port.reserve(0, 1000) == 0);
  CHECK(port.intervals() == 1);  // [0, 1000) touches [1000, 1500) exactly
  CHECK(port.last_end() == 1500);
  CHECK(port.reserve(200, 1) == 1500);
}

TEST_CASE("busy timeline: next_free names the first free moment and how long it lasts",
          "[noc][timeline]") {
  // [10, 20) and [25, 40) booked: free before 10, for 5 at 20, open-ended from 40.
  BusyTimeline<std::uint64_t> port;
  port.reserve(10, 10);
  port.reserve(25, 15);
  std::uint64_t length = 0;
  CHECK(port.next_free(0, 1000, length) == 0);
  CHECK(length == 10);
  CHECK(port.next_free(12, 1000, length) == 20);
  CHECK(length == 5);
  CHECK(port.next_free(22, 1000, length) == 22);
  CHECK(length == 3);
  CHECK(port.next_free(25, 1000, length) == 40);
  CHECK(length == 1000);
}

TEMPLATE_TEST_CASE("busy timeline: first fit agrees with a scan of every reservation",
                   "[noc][timeline]", std::uint64_t, double) {
  // Hundreds of live intervals and requests far behind the last one, so the search by quarters
  // and halves is taken; whole numbers, so the double timeline's 1 fs touch tolerance never
  // decides a fit.
  BusyTimeline<TestType> timeline;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> booked;  // [start, end), disjoint
  std::uint64_t state = 12345;
  const auto next = [&](std::uint64_t range) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;  // a fixed LCG: repeatable
    return (state >> 33) % range;
  };
  std::uint64_t now = 0;
  std::size_t most_live = 0;
  for (int i = 0; i < 20000; ++i) {
    const std::uint64_t earliest = now + next(4000), duration = 1 + next(12);
    std::uint64_t expected = earliest;
    for (const auto& [start, end] : booked) {
      if (end <= expected) continue;
      if (expected + duration <= start) break;
      expected = end;
    }
    REQUIRE(timeline.fit(TestType(earliest), TestType(duration)) == TestType(expected));
    REQUIRE(timeline.reserve(TestType(earliest), TestType(duration)) == TestType(expected));
    const std::pair<std::uint64_t, std::uint64_t> added{expected, expected + duration};
    booked.insert(std::upper_bound(booked.begin(), booked.end(), added), added);
    most_live = std::max(most_live, timeline.intervals());
    if (i % 500 == 499) {
      // Nothing is asked before `now` from here on: what ended before it may go.
      now += 1000;
      timeline.forget_before(TestType(now));
      booked.erase(std::remove_if(booked.begin(), booked.end(),
                                  [&](const auto& b) { return b.second < now; }),
                   booked.end());
    }
  }
  CHECK(most_live > 100);
}

TEST_CASE("booking horizon: the earliest open arrival, opened and closed in any order",
          "[noc][timeline]") {
  BookingHorizon horizon;
  std::vector<std::uint64_t> open;  // the reference: every open arrival
  std::uint64_t state = 99;
  const auto next = [&](std::uint64_t range) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return (state >> 33) % range;
  };
  std::uint64_t present = 1000;
  for (int i = 0; i < 20000; ++i) {
    present += next(3);
    if (open.empty() || next(2) == 0) {
      // Mostly at the present; a write's data arrives later; repeats are common.
      const std::uint64_t arrival = present + (next(4) == 0 ? next(50) : 0);
      horizon.open(arrival);
      open.push_back(arrival);
    } else {
      const std::size_t k = next(open.size());  // completions come in any order
      horizon.close(open[k]);
      open.erase(open.begin() + static_cast<std::ptrdiff_t>(k));
    }
    const std::uint64_t expected =
        open.empty() ? present : std::min(present, *std::min_element(open.begin(), open.end()));
    REQUIRE(horizon.earliest(present) == expected);
  }
}
