// Each DRAM timing constraint, probed at t - 1 (refused) and at t (accepted), with parameters
// chosen so that the constraint under test is the one that binds.

#include <set>
#include <tuple>
#include <vector>

#include <catch2/catch.hpp>

#include "models/hbm/address_map.h"
#include "models/hbm/dram_channel.h"
#include "tests/models/dram_test_spec.h"

using namespace tpusim;
using namespace tpusim::models;
using namespace tpusim::test::dram;

namespace {

DramAddress at(std::uint32_t group, std::uint32_t bank, std::uint32_t row = 7) {
  DramAddress a;
  a.bank_group = group;
  a.bank = bank;
  a.row = row;
  return a;
}

// Checks that `cmd` is refused at t - 1 and accepted at t.
void brackets(const DramChannel& ch, DramCommand cmd, const DramAddress& a, std::uint64_t t) {
  CHECK_FALSE(ch.ready(cmd, a, t - 1));
  CHECK(ch.ready(cmd, a, t));
  CHECK(ch.earliest(cmd, a, 0) == t);
}

using Cmd = DramCommand;

}  // namespace

TEST_CASE("dram: tRCD between activate and a column command", "[dram][timing]") {
  DramChannel ch(channel_spec());
  ch.issue(Cmd::kActivate, at(0, 0), 0);
  brackets(ch, Cmd::kRead, at(0, 0), RCD);
  brackets(ch, Cmd::kWrite, at(0, 0), RCD);
}

TEST_CASE("dram: tRAS before precharge, tRP and tRC before the next activate", "[dram][timing]") {
  DramChannel ch(channel_spec());
  ch.issue(Cmd::kActivate, at(0, 0), 0);
  brackets(ch, Cmd::kPrecharge, at(0, 0), RAS);
  SECTION("tRC binds when the precharge comes as early as tRAS allows") {
    ch.issue(Cmd::kPrecharge, at(0, 0), RAS);  // tRP would allow RAS + RP = 48 < RC
    brackets(ch, Cmd::kActivate, at(0, 0), RC);
  }
  SECTION("tRP binds after a late precharge") {
    ch.issue(Cmd::kPrecharge, at(0, 0), 40);
    brackets(ch, Cmd::kActivate, at(0, 0), 40 + RP);
  }
}

TEST_CASE("dram: tRRD_S between groups, tRRD_L within one", "[dram][timing]") {
  DramChannel ch(channel_spec());
  ch.issue(Cmd::kActivate, at(0, 0), 0);
  brackets(ch, Cmd::kActivate, at(1, 0), RRD_S);
  brackets(ch, Cmd::kActivate, at(0, 1), RRD_L);
}

TEST_CASE("dram: no more than four activates in a tFAW window", "[dram][timing]") {
  DramChannel ch(channel_spec());
  for (std::uint32_t g = 0; g < 4; ++g) ch.issue(Cmd::kActivate, at(g, 0), g * RRD_S);
  // tRRD alone would allow a fifth at 3 * RRD_S + RRD_S = 16; tFAW holds it to 0 + FAW.
  brackets(ch, Cmd::kActivate, at(0, 1), FAW);
}

TEST_CASE("dram: tCCD_S between groups, tCCD_L within one", "[dram][timing]") {
  DramChannel ch(channel_spec());
  ch.issue(Cmd::kActivate, at(0, 0), 0);
  ch.issue(Cmd::kActivate, at(0, 1), RRD_L);
  ch.issue(Cmd::kActivate, at(1, 0), RRD_L + RRD_S);
  const std::uint64_t first = 100;  // every bank open long since
  ch.issue(Cmd::kRead, at(0, 0), first);
  CHECK_FALSE(ch.ready(Cmd::kRead, at(1, 0), first + CCD_S - 1));
  CHECK(ch.ready(Cmd::kRead, at(1, 0), first + CCD_S));
  CHECK_FALSE(ch.ready(Cmd::kRead, at(0, 1), first + CCD_L - 1));
  CHECK(ch.ready(Cmd::kRead, at(0, 1), first + CCD_L));
}

TEST_CASE("dram: tWTR_S/L from the end of write data to a read", "[dram][timing]") {
  DramChannel ch(channel_spec());
  ch.issue(Cmd::kActivate, at(0, 0), 0);
  ch.issue(Cmd::kActivate, at(1, 0), RRD_S);
  const std::uint64_t write = 100;
  const std::uint64_t data_end = ch.issue(Cmd::kWrite, at(0, 0), write);
  CHECK(data_end == write + WL + BURST);
  CHECK_FALSE(ch.ready(Cmd::kRead, at(1, 0), data_end + WTR_S - 1));
  CHECK(ch.ready(Cmd::kRead, at(1, 0), data_end + WTR_S));
  CHECK_FALSE(ch.ready(Cmd::kRead, at(0, 0), data_end + WTR_L - 1));
  CHECK(ch.ready(Cmd::kRead, at(0, 0), data_end + WTR_L));
}

