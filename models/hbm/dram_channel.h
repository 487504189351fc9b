#pragma once
// One DRAM channel (an HBM pseudo-channel, or a DDR channel) at command level, in DRAM clock
// cycles (tCK), no SystemC. It tracks each bank's open row and the earliest cycle each command
// may issue under every timing constraint of the config:
//   ACT  after tRP (PRE, same bank), tRC (ACT, same bank), tRRD_S/L (ACT, other/same bank group),
//        tFAW (no more than four ACTs in any tFAW window), tRFC (refresh)
//   RD   after tRCD (ACT, same bank), tCCD_S/L (column command, other/same bank group),
//        tWTR_S/L (end of write data, other/same bank group)
//   WR   after tRCD, tCCD_S/L, tRTW (last read command)
//   PRE  after tRAS (ACT), tRTP (RD), tWR (end of write data), same bank
//   REF  all banks precharged; blocks every bank for tRFC; due every tREFI
// plus the data bus: a burst occupies it burst_length / transfers_per_clock cycles, starting
// tCL after a read command or tWL after a write command.

#include <algorithm>
#include <array>
#include <cassert>
#include <cstdint>
#include <vector>

#include "sim/base/spec/memory_spec.h"

namespace tpusim::models {

// Timing parameters resolved to whole DRAM clock cycles.
struct DramCycles {
  std::uint64_t RCD, RP, RAS, RC, CL, WL, CCD_S, CCD_L, RRD_S, RRD_L, FAW, WR, WTR_S, WTR_L, RTP,
      RFC, REFI, RTW;
  std::uint64_t BURST;  // data-bus cycles per burst
};
DramCycles resolve_timing(const DramSpec& spec);

struct DramAddress {
  std::uint32_t channel = 0;  // pseudo-channel index over the whole memory
  std::uint32_t bank_group = 0;
  std::uint32_t bank = 0;  // within its group
  std::uint32_t row = 0;
  std::uint32_t column = 0;  // burst index within the row
};

enum class DramCommand { kActivate, kPrecharge, kRead, kWrite };

// Command-level counts, kept where each command issues.
struct DramChannelStats {
  std::uint64_t reads = 0, writes = 0;
  std::uint64_t row_hits = 0, row_misses = 0, row_conflicts = 0;  // by access() only
  std::uint64_t activates = 0, precharges = 0, refreshes = 0;
  std::uint64_t data_bus_cycles = 0;
  std::uint64_t refresh_cycles = 0;
};

class DramChannel {
 public:
  explicit DramChannel(const DramSpec& spec);

  // Earliest cycle >= `at` at which `cmd` to `a`'s bank satisfies every constraint (row state
  // aside: a read to a closed bank is never legal, and is not asked).
  std::uint64_t earliest(DramCommand cmd, const DramAddress& a, std::uint64_t at) const {
    return earliest(cmd, bank_index(a), a.bank_group, at);
  }
  std::uint64_t earliest(DramCommand cmd, std::uint32_t bank, std::uint32_t group,
                         std::uint64_t at) const {
    return std::max(std::max(at, bank_floor(cmd, bank)),
                    std::max(group_floor(cmd, group), channel_floor(cmd)));
  }
  // earliest() by the scope of each constraint, for a scheduler that compares many candidates:
  // the channel part is common to all banks, the group part to a bank group's banks.
  std::uint64_t bank_floor(DramCommand cmd, std::uint32_t bank) const;
  std::uint64_t group_floor(DramCommand cmd, std::uint32_t group) const {
    return groups_[group].floors[static_cast<std::size_t>(cmd)];
  }
  std::uint64_t channel_floor(DramCommand cmd) const {
    return channel_floors_[static_cast<std::size_t>(cmd)];
  }
  bool ready(DramCommand cmd, const DramAddress& a, std::uint64_t at) const {
    return earliest(cmd, a, at) == at;
  }
  // Issues `cmd` at `at`, which must be ready. Returns, for RD/WR, when the burst's data has
  // crossed the bus; otherwise `at`.
  std::uint64_t issue(DramCommand cmd, const DramAddress& a, std::uint64_t at);
  // issue() by bank index (bank_index()) and group, one function per kind: the controller's path.
  inline std::uint64_t issue_column(std::uint32_t bank, std::uint32_t group, bool write,
                                    std::uint64_t at);
  void issue_activate(std::uint32_t bank, std::uint32_t group, std::uint32_t row, std::uint64_t at);
  void issue_precharge(std::uint32_t bank, std::uint64_t at);
  // Refreshes all banks at `at` (closing them); they are busy until at + tRFC.
  void refresh(std::uint64_t at);
  // Performs every refresh that fell due at or before `now`.
  void refresh_until(std::uint64_t now);
  // The latest cycle any command has been issued at: later requests are scheduled after it.
  std::uint64_t frontier() const { return frontier_; }
  std::uint64_t next_refresh() const { return next_refresh_; }

