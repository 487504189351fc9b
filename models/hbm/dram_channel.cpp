#include "models/hbm/dram_channel.h"

#include <algorithm>
#include <cassert>

namespace tpusim::models {

DramCycles resolve_timing(const DramSpec& spec) {
  const DramTiming& t = spec.timing;
  const auto c = [&](const Duration& d) { return d.cycles(spec.clock).value(); };
  DramCycles r{};
  r.RCD = c(t.tRCD);
  r.RP = c(t.tRP);
  r.RAS = c(t.tRAS);
  r.RC = c(t.tRC);
  r.CL = c(t.tCL);
  r.WL = c(t.tWL);
  r.CCD_S = c(t.tCCD_S);
  r.CCD_L = c(t.tCCD_L);
  r.RRD_S = c(t.tRRD_S);
  r.RRD_L = c(t.tRRD_L);
  r.FAW = c(t.tFAW);
  r.WR = c(t.tWR);
  r.WTR_S = c(t.tWTR_S);
  r.WTR_L = c(t.tWTR_L);
  r.RTP = c(t.tRTP);
  r.RFC = c(t.tRFC);
  r.REFI = c(t.tREFI);
  r.RTW = c(t.tRTW);
  r.BURST = (spec.burst_length + spec.transfers_per_clock - 1) / spec.transfers_per_clock;
  return r;
}

DramChannel::DramChannel(const DramSpec& spec)
    : t_(resolve_timing(spec)),
      banks_per_group_(spec.banks_per_group),
      banks_(std::size_t{spec.bank_groups} * spec.banks_per_group),
      ccd_l_end_(spec.bank_groups, 0),
      wtr_l_end_(spec.bank_groups, 0),
      group_floors_(spec.bank_groups, Floors{}),
      next_refresh_(t_.REFI) {}

std::uint64_t DramChannel::issue(DramCommand cmd, const DramAddress& a, std::uint64_t at) {
  assert(ready(cmd, a, at));
  Bank& b = bank(a);
  const std::uint32_t g = a.bank_group;
  constexpr auto kAct = static_cast<std::size_t>(DramCommand::kActivate);
  constexpr auto kRd = static_cast<std::size_t>(DramCommand::kRead);
  constexpr auto kWr = static_cast<std::size_t>(DramCommand::kWrite);
  frontier_ = std::max(frontier_, at);
  switch (cmd) {
    case DramCommand::kActivate: {
      assert(b.open_row < 0);
      b.open_row = a.row;
      b.next_col = at + t_.RCD;
      b.next_pre = std::max(b.next_pre, at + t_.RAS);
      b.next_act = std::max(b.next_act, at + t_.RC);
      group_floors_[g][kAct] = at + t_.RRD_L;
      rrd_s_end_ = at + t_.RRD_S;
      // A fifth ACT waits tFAW after the fourth most recent (stored + 1 so 0 means none).
      recent_acts_ = {recent_acts_[1], recent_acts_[2], recent_acts_[3], at + 1};
      const std::uint64_t faw_end = recent_acts_[0] ? recent_acts_[0] - 1 + t_.FAW : 0;
      channel_floors_[kAct] = std::max(rrd_s_end_, faw_end);
      ++stats_.activates;
      return at;
    }
    case DramCommand::kPrecharge:
      b.open_row = -1;
      b.next_act = std::max(b.next_act, at + t_.RP);
      ++stats_.precharges;
      return at;
    case DramCommand::kRead:
    case DramCommand::kWrite: {
      const bool write = cmd == DramCommand::kWrite;
      assert(b.open_row == a.row);
      const std::uint64_t end = at + (write ? t_.WL : t_.CL) + t_.BURST;
      bus_free_ = end;
      if (write) {
        b.next_pre = std::max(b.next_pre, end + t_.WR);
        wtr_l_end_[g] = end + t_.WTR_L;
        wtr_s_end_ = end + t_.WTR_S;
        ++stats_.writes;
      } else {
        b.next_pre = std::max(b.next_pre, at + t_.RTP);
        rtw_end_ = at + t_.RTW;
        ++stats_.reads;
      }
      ccd_l_end_[g] = at + t_.CCD_L;
      ccd_s_end_ = at + t_.CCD_S;
      group_floors_[g][kRd] = std::max(ccd_l_end_[g], wtr_l_end_[g]);
      group_floors_[g][kWr] = ccd_l_end_[g];
      // The data of a column command must not overlap the last burst on the bus.
      channel_floors_[kRd] = std::max({ccd_s_end_, wtr_s_end_, bus_floor(t_.CL)});
      channel_floors_[kWr] = std::max({ccd_s_end_, rtw_end_, bus_floor(t_.WL)});
      stats_.data_bus_cycles += t_.BURST;
      return end;
    }
  }
  return at;
}

void DramChannel::refresh(std::uint64_t at) {
  // Commands already issued are never pre-empted: the refresh goes after the last of them.
  // Precharge-all first: open banks close once their tRAS/tRTP/tWR allow, then tRP.
  std::uint64_t start = std::max(at, frontier_);
  bool any_open = false;
  for (const Bank& b : banks_) {
    if (b.open_row < 0) continue;
    any_open = true;
    start = std::max(start, b.next_pre);
  }
  if (any_open) start += t_.RP;
  for (Bank& b : banks_) {
    b.open_row = -1;
    b.next_act = std::max(b.next_act, start + t_.RFC);
  }
  ++stats_.refreshes;
  stats_.refresh_cycles += t_.RFC;
}

void DramChannel::refresh_until(std::uint64_t now) {
  while (next_refresh_ <= now) {
    refresh(next_refresh_);
    next_refresh_ += t_.REFI;
  }
}

std::uint64_t DramChannel::access(const DramAddress& a, bool write, std::uint64_t arrival,
                                  bool close_page) {
  refresh_until(arrival);
  Bank& b = bank(a);
  std::uint64_t t = arrival;
  if (b.open_row == static_cast<std::int64_t>(a.row)) {
    ++stats_.row_hits;
  } else {
    if (b.open_row >= 0) {
      ++stats_.row_conflicts;
      t = issue(DramCommand::kPrecharge, a, earliest(DramCommand::kPrecharge, a, t));
    } else {
      ++stats_.row_misses;
    }
    t = issue(DramCommand::kActivate, a, earliest(DramCommand::kActivate, a, t));
  }
  const DramCommand column = write ? DramCommand::kWrite : DramCommand::kRead;
  const std::uint64_t at = earliest(column, a, t);
  const std::uint64_t done = issue(column, a, at);
  if (close_page) issue(DramCommand::kPrecharge, a, earliest(DramCommand::kPrecharge, a, at));
  return done;
}

}  // namespace tpusim::models
