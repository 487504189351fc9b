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
      queue_(std::size_t{spec.bank_groups} * spec.banks_per_group),
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
  while (queued_ < queue_depth_ && next_admit_ < base_ + bursts_.size()) {
    Slot& s = slot(next_admit_);
    // left_at_[enter_slot_] holds when the burst queue_depth places ahead left the queue.
    s.entry = s.request.arrival;
    if (entered_ >= queue_depth_) s.entry = std::max(s.entry, left_at_[enter_slot_]);
    if (++enter_slot_ == queue_depth_) enter_slot_ = 0;
    ++entered_;
    const std::uint32_t bank = bank_index(s.request.address);
    if (queue_[bank].empty()) busy_banks_.push_back(bank);
    queue_[bank].push_back(Queued{next_admit_++, s.entry, s.request.address, s.request.write});
    ++queued_;
  }
}

bool DramController::others_hit(const DramAddress& a, std::uint64_t entered_by) const {
  const std::int64_t row = channel_.open_row(a);
  for (const Queued& q : queue_[bank_index(a)])
    if (q.entry <= entered_by && static_cast<std::int64_t>(q.address.row) == row) return true;
  return false;
}

const DramController::Queued* DramController::queued(BurstId id) const {
  if (id >= next_admit_ || slot(id).done) return nullptr;
  for (const Queued& q : queue_[bank_index(slot(id).request.address)])
    if (q.id == id) return &q;
  return nullptr;
}

DramCommand DramController::next_command(const Queued& q) const {
  const std::int64_t open = channel_.open_row(q.address);
  if (open == static_cast<std::int64_t>(q.address.row))
    return q.write ? DramCommand::kWrite : DramCommand::kRead;
  return open < 0 ? DramCommand::kActivate : DramCommand::kPrecharge;
}

void DramController::advance(std::uint64_t until) {
  // Nothing new since the last call stopped at next_decision_: nothing more to decide yet.
  if (!changed_ && until <= next_decision_) return;
  changed_ = false;
  for (;;) {
    admit();
    // The command that can issue first; at equal cycles a column command (a row hit) beats a
    // row command, then the older burst (smaller id). Within a bank a command's earliest cycle
    // depends on the bank's state only, so a burst's is max(that, its entry): each bank's list,
    // oldest first, stops at the first burst that reaches the bank's minimum.
    std::uint32_t best_bank = 0;
    std::size_t best_pos = 0;
    BurstId best_id = 0;
    DramCommand best_cmd = DramCommand::kActivate;
    std::uint64_t best_at = kNoCycle;
    const auto consider = [&](std::uint32_t bank, std::size_t pos, const Queued& q, DramCommand cmd,
                              std::uint64_t at) {
      const bool column = is_column(cmd), best_column = is_column(best_cmd);
      if (at < best_at || (at == best_at && column && !best_column) ||
          (at == best_at && column == best_column && q.id < best_id)) {
        best_bank = bank;
        best_pos = pos;
        best_id = q.id;
        best_cmd = cmd;
        best_at = at;
      }
    };
    if (fcfs_) {
      // Only the oldest queued burst may issue.
      std::uint32_t bank = 0;
      BurstId oldest = kNoCycle;
      for (std::uint32_t b : busy_banks_)
        if (queue_[b].front().id < oldest) {
          oldest = queue_[b].front().id;
          bank = b;
        }
      if (oldest != kNoCycle) {
        const Queued& q = queue_[bank].front();
        const DramCommand cmd = next_command(q);
        consider(bank, 0, q, cmd, channel_.earliest(cmd, q.address, q.entry));
      }
    }
    for (std::size_t b = 0; !fcfs_ && b < busy_banks_.size(); ++b) {
      const std::uint32_t bank = busy_banks_[b];
      const std::vector<Queued>& list = queue_[bank];
      const DramAddress& any = list.front().address;
      const std::int64_t open = channel_.open_row(any);
      std::uint64_t e_read = kNoCycle, e_write = kNoCycle;
      std::uint64_t first_hit_entry = kNoCycle;
      bool has_non_hit = false;
      for (std::size_t pos = 0; pos < list.size(); ++pos) {
        const Queued& q = list[pos];
        if (static_cast<std::int64_t>(q.address.row) != open) {
          has_non_hit = true;
          continue;
        }
        const DramCommand cmd = q.write ? DramCommand::kWrite : DramCommand::kRead;
        std::uint64_t& e = q.write ? e_write : e_read;
        if (e == kNoCycle) e = channel_.earliest(cmd, any, 0);
        first_hit_entry = std::min(first_hit_entry, q.entry);
        consider(bank, pos, q, cmd, std::max(e, q.entry));
      }
      if (!has_non_hit) continue;
      const DramCommand row_cmd = open < 0 ? DramCommand::kActivate : DramCommand::kPrecharge;
      const std::uint64_t e_row = channel_.earliest(row_cmd, any, 0);
      for (std::size_t pos = 0; pos < list.size(); ++pos) {
        const Queued& q = list[pos];
        if (static_cast<std::int64_t>(q.address.row) == open) continue;
        const std::uint64_t at = std::max(e_row, q.entry);
        // Row hits first: the open row stays open while a queued burst that the controller
        // could have seen by the precharge's cycle still hits it.
        if (row_cmd == DramCommand::kPrecharge && first_hit_entry <= at) continue;
        consider(bank, pos, q, row_cmd, at);
        if (q.entry <= e_row) break;
      }
    }
    next_decision_ = best_at;
    if (best_at >= until) return;
    // Refreshes that fall due first go first (they close rows: choose again).
    if (channel_.next_refresh() <= best_at) {
      channel_.refresh_until(best_at);
      continue;
    }
    Slot& s = slot(best_id);
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
    std::vector<Queued>& list = queue_[best_bank];
    list.erase(list.begin() + static_cast<std::ptrdiff_t>(best_pos));
    --queued_;
    if (list.empty())
      busy_banks_.erase(std::find(busy_banks_.begin(), busy_banks_.end(), best_bank));
    // Close-page precharges at once unless a queued burst still hits the row (DRAMsim3's
    // close-page rule), so a burst train within one row is not split by needless ACTs.
    if (close_page_ && !others_hit(req.address, best_at))
      channel_.issue(DramCommand::kPrecharge, req.address,
                     channel_.earliest(DramCommand::kPrecharge, req.address, best_at));
  }
}

std::uint64_t DramController::not_before(BurstId id) const {
  const Slot& s = slot(id);
  if (s.done) return s.request.done;
  const Queued* q = queued(id);
  if (!q) {
    // Still outside the queue: every burst ahead of it in line must first leave the queue, one
    // column command each, at least column_interval_ apart.
    if (next_decision_ == kNoCycle) return kNoCycle;  // nothing decided since it was enqueued
    return next_decision_ + (id - next_admit_ + 1) * column_interval_;
  }
  const DramCommand cmd = next_command(*q);
  return std::max(next_decision_, channel_.earliest(cmd, q->address, q->entry));
}

std::uint64_t DramController::schedule(std::vector<DramRequest>& batch) {
  std::vector<BurstId> ids;
  ids.reserve(batch.size());
  for (const DramRequest& r : batch) ids.push_back(enqueue(r.address, r.write, r.arrival));
  std::uint64_t last = 0;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    while (!done(ids[i])) {
      const std::uint64_t cycle = not_before(ids[i]);
      advance(cycle == kNoCycle ? cycle : cycle + 1);
    }
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