  // One burst request arriving at `arrival`: precharge / activate as its bank's row state needs,
  // then the column command; refreshes that fell due are done first. With `close_page`, the bank
  // is precharged right after the access. Returns when the data has crossed the bus.
  std::uint64_t access(const DramAddress& a, bool write, std::uint64_t arrival, bool close_page);

  bool row_open(const DramAddress& a) const { return bank(a).open_row >= 0; }
  std::int64_t open_row(const DramAddress& a) const { return bank(a).open_row; }
  // Banks by index over the channel: bank_group x banks_per_group + bank.
  std::uint32_t bank_index(const DramAddress& a) const {
    return a.bank_group * banks_per_group_ + a.bank;
  }
  std::int64_t open_row(std::uint32_t bank) const { return banks_[bank].open_row; }
  const DramChannelStats& stats() const { return stats_; }
  const DramCycles& timing() const { return t_; }

 private:
  struct Bank {
    std::int64_t open_row = -1;
    std::uint64_t next_act = 0;  // tRP after PRE, tRC after ACT, tRFC after REF
    std::uint64_t next_col = 0;  // tRCD after ACT
    std::uint64_t next_pre = 0;  // tRAS after ACT, tRTP after RD, tWR after write data
  };
  const Bank& bank(const DramAddress& a) const { return banks_[bank_index(a)]; }
  Bank& bank(const DramAddress& a) { return banks_[bank_index(a)]; }
  std::uint64_t bus_floor(std::uint64_t latency) const {
    return bus_free_ > latency ? bus_free_ - latency : 0;
  }
  DramCycles t_;
  std::uint32_t banks_per_group_;
  std::vector<Bank> banks_;
  // Each constraint kept as the cycle it ends (0: never constrained yet): per bank group,
  // tCCD_L after its last column command and tWTR_L after its last write data; per channel,
  // tRRD_S after the last ACT, tCCD_S after the last column command, tWTR_S after the last
  // write data, tRTW after the last read, and when the data bus frees.
  // The floors of group_floor() and channel_floor(), by DramCommand, updated as commands issue:
  // a scheduler reads them for every candidate.
  using Floors = std::array<std::uint64_t, 4>;
  struct Group {
    Floors floors{};
    std::uint64_t ccd_l_end = 0, wtr_l_end = 0;
  };
  std::vector<Group> groups_;
  std::uint64_t rrd_s_end_ = 0, ccd_s_end_ = 0, wtr_s_end_ = 0, rtw_end_ = 0;
  std::array<std::uint64_t, 4> recent_acts_{};  // the last four ACTs + 1, oldest first (tFAW)
  std::uint64_t bus_free_ = 0;
  Floors channel_floors_{};
  std::uint64_t next_refresh_;
  std::uint64_t frontier_ = 0;
  DramChannelStats stats_;
};

inline std::uint64_t DramChannel::bank_floor(DramCommand cmd, std::uint32_t bank) const {
  const Bank& b = banks_[bank];
  switch (cmd) {
    case DramCommand::kActivate:
      return b.next_act;
    case DramCommand::kPrecharge:
      return b.next_pre;
    case DramCommand::kRead:
    case DramCommand::kWrite:
      return b.next_col;
  }
  return 0;
}

std::uint64_t DramChannel::issue_column(std::uint32_t bank, std::uint32_t group, bool write,
                                        std::uint64_t at) {
  constexpr auto kRd = static_cast<std::size_t>(DramCommand::kRead);
  constexpr auto kWr = static_cast<std::size_t>(DramCommand::kWrite);
  Bank& b = banks_[bank];
  Group& g = groups_[group];
  assert(b.open_row >= 0);
  assert(at >= std::max(std::max(b.next_col, channel_floors_[write ? kWr : kRd]),
                        g.floors[write ? kWr : kRd]));
  frontier_ = std::max(frontier_, at);
  const std::uint64_t end = at + (write ? t_.WL : t_.CL) + t_.BURST;
  bus_free_ = end;
  if (write) {
    b.next_pre = std::max(b.next_pre, end + t_.WR);
    g.wtr_l_end = end + t_.WTR_L;
    wtr_s_end_ = end + t_.WTR_S;
    ++stats_.writes;
  } else {
    b.next_pre = std::max(b.next_pre, at + t_.RTP);
    rtw_end_ = at + t_.RTW;
    ++stats_.reads;
  }
  g.ccd_l_end = at + t_.CCD_L;
  ccd_s_end_ = at + t_.CCD_S;
  g.floors[kRd] = std::max(g.ccd_l_end, g.wtr_l_end);
  g.floors[kWr] = g.ccd_l_end;
  // The data of a column command must not overlap the last burst on the bus.
  channel_floors_[kRd] = std::max(std::max(ccd_s_end_, wtr_s_end_), bus_floor(t_.CL));
  channel_floors_[kWr] = std::max(std::max(ccd_s_end_, rtw_end_), bus_floor(t_.WL));
  stats_.data_bus_cycles += t_.BURST;
  return end;
}

}  // namespace tpusim::models
