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
      last_act_in_group_(spec.bank_groups, kNever),
      last_col_in_group_(spec.bank_groups, kNever),
      last_write_end_in_group_(spec.bank_groups, kNever),
      next_refresh_(t_.REFI) {}

namespace {
// max(at, since + gap) with `since` possibly "never" (negative).
std::uint64_t after(std::uint64_t at, std::int64_t since, std::uint64_t gap) {
  const std::int64_t t = since + static_cast<std::int64_t>(gap);
  return t > static_cast<std::int64_t>(at) ? static_cast<std::uint64_t>(t) : at;
}
}  // namespace

std::uint64_t DramChannel::earliest(DramCommand cmd, const DramAddress& a, std::uint64_t at) const {
  const Bank& b = bank(a);
  std::uint64_t t = at;
  switch (cmd) {
    case DramCommand::kActivate:
      t = std::max(t, b.next_act);
      t = after(t, last_act_in_group_[a.bank_group], t_.RRD_L);
      t = after(t, last_act_, t_.RRD_S);
      t = after(t, recent_acts_[0], t_.FAW);  // the fourth most recent ACT
      return t;
    case DramCommand::kPrecharge:
      return std::max(t, b.next_pre);
    case DramCommand::kRead:
      t = std::max(t, b.next_col);
      t = after(t, last_col_in_group_[a.bank_group], t_.CCD_L);
      t = after(t, last_col_, t_.CCD_S);
      t = after(t, last_write_end_in_group_[a.bank_group], t_.WTR_L);
      t = after(t, last_write_end_, t_.WTR_S);
      if (bus_free_ > t + t_.CL) t = bus_free_ - t_.CL;  // data must not overlap the last burst
      return t;
    case DramCommand::kWrite:
      t = std::max(t, b.next_col);
      t = after(t, last_col_in_group_[a.bank_group], t_.CCD_L);
      t = after(t, last_col_, t_.CCD_S);
      t = after(t, last_read_, t_.RTW);
      if (bus_free_ > t + t_.WL) t = bus_free_ - t_.WL;
      return t;
  }
  return t;
}

std::uint64_t DramChannel::issue(DramCommand cmd, const DramAddress& a, std::uint64_t at) {
  assert(ready(cmd, a, at));
  Bank& b = bank(a);
  const auto now = static_cast<std::int64_t>(at);
  frontier_ = std::max(frontier_, at);
  switch (cmd) {
    case DramCommand::kActivate:
      assert(b.open_row < 0);
      b.open_row = a.row;
      b.next_col = at + t_.RCD;
      b.next_pre = std::max(b.next_pre, at + t_.RAS);
      b.next_act = std::max(b.next_act, at + t_.RC);
      last_act_in_group_[a.bank_group] = now;
      last_act_ = now;
      std::rotate(recent_acts_.begin(), recent_acts_.begin() + 1, recent_acts_.end());
      recent_acts_.back() = now;
      ++stats_.activates;
      return at;
    case DramCommand::kPrecharge:
      b.open_row = -1;
      b.next_act = std::max(b.next_act, at + t_.RP);
      ++stats_.precharges;
      return at;
    case DramCommand::kRead: {
      assert(b.open_row == a.row);
      const std::uint64_t end = at + t_.CL + t_.BURST;
      bus_free_ = end;
      b.next_pre = std::max(b.next_pre, at + t_.RTP);
      last_col_in_group_[a.bank_group] = now;
      last_col_ = now;
      last_read_ = now;
      ++stats_.reads;
      stats_.data_bus_cycles += t_.BURST;
      return end;
    }
    case DramCommand::kWrite: {
      assert(b.open_row == a.row);
      const std::uint64_t end = at + t_.WL + t_.BURST;
      bus_free_ = end;
      b.next_pre = std::max(b.next_pre, end + t_.WR);
      last_col_in_group_[a.bank_group] = now;
      last_col_ = now;
      last_write_end_in_group_[a.bank_group] = static_cast<std::int64_t>(end);
      last_write_end_ = static_cast<std::int64_t>(end);
      ++stats_.writes;
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
