#include "models/hbm/dram_controller.h"

#include <algorithm>
#include <cassert>
#include <limits>

namespace tpusim::models {

DramController::DramController(const DramSpec& spec)
    : channel_(spec),
      queue_depth_(spec.queue_depth),
      fcfs_(spec.scheduler == DramScheduler::kFcfs),
      close_page_(spec.page_policy == PagePolicy::kClose),
      burst_bytes_(spec.burst_bytes().value()),
      left_at_(spec.queue_depth, 0) {}

bool DramController::others_hit(const std::vector<DramRequest>& batch, std::size_t except,
                                const DramAddress& a) const {
  const std::int64_t row = channel_.open_row(a);
  for (std::size_t j : window_) {
    const DramAddress& b = batch[j].address;
    if (j != except && b.bank_group == a.bank_group && b.bank == a.bank &&
        static_cast<std::int64_t>(b.row) == row)
      return true;
  }
  return false;
}

bool DramController::next_command(const std::vector<DramRequest>& batch, std::size_t r,
                                  DramCommand& cmd) const {
  const DramRequest& req = batch[r];
  const std::int64_t open = channel_.open_row(req.address);
  if (open == static_cast<std::int64_t>(req.address.row)) {
    cmd = req.write ? DramCommand::kWrite : DramCommand::kRead;
    return true;
  }
  if (open < 0) {
    cmd = DramCommand::kActivate;
    return true;
  }
  // Row hits first: the open row stays open while queued requests still hit it.
  if (!fcfs_ && others_hit(batch, r, req.address)) return false;
  cmd = DramCommand::kPrecharge;
  return true;
}

std::uint64_t DramController::schedule(std::vector<DramRequest>& batch) {
  const std::size_t n = batch.size();
  if (n == 0) return 0;
  std::uint64_t first_arrival = batch[0].arrival;
  for (const DramRequest& r : batch) first_arrival = std::min(first_arrival, r.arrival);
  channel_.refresh_until(std::max(channel_.frontier(), first_arrival));

  entry_.assign(n, 0);
  started_.assign(n, 0);
  window_.clear();
  std::size_t next = 0;
  const auto admit = [&] {
    while (window_.size() < queue_depth_ && next < n) {
      std::uint64_t entry = batch[next].arrival;
      // left_at_[enter_slot_] holds when the request queue_depth places ahead left.
      if (entered_ >= queue_depth_) entry = std::max(entry, left_at_[enter_slot_]);
      if (++enter_slot_ == queue_depth_) enter_slot_ = 0;
      ++entered_;
      entry_[next] = entry;
      window_.push_back(next++);
    }
  };
  admit();

  std::uint64_t last_done = 0;
  while (!window_.empty()) {
    // The command that can issue first; at equal times a column command (a row hit) beats a
    // row command, then the older request wins (window_ is in age order, comparisons strict).
    std::size_t best = window_.size();
    DramCommand best_cmd = DramCommand::kActivate;
    std::uint64_t best_at = std::numeric_limits<std::uint64_t>::max();
    bool best_column = false;
    const std::size_t candidates = fcfs_ ? 1 : window_.size();
    for (std::size_t k = 0; k < candidates; ++k) {
      const std::size_t r = window_[k];
      DramCommand cmd;
      if (!next_command(batch, r, cmd)) continue;
      const std::uint64_t at = channel_.earliest(cmd, batch[r].address, entry_[r]);
      const bool column = cmd == DramCommand::kRead || cmd == DramCommand::kWrite;
      if (at < best_at || (at == best_at && column && !best_column)) {
        best = k;
        best_cmd = cmd;
        best_at = at;
        best_column = column;
      }
    }
    assert(best < window_.size());  // a request waiting for hits implies a hit can issue
    const std::size_t r = window_[best];
    DramRequest& req = batch[r];
    if (!started_[r]) {
      started_[r] = 1;
      req.outcome = best_column                          ? RowOutcome::kHit
                    : best_cmd == DramCommand::kActivate ? RowOutcome::kMiss
                                                         : RowOutcome::kConflict;
      ++(req.outcome == RowOutcome::kHit    ? stats_.row_hits
         : req.outcome == RowOutcome::kMiss ? stats_.row_misses
                                            : stats_.row_conflicts);
    }
    const std::uint64_t end = channel_.issue(best_cmd, req.address, best_at);
    if (!best_column) continue;

    req.done = end;
    last_done = std::max(last_done, end);
    ++(req.write ? stats_.writes : stats_.reads);
    (req.write ? stats_.write_bytes : stats_.read_bytes) += burst_bytes_;
    stats_.latency_cycles += end - req.arrival;
    stats_.latency.add(end - req.arrival);
    stats_.last_done_cycle = std::max(stats_.last_done_cycle, end);
    left_at_[leave_slot_] = best_at;
    if (++leave_slot_ == queue_depth_) leave_slot_ = 0;
    window_.erase(window_.begin() + static_cast<std::ptrdiff_t>(best));
    // Close-page precharges at once unless a queued request still hits the row (DRAMsim3's
    // close-page rule), so a burst sequence within one row is not split by needless ACTs.
    if (close_page_ && !others_hit(batch, n, req.address))
      channel_.issue(DramCommand::kPrecharge, req.address,
                     channel_.earliest(DramCommand::kPrecharge, req.address, best_at));
    admit();
  }
  return last_done;
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