TEST_CASE("dram: tWR and tRTP before precharging an accessed bank", "[dram][timing]") {
  DramChannel ch(channel_spec());
  ch.issue(Cmd::kActivate, at(0, 0), 0);
  ch.issue(Cmd::kActivate, at(1, 0), RRD_S);
  const std::uint64_t read = 40;  // past tRAS - tRTP, so tRTP binds
  ch.issue(Cmd::kRead, at(0, 0), read);
  brackets(ch, Cmd::kPrecharge, at(0, 0), read + RTP);
  const std::uint64_t data_end = ch.issue(Cmd::kWrite, at(1, 0), 60);
  brackets(ch, Cmd::kPrecharge, at(1, 0), data_end + WR);
}

TEST_CASE("dram: a read's data follows tCL and holds the bus for one burst", "[dram][timing]") {
  DramChannel ch(channel_spec());
  ch.issue(Cmd::kActivate, at(0, 0), 0);
  ch.issue(Cmd::kActivate, at(1, 0), RRD_S);
  CHECK(ch.issue(Cmd::kRead, at(0, 0), 50) == 50 + CL + BURST);
  // A write right after must not put data on the bus before the read's burst has left it
  // (tRTW is 0 here, so the bus binds).
  CHECK(ch.earliest(Cmd::kWrite, at(1, 0), 50) == 50 + CL + BURST - WL);
}

TEST_CASE("dram: tRTW from a read command to a write command", "[dram][timing]") {
  DramSpec s = channel_spec();
  const std::uint64_t rtw = CL + BURST - WL + 3;  // longer than the bus occupancy, so it binds
  s.timing.tRTW = Duration::of_cycles(rtw);
  DramChannel ch(s);
  ch.issue(Cmd::kActivate, at(0, 0), 0);
  ch.issue(Cmd::kActivate, at(1, 0), RRD_S);
  ch.issue(Cmd::kRead, at(0, 0), 50);
  brackets(ch, Cmd::kWrite, at(1, 0), 50 + rtw);
}

TEST_CASE("dram: refresh every tREFI blocks the banks for tRFC", "[dram][timing][refresh]") {
  SECTION("a request just before the refresh is due is not delayed") {
    DramChannel ch(channel_spec());
    CHECK(ch.access(at(0, 0), false, REFI - 1, false) == REFI - 1 + RCD + CL + BURST);
    CHECK(ch.stats().refreshes == 0);
  }
  SECTION("a request at the due time waits for the refresh") {
    DramChannel ch(channel_spec());
    CHECK(ch.access(at(0, 0), false, REFI, false) == REFI + RFC + RCD + CL + BURST);
    CHECK(ch.stats().refreshes == 1);
  }
  SECTION("refresh closes open rows first") {
    DramChannel ch(channel_spec());
    ch.access(at(0, 0), false, 0, false);
    CHECK(ch.row_open(at(0, 0)));
    ch.access(at(1, 0), false, REFI, false);
    CHECK_FALSE(ch.row_open(at(0, 0)));
  }
}

TEST_CASE("dram: requests pay for their row state: hit, miss, conflict", "[dram][request]") {
  DramChannel ch(channel_spec());
  const std::uint64_t miss_done = ch.access(at(0, 0, 7), false, 0, false);
  CHECK(miss_done == RCD + CL + BURST);  // closed bank: ACT, then read
  const std::uint64_t t = 1000;
  CHECK(ch.access(at(0, 0, 7), false, t, false) == t + CL + BURST);  // open row: read
  // Another row: precharge (tRAS long past), tRP, activate, tRCD, read.
  CHECK(ch.access(at(0, 0, 9), false, 2 * t, false) == 2 * t + RP + RCD + CL + BURST);
  CHECK(ch.stats().row_misses == 1);
  CHECK(ch.stats().row_hits == 1);
  CHECK(ch.stats().row_conflicts == 1);
  SECTION("close-page precharges after each access, so the next is a miss, not a conflict") {
    DramChannel closed(channel_spec());
    closed.access(at(0, 0, 7), false, 0, true);
    CHECK_FALSE(closed.row_open(at(0, 0)));
    CHECK(closed.access(at(0, 0, 9), false, t, true) == t + RCD + CL + BURST);
  }
}

TEST_CASE("dram: the address map follows the field order, least significant last",
          "[dram][mapping]") {
  DramSpec s = channel_spec();
  s.stacks = 1;
  s.channels = 2;
  s.pseudo_channels = 2;  // 4 pseudo-channels
  s.bus_width_bits = 64;  // 32 B bursts
  s.address_mapping = "ro-ba-bg-ch-co";
  const AddressMap map(s);
  // Bursts count up through columns first, then channels, groups, banks, rows.
  const std::uint64_t burst = 32, cols = 32, chans = 4, groups = 4, banks = 4;
  CHECK(map.map(5 * burst).column == 5);
  CHECK(map.map(cols * burst).channel == 1);
  CHECK(map.map(cols * chans * burst).bank_group == 1);
  CHECK(map.map(cols * chans * groups * burst).bank == 1);
  const DramAddress far = map.map(cols * chans * groups * banks * burst * 3 + 7 * burst);
  CHECK(far.row == 3);
  CHECK(far.column == 7);
  s.address_mapping = "ro-co-ba-ch-bg";
  const AddressMap spread(s);
  CHECK(spread.map(burst).bank_group == 1);
  CHECK(spread.map(groups * burst).channel == 1);
}

