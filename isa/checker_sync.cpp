#include "isa/checker_sync.h"

#include <algorithm>
#include <deque>
#include <map>
#include <vector>

namespace tpusim::isa {
namespace {

// One core in the abstract run: its instructions in order, the sequencer's dispatch point,
// one queue per unit (dma engines, then MXUs, then the VPU) and its semaphore values.
struct CoreRun {
  std::vector<std::size_t> instrs;
  std::size_t next = 0;
  std::vector<std::deque<std::size_t>> queues;
  std::vector<std::uint64_t> sems;
  std::vector<std::uint32_t> completed_waits;  // per semaphore
  bool arrived = false;  // at a barrier, with every queue drained
  bool participates() const { return !instrs.empty(); }
  bool done() const {
    if (next < instrs.size()) return false;
    for (auto& q : queues)
      if (!q.empty()) return false;
    return true;
  }
  bool drained() const {
    for (auto& q : queues)
      if (!q.empty()) return false;
    return true;
  }
};

class SyncChecker {
 public:
  SyncChecker(const Program& p, const ChipSpec& c) : p_(p), c_(c), turn_(wait_turns(p)) {
    cores_.resize(c.cores);
    for (auto& core : cores_) {
      core.queues.resize(std::size_t{c.core.dma.engines} + c.core.mxu.count + 1);
      core.sems.assign(c.core.sequencer.semaphores, 0);
      core.completed_waits.assign(c.core.sequencer.semaphores, 0);
    }
    for (std::size_t i = 0; i < p.instructions.size(); ++i)
      cores_[p.instructions[i].core].instrs.push_back(i);
  }

  void run() {
    check_barrier_counts();
    check_semaphore_totals();
    abstract_run();
  }

 private:
  [[noreturn]] void fail(std::size_t i, const std::string& why) const {
    throw instruction_error(p_, i, why);
  }

  void check_barrier_counts() const {
    std::vector<std::vector<std::size_t>> barriers(cores_.size());
    std::size_t fewest = SIZE_MAX;
    std::size_t fewest_core = 0;
    for (std::size_t c = 0; c < cores_.size(); ++c) {
      if (!cores_[c].participates()) continue;
      for (std::size_t i : cores_[c].instrs)
        if (std::holds_alternative<Barrier>(p_.instructions[i].body)) barriers[c].push_back(i);
      if (barriers[c].size() < fewest) {
        fewest = barriers[c].size();
        fewest_core = c;
      }
    }
    for (std::size_t c = 0; c < cores_.size(); ++c) {
      if (cores_[c].participates() && barriers[c].size() > fewest)
        fail(barriers[c][fewest], "core " + std::to_string(c) + " runs " +
                                      std::to_string(barriers[c].size()) + " barriers but core " +
                                      std::to_string(fewest_core) + " runs only " +
                                      std::to_string(fewest) + ": this barrier would wait forever");
    }
  }

  void check_semaphore_totals() const {
    std::map<std::pair<std::uint16_t, std::uint16_t>, std::uint64_t> signals, waited;
    for (const Instruction& inst : p_.instructions)
      if (auto* s = std::get_if<SemSignal>(&inst.body)) ++signals[{inst.core, s->sem}];
    for (std::size_t i = 0; i < p_.instructions.size(); ++i) {
      const Instruction& inst = p_.instructions[i];
      auto* w = std::get_if<SemWait>(&inst.body);
      if (!w) continue;
      std::uint64_t& total = waited[{inst.core, w->sem}];
      total += w->count;
      std::uint64_t have = signals[{inst.core, w->sem}];
      if (total > have) {
        fail(i, "can never be satisfied: waits on core " + std::to_string(inst.core) + " s" +
                    std::to_string(w->sem) + " take " + std::to_string(total) +
                    " by here, but the program signals it only " + std::to_string(have) + " times");
      }
    }
  }

  std::deque<std::size_t>& queue_of(CoreRun& core, const Unit& u) const {
    switch (u.kind) {
      case UnitKind::kDma:
        return core.queues[u.index];
      case UnitKind::kMxu:
        return core.queues[c_.core.dma.engines + std::size_t{u.index}];
      default:
        return core.queues.back();
    }
  }

  bool can_step(const CoreRun& core, std::size_t i) const {
    const auto* w = std::get_if<SemWait>(&p_.instructions[i].body);
    return !w || (core.sems[w->sem] >= w->count && core.completed_waits[w->sem] == turn_[i]);
  }

  // Executes instruction i on its unit, instantly; false when it is a wait that must block.
  bool step(CoreRun& core, std::size_t i) const {
    const InstrBody& b = p_.instructions[i].body;
    if (auto* w = std::get_if<SemWait>(&b)) {
      if (!can_step(core, i)) return false;
      core.sems[w->sem] -= w->count;
      ++core.completed_waits[w->sem];
    } else if (auto* s = std::get_if<SemSignal>(&b)) {
      ++core.sems[s->sem];
    }
    return true;
  }

