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
      groups_(spec.bank_groups),
      next_refresh_(t_.REFI) {}

std::uint64_t DramChannel::issue(DramCommand cmd, const DramAddress& a, std::uint64_t at) {
  assert(ready(cmd, a, at));
  switch (cmd) {
    case DramCommand::kActivate:
      issue_activate(bank_index(a), a.bank_group, a.row, at);
      return at;
    case DramCommand::kPrecharge:
      issue_precharge(bank_index(a), at);
      return at;
    case DramCommand::kRead:
    case DramCommand::kWrite:
      assert(bank(a).open_row == a.row);
      return issue_column(bank_index(a), a.bank_group, cmd == DramCommand::kWrite, at);
  }
  return at;
}

void DramChannel::issue_activate(std::uint32_t bank, std::uint32_t group, std::uint32_t row,
                                 std::uint64_t at) {
  constexpr auto kAct = static_cast<std::size_t>(DramCommand::kActivate);
  Bank& b = banks_[bank];
  assert(b.open_row < 0);
  assert(at >= std::max(std::max(b.next_act, channel_floors_[kAct]), groups_[group].floors[kAct]));
  frontier_ = std::max(frontier_, at);
  b.open_row = row;
  b.next_col = at + t_.RCD;
  b.next_pre = std::max(b.next_pre, at + t_.RAS);
  b.next_act = std::max(b.next_act, at + t_.RC);
  groups_[group].floors[kAct] = at + t_.RRD_L;
  rrd_s_end_ = at + t_.RRD_S;
  // A fifth ACT waits tFAW after the fourth most recent (stored + 1 so 0 means none).
  recent_acts_ = {recent_acts_[1], recent_acts_[2], recent_acts_[3], at + 1};
  const std::uint64_t faw_end = recent_acts_[0] ? recent_acts_[0] - 1 + t_.FAW : 0;
  channel_floors_[kAct] = std::max(rrd_s_end_, faw_end);
  ++stats_.activates;
}

void DramChannel::issue_precharge(std::uint32_t bank, std::uint64_t at) {
  Bank& b = banks_[bank];
  assert(at >= b.next_pre);
  frontier_ = std::max(frontier_, at);
  b.open_row = -1;
  b.next_act = std::max(b.next_act, at + t_.RP);
  ++stats_.precharges;
}

void DramChannel::refresh(std::uint64_t at) {
  // Commands already issued are never pre-empted: the refresh goes after the last of them.
  // Precharge-all first: open banks close once their tRAS/tRTP/tWR allow, then tRP.
  std::uint64_t start = std::max(at, frontier_);
  bool any_open = false;
  std::uint64_t closed_ready = 0;  // every closed bank's tRP after its precharge (and tRC, tRFC)
  for (const Bank& b : banks_) {
    if (b.open_row < 0) {
      closed_ready = std::max(closed_ready, b.next_act);
      continue;
    }
    any_open = true;
    start = std::max(start, b.next_pre);
  }
  if (any_open) start += t_.RP;
  start = std::max(start, closed_ready);
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
