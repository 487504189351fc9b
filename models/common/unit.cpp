#include "models/common/unit.h"

#include <algorithm>
#include <variant>

#include "sim/base/errors.h"

namespace tpusim::models {

Unit::Unit(sc_core::sc_module_name name, const SimContext& ctx, Semaphores& semaphores,
           std::uint32_t queue_depth)
    : sc_core::sc_module(name),
      ctx_(ctx),
      semaphores_(semaphores),
      queue_("queue", static_cast<int>(queue_depth)),
      depth_(queue_depth),
      track_(ctx.trace.add_track(this->name())) {
  SC_HAS_PROCESS(Unit);
  SC_THREAD(run);
  SC_THREAD(settle_signals);
}

void Unit::push(std::uint32_t instruction) {
  // The instruction being executed keeps its entry until the unit takes the next (the checker's
  // abstract run counts it so), so at most queue_depth are in flight, not queue_depth + 1.
  while (in_flight_ >= depth_) sc_core::wait(taken_);
  ++in_flight_;
  queue_.write(instruction);
}

bool Unit::drained() const {
  return in_flight_ == 0 && !unsettled() && last_completion_ <= sc_core::sc_time_stamp();
}

void Unit::wait_drained() {
  while (in_flight_ > 0 || unsettled()) {
    settle_wanted_ = true;
    settle_request_.notify(sc_core::SC_ZERO_TIME);
    sc_core::wait(taken_);
  }
  settle_wanted_ = false;  // else a later idle moment would settle when nobody waits
  if (last_completion_ > sc_core::sc_time_stamp())
    sc_core::wait(last_completion_ - sc_core::sc_time_stamp());
}

void Unit::fire(std::uint32_t sem, bool reads, const sc_core::sc_time& floor) {
  semaphores_.signal_at(sem, std::max(reads ? last_read_ : last_completion_, floor));
}

void Unit::closed_through(std::uint64_t mark) {
  // last_completion_ and last_read_ cover the work before `mark` now: exactly, when the unit
  // reports each piece of work as it closes it in order; otherwise they may cover more, which
  // only makes the signal later, never early.
  while (!deferred_.empty() && deferred_.front().mark <= mark) {
    fire(deferred_.front().sem, deferred_.front().reads, deferred_.front().floor);
    deferred_.pop_front();
  }
}

void Unit::settle_signals() {
  for (;;) {
    while (deferred_.empty()) sc_core::wait(deferred_added_);
    const std::uint64_t mark = deferred_.front().mark;
    try {
      settle_through(mark);
    } catch (const Error&) {
      if (!ctx_.failure) throw;
      stop_for_error();
      return;
    }
    // A unit that does not report closed_through() has completed everything by now.
    closed_through(mark);
  }
}

void Unit::stop_for_error() {
  if (!*ctx_.failure) *ctx_.failure = std::current_exception();
  // Stopped for the error, not by a user: no "Simulation stopped by user" line.
  sc_core::sc_report_handler::set_actions("/OSCI/SystemC", sc_core::SC_INFO,
                                          sc_core::SC_DO_NOTHING);
  sc_core::sc_stop();
}

void Unit::trace(std::uint32_t index, std::uint32_t op, const sc_core::sc_time& start,
                 const sc_core::sc_time& end) {
  ctx_.trace.record(track_, index, op, ctx_.ps(start), ctx_.ps(end));
}

void Unit::run() {
  for (;;) {
    while (queue_.num_available() == 0) {
      // Every request is answered, also when the signal thread has settled everything since
      // it was made: wait_drained() waits for this notification.
      if (settle_wanted_) {
        try {
          if (unsettled()) settle();
        } catch (const Error&) {
          if (!ctx_.failure) throw;
          stop_for_error();
          return;
        }
        settle_wanted_ = false;
        taken_.notify(sc_core::SC_ZERO_TIME);
        continue;
      }
      sc_core::wait(queue_.data_written_event() | settle_request_);
    }
    const std::uint32_t index = queue_.read();
    const isa::Instruction& inst = ctx_.program.instructions[index];
    if (const auto* signal = std::get_if<isa::SemSignal>(&inst.body)) {
      // Fires when all earlier work of this unit has completed (or, for `reads`, has read its
      // sources); the unit itself moves on, also while that work's completion is not yet known.
      if (unsettled()) {
        deferred_.push_back({signal->sem, signal->reads, sc_core::sc_time_stamp(), settle_mark()});
        deferred_added_.notify(sc_core::SC_ZERO_TIME);
      } else {
        fire(signal->sem, signal->reads, sc_core::sc_time_stamp());
      }
    } else if (const auto* w = std::get_if<isa::SemWait>(&inst.body)) {
      semaphores_.wait(w->sem, w->count, index);
    } else {
      read_reported_ = false;
      try {
        execute(inst, index);
      } catch (const Error&) {
        if (!ctx_.failure) throw;
        stop_for_error();
        return;
      }
      if (!read_reported_ && last_completion_ > last_read_) last_read_ = last_completion_;
    }
    --in_flight_;
    taken_.notify(sc_core::SC_ZERO_TIME);
  }
}

}  // namespace tpusim::models
