#include "models/hbm/dram_controller.h"

#include <algorithm>
#include <cassert>
#include <limits>

namespace tpusim::models {

namespace {
constexpr std::uint64_t kNoCycle = std::numeric_limits<std::uint64_t>::max();
bool is_column(DramCommand c) { return c == DramCommand::kRead || c == DramCommand::kWrite; }
}  // namespace

DramController::DramController(const DramSpec& spec)
    : channel_(spec),
      queue_depth_(spec.queue_depth),
      fcfs_(spec.scheduler == DramScheduler::kFcfs),
      close_page_(spec.page_policy == PagePolicy::kClose),
      burst_bytes_(spec.burst_bytes().value()),
      column_interval_(std::max(channel_.timing().CCD_S, channel_.timing().BURST)),
      earliest_by_bank_(std::size_t{spec.bank_groups} * spec.banks_per_group * 4),
      hit_entry_by_bank_(std::size_t{spec.bank_groups} * spec.banks_per_group),
      banks_per_group_(spec.banks_per_group),
      left_at_(spec.queue_depth, 0) {}

DramController::BurstId DramController::enqueue(const DramAddress& address, bool write,
                                                std::uint64_t arrival) {
  Slot s;
  s.request.address = address;
  s.request.write = write;
  s.request.arrival = arrival;
  bursts_.push_back(s);
  changed_ = true;
  return base_ + bursts_.size() - 1;
}

void DramController::release(BurstId id) {
  slot(id).released = true;
  while (!bursts_.empty() && bursts_.front().released) {
    bursts_.pop_front();
    ++base_;
  }
}

void DramController::admit() {
  while (window_.size() < queue_depth_ && next_admit_ < base_ + bursts_.size()) {
    Slot& s = slot(next_admit_);
    // left_at_[enter_slot_] holds when the burst queue_depth places ahead left the queue.
    s.entry = s.request.arrival;
    if (entered_ >= queue_depth_) s.entry = std::max(s.entry, left_at_[enter_slot_]);
    if (++enter_slot_ == queue_depth_) enter_slot_ = 0;
    ++entered_;
    window_.push_back(
        Queued{next_admit_++, s.entry, s.request.address, bank_index(s.request.address), s.request.write});
  }
}

bool DramController::others_hit(BurstId except, const DramAddress& a,
                                std::uint64_t entered_by) const {
  const std::int64_t row = channel_.open_row(a);
  const std::uint32_t bank = bank_index(a);
  for (const Queued& q : window_)
    if (q.id != except && q.entry <= entered_by && q.bank == bank &&
        static_cast<std::int64_t>(q.address.row) == row)
      return true;
  return false;
}

bool DramController::next_command(BurstId id, DramCommand& cmd) const {
  const Slot& s = slot(id);
  const DramRequest& req = s.request;
  const std::int64_t open = channel_.open_row(req.address);
  if (open == static_cast<std::int64_t>(req.address.row)) {
    cmd = req.write ? DramCommand::kWrite : DramCommand::kRead;
    return true;
  }
  if (open < 0) {
    cmd = DramCommand::kActivate;
    return true;
  }
  cmd = DramCommand::kPrecharge;
  if (fcfs_) return true;
  // Row hits first: the open row stays open while a queued burst that the controller could
  // have seen by the precharge's cycle still hits it.
  const std::uint64_t at = channel_.earliest(cmd, req.address, s.entry);
  return !others_hit(id, req.address, at);
}

void DramController::advance(std::uint64_t until) {
  // Nothing new since the last call stopped at next_decision_: nothing more to decide yet.
  if (!changed_ && until <= next_decision_) return;
  changed_ = false;
  for (;;) {
    admit();
    std::fill(earliest_by_bank_.begin(), earliest_by_bank_.end(), kNoCycle);
    std::fill(hit_entry_by_bank_.begin(), hit_entry_by_bank_.end(), kNoCycle);
    if (!fcfs_) {
      for (const Queued& q : window_) {
        if (channel_.open_row(q.address) == static_cast<std::int64_t>(q.address.row)) {
          std::uint64_t& e = hit_entry_by_bank_[q.bank];
          e = std::min(e, q.entry);
        }
      }
    }
    // The command that can issue first; at equal cycles a column command (a row hit) beats a
    // row command, then the older burst wins (window_ is in age order, comparisons strict).
    std::size_t best = window_.size();
    DramCommand best_cmd = DramCommand::kActivate;
    std::uint64_t best_at = kNoCycle;
    const std::size_t candidates = fcfs_ ? std::min<std::size_t>(1, window_.size()) : window_.size();
    for (std::size_t k = 0; k < candidates; ++k) {
      const Queued& q = window_[k];
      const DramAddress& a = q.address;
      const std::uint32_t bank = q.bank;
      const std::int64_t open = channel_.open_row(a);
      const DramCommand cmd = open == static_cast<std::int64_t>(a.row)
                                  ? (q.write ? DramCommand::kWrite : DramCommand::kRead)
                                  : open < 0 ? DramCommand::kActivate
                                             : DramCommand::kPrecharge;
      // Constraints depend on the bank, not the row: earliest(cmd, a, t) = max(t, earliest(0)).
      std::uint64_t& cached = earliest_by_bank_[bank * 4 + static_cast<std::uint32_t>(cmd)];
      if (cached == kNoCycle) cached = channel_.earliest(cmd, a, 0);
      const std::uint64_t at = std::max(cached, q.entry);
      // Row hits first: the open row stays open while a queued burst that the controller could
      // have seen by the precharge's cycle still hits it.
      if (cmd == DramCommand::kPrecharge && hit_entry_by_bank_[bank] <= at) continue;
      if (at < best_at || (at == best_at && is_column(cmd) && !is_column(best_cmd))) {
        best = k;
        best_cmd = cmd;
        best_at = at;
      }
    }
    next_decision_ = best_at;
    if (best_at >= until) return;
    assert(best < window_.size());  // a burst waiting for hits implies a hit can issue
    // Refreshes that fall due first go first (they close rows: choose again).
    if (channel_.next_refresh() <= best_at) {
      channel_.refresh_until(best_at);
      continue;
    }
    const BurstId id = window_[best].id;
    Slot& s = slot(id);
    DramRequest& req = s.request;
    if (!s.started) {
      s.started = true;
      req.outcome = is_column(best_cmd)                  ? RowOutcome::kHit
                    : best_cmd == DramCommand::kActivate ? RowOutcome::kMiss
                                                         : RowOutcome::kConflict;
      ++(req.outcome == RowOutcome::kHit    ? stats_.row_hits
         : req.outcome == RowOutcome::kMiss ? stats_.row_misses
                                            : stats_.row_conflicts);
    }
    const std::uint64_t end = channel_.issue(best_cmd, req.address, best_at);
    if (!is_column(best_cmd)) continue;

    s.done = true;
    req.done = end;
    ++(req.write ? stats_.writes : stats_.reads);
    (req.write ? stats_.write_bytes : stats_.read_bytes) += burst_bytes_;
    stats_.latency_cycles += end - req.arrival;
    stats_.latency.add(end - req.arrival);
    stats_.last_done_cycle = std::max(stats_.last_done_cycle, end);
    left_at_[leave_slot_] = best_at;
    if (++leave_slot_ == queue_depth_) leave_slot_ = 0;
    window_.erase(window_.begin() + static_cast<std::ptrdiff_t>(best));
    // Close-page precharges at once unless a queued burst still hits the row (DRAMsim3's
    // close-page rule), so a burst train within one row is not split by needless ACTs.
    if (close_page_ && !others_hit(id, req.address, best_at))
      channel_.issue(DramCommand::kPrecharge, req.address,
                     channel_.earliest(DramCommand::kPrecharge, req.address, best_at));
  }
}

std::uint64_t DramController::not_before(BurstId id) const {
  const Slot& s = slot(id);
  if (s.done) return s.request.done;
  if (id >= next_admit_) {
    // Still outside the queue: every burst ahead of it in line must first leave the queue, one
    // column command each, at least column_interval_ apart.
    return next_decision_ + (id - next_admit_ + 1) * column_interval_;
  }
  DramCommand cmd;
  if (!next_command(id, cmd)) return next_decision_;
  return std::max(next_decision_, channel_.earliest(cmd, s.request.address, s.entry));
}

std::uint64_t DramController::schedule(std::vector<DramRequest>& batch) {
  std::vector<BurstId> ids;
  ids.reserve(batch.size());
  for (const DramRequest& r : batch) ids.push_back(enqueue(r.address, r.write, r.arrival));
  std::uint64_t last = 0;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    while (!done(ids[i])) advance(not_before(ids[i]) + 1);
    batch[i].done = burst(ids[i]).done;
    batch[i].outcome = burst(ids[i]).outcome;
    last = std::max(last, batch[i].done);
  }
  for (BurstId id : ids) release(id);
  return last;
}

DramControllerStats DramController::stats() const {
  DramControllerStats s = stats_;
  const DramChannelStats& c = channel_.stats();
  s.activates = c.activates;
  s.precharges = c.precharges;
  s.refreshes = c.refreshes;
  s.refresh_cycles = c.refresh_cycles;
  s.data_bus_cycles = c.data_bus_cycles;
  return s;
}

}  // namespace tpusim::models