TEST_CASE("address map: channel_hash spreads a power-of-two stride over every channel, one to one",
          "[dram][mapping]") {
  DramSpec s = channel_spec();
  s.stacks = 1;
  s.channels = 4;
  s.pseudo_channels = 2;  // 8 pseudo-channels
  s.bus_width_bits = 64;  // 32 B bursts
  s.address_mapping = "ro-ba-co-ch-bg";
  // 4 bank groups x 8 channels x 32 B: a row of the address space is 1 KiB per column step, so
  // a 1 KiB stride keeps the channel digit and moves the column: without hashing one channel.
  const std::uint64_t stride = 4 * 8 * 32;
  const auto channels_touched = [&](const AddressMap& m) {
    std::set<std::uint32_t> seen;
    for (std::uint64_t i = 0; i < 8; ++i) seen.insert(m.map(i * stride).channel);
    return seen.size();
  };
  CHECK(channels_touched(AddressMap(s)) == 1);
  s.channel_hash = true;
  const AddressMap hashed(s);
  // Column i (below 8: one base-8 digit) adds i to the channel digit: eight strided accesses,
  // eight channels.
  CHECK(channels_touched(hashed) == 8);
  CHECK(hashed.map(3 * stride).channel == 3);
  CHECK(hashed.map(3 * stride + 32 * 4).channel == 4);  // channel digit 1, plus column 3
  // One to one: every burst of a region maps to its own (channel, group, bank, row, column), and
  // the power-of-two shortcut (Shifts) agrees with the generic map.
  const AddressMap::Shifts fast = hashed.shifts();
  std::set<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t>>
      coordinates;
  const std::uint64_t bursts = 8 * 4 * 4 * 32 * 3;  // every channel, group, bank, column; 3 rows
  for (std::uint64_t b = 0; b < bursts; ++b) {
    const DramAddress a = hashed.map(b * 32);
    coordinates.insert({a.channel, a.bank_group, a.bank, a.row, a.column});
    const DramAddress f = fast.map(b * 32);
    REQUIRE(f.channel == a.channel);
    REQUIRE(f.bank == a.bank);
    REQUIRE(f.row == a.row);
  }
  CHECK(coordinates.size() == bursts);
  // map_range (a DMA chunk's bursts at once, the hash digit sum kept between them) agrees too,
  // from starts that cross the digits above the channel mid-range.
  for (const std::uint64_t start : {std::uint64_t{0}, std::uint64_t{3}, bursts / 2 - 5}) {
    std::vector<DramAddress> range(bursts / 2);
    fast.map_range(start * 32, static_cast<std::uint32_t>(range.size()), 32, range.data());
    for (std::size_t i = 0; i < range.size(); ++i) {
      const DramAddress a = hashed.map((start + i) * 32);
      REQUIRE(range[i].channel == a.channel);
      REQUIRE(range[i].bank_group == a.bank_group);
      REQUIRE(range[i].bank == a.bank);
      REQUIRE(range[i].row == a.row);
    }
  }
  // A channel count that is not a power of two takes the generic path, and stays one to one.
  s.channels = 3;
  s.pseudo_channels = 1;
  const AddressMap odd(s);
  REQUIRE_FALSE(odd.power_of_two());
  // Column k (4 groups x 3 channels x 32 B = 384 B apart) adds the sum of k's base-3 digits
  // to the channel digit, mod 3: k = 1, 2 -> 1, 2; k = 3 ("10") -> 1; k = 5 ("12") -> 0.
  CHECK(odd.map(384).channel == 1);
  CHECK(odd.map(2 * 384).channel == 2);
  CHECK(odd.map(3 * 384).channel == 1);
  CHECK(odd.map(5 * 384).channel == 0);
  coordinates.clear();
  const std::uint64_t odd_bursts = 3 * 4 * 4 * 32 * 3;
  for (std::uint64_t b = 0; b < odd_bursts; ++b) {
    const DramAddress a = odd.map(b * 32);
    REQUIRE(a.channel < 3);
    coordinates.insert({a.channel, a.bank_group, a.bank, a.row, a.column});
  }
  CHECK(coordinates.size() == odd_bursts);
  // One channel with another field not a power of two (the generic path): there is nothing to
  // spread over, and the map still ends (its digit sum once never did) and stays one to one.
  s.channels = 1;
  s.columns = 3;
  const AddressMap single(s);
  REQUIRE_FALSE(single.power_of_two());
  coordinates.clear();
  const std::uint64_t single_bursts = 4 * 4 * 3 * 5;  // groups x banks x columns x 5 rows
  for (std::uint64_t b = 0; b < single_bursts; ++b) {
    const DramAddress a = single.map(b * 32);
    REQUIRE(a.channel == 0);
    coordinates.insert({a.channel, a.bank_group, a.bank, a.row, a.column});
  }
  CHECK(coordinates.size() == single_bursts);
}