  // Returns true when it dispatched or executed anything.
  bool advance(CoreRun& core) const {
    bool progress = false;
    // Queue heads run earliest in program order first (waits on one semaphore would take their
    // counts in program order whatever the order here: can_step()).
    for (;;) {
      std::deque<std::size_t>* next = nullptr;
      for (auto& q : core.queues)
        if (!q.empty() && can_step(core, q.front()) && (!next || q.front() < next->front()))
          next = &q;
      if (!next) break;
      step(core, next->front());
      next->pop_front();
      progress = true;
    }
    std::size_t depth = std::max<std::size_t>(1, c_.core.sequencer.queue_depth);
    while (core.next < core.instrs.size() && !core.arrived) {
      std::size_t i = core.instrs[core.next];
      const Instruction& inst = p_.instructions[i];
      Unit u = inst.unit();
      if (std::holds_alternative<Barrier>(inst.body)) {
        // A barrier completes the core's earlier work before it arrives.
        if (core.drained()) {
          core.arrived = true;
          progress = true;
        }
        break;
      }
      if (u.kind == UnitKind::kSeq) {
        if (!step(core, i)) break;
      } else {
        auto& q = queue_of(core, u);
        if (q.size() >= depth) break;
        q.push_back(i);
      }
      ++core.next;
      progress = true;
    }
    return progress;
  }

  bool release_barrier() {
    bool any = false;
    for (auto& core : cores_) {
      if (!core.participates()) continue;
      if (!core.arrived) return false;
      any = true;
    }
    if (!any) return false;
    for (auto& core : cores_) {
      if (!core.participates()) continue;
      core.arrived = false;
      ++core.next;
    }
    return true;
  }

  void abstract_run() {
    bool progress = true;
    while (progress) {
      progress = false;
      for (auto& core : cores_) progress |= advance(core);
      progress |= release_barrier();
    }
    report_deadlock();
  }

  void report_deadlock() const {
    // The stuck wait earliest in program order, on any core; a barrier only when no wait is
    // stuck (a barrier waits for the cores held by waits, which are the cause).
    std::size_t blocked = SIZE_MAX, barrier = SIZE_MAX;
    std::size_t core_no = 0, barrier_core = 0;
    for (std::size_t c = 0; c < cores_.size(); ++c) {
      const CoreRun& core = cores_[c];
      if (core.done()) continue;
      auto consider = [&](std::size_t i, std::size_t& earliest, std::size_t& on_core) {
        if (i < earliest) {
          earliest = i;
          on_core = c;
        }
      };
      for (auto& q : core.queues)
        if (!q.empty()) consider(q.front(), blocked, core_no);
      if (core.next < core.instrs.size()) {
        std::size_t i = core.instrs[core.next];
        if (std::holds_alternative<SemWait>(p_.instructions[i].body))
          consider(i, blocked, core_no);
        if (std::holds_alternative<Barrier>(p_.instructions[i].body))
          consider(i, barrier, barrier_core);
      }
    }
    if (blocked == SIZE_MAX) {
      blocked = barrier;
      core_no = barrier_core;
    }
    if (blocked == SIZE_MAX) return;
    const CoreRun& core = cores_[core_no];
    std::string why;
    if (auto* w = std::get_if<SemWait>(&p_.instructions[blocked].body)) {
      // Never a wait held only by its turn: the earlier wait on its semaphore would be stuck
      // too, and come first in program order.
      why = "deadlock: this wait never completes (core " + std::to_string(core_no) + " s" +
            std::to_string(w->sem) + " holds " + std::to_string(core.sems[w->sem]) + " of the " +
            std::to_string(w->count) + " it needs when every unit has stopped)";
    } else {
      why = "deadlock: this barrier never completes";
    }
    if (core.next < core.instrs.size()) {
      const Instruction& stuck = p_.instructions[core.instrs[core.next]];
      Unit u = stuck.unit();
      if (u.kind != UnitKind::kSeq) {
        why += "; the sequencer is stuck at " + instruction_place(p_, core.instrs[core.next]) +
               " because the " + unit_name(u) + " queue is full (core.sequencer.queue_depth is " +
               std::to_string(c_.core.sequencer.queue_depth) + ")";
      }
    }
    fail(blocked, why);
  }

  const Program& p_;
  const ChipSpec& c_;
  std::vector<CoreRun> cores_;
  const std::vector<std::uint32_t> turn_;  // wait_turns(p_)
};

}  // namespace

std::string instruction_place(const Program& p, std::size_t index) {
  std::uint32_t line = p.instructions.at(index).line;
  return line ? "line " + std::to_string(line) : "instruction #" + std::to_string(index);
}

void check_sync(const Program& p, const ChipSpec& chip) { SyncChecker(p, chip).run(); }

}  // namespace tpusim::isa
