#pragma once
// What every module of one simulated chip shares: the validated spec, the program, the trace,
// and the core clock. Owned by the Chip; modules hold a const reference (no globals).

#include <cstdint>
#include <exception>
#include <string>

#include <systemc>

#include "isa/program.h"
#include "models/common/booking_horizon.h"
#include "models/common/trace.h"
#include "sim/base/spec/chip_spec.h"

namespace tpusim::models {

class ArrayObserver;  // models/mxu/mxu_cycle.h

struct SimContext {
  const ChipSpec& spec;
  const isa::Program& program;
  TraceRecorder& trace;
  sc_core::sc_time core_period;  // one core clock cycle
  bool functional = false;       // real bytes move (--functional)
  // Receives every cycle of one MXU when it is cycle-level (--vcd, --show): observed_mxu of
  // core observed_core.
  ArrayObserver* mxu_observer = nullptr;
  // Where a unit's thread leaves an error it cannot continue from (not implemented, bad input
  // found while running) before stopping the simulation: SystemC would turn an exception that
  // leaves a thread into its own report, losing the error's kind and exit code. Chip::run()
  // rethrows it.
  std::exception_ptr* failure = nullptr;
  // How far back shared resources keep their reservations (late bookings with model hbm).
  BookingHorizon* horizon = nullptr;
  std::uint32_t observed_core = 0, observed_mxu = 0;  // which MXU mxu_observer watches
  // Where the memory records its timeline channels' calls (models/hbm/dram_recording.h); empty:
  // nowhere.
  std::string dram_recording;
  // In SystemC time units (sc_time::value()).
  std::uint64_t booking_horizon() const {
    const std::uint64_t present = sc_core::sc_time_stamp().value();
    return horizon ? horizon->earliest(present) : present;
  }

  sc_core::sc_time cycles(std::uint64_t n) const { return core_period * static_cast<double>(n); }
  // Whole cycles elapsed at `t`, rounded to the nearest (times are built from whole cycles).
  std::uint64_t cycle_of(const sc_core::sc_time& t) const {
    return static_cast<std::uint64_t>(t / core_period + 0.5);
  }
  // Cycles needed to cover `t`, rounding a partial cycle up.
  std::uint64_t cycles_covering(const sc_core::sc_time& t) const {
    const double c = t / core_period;
    const auto whole = static_cast<std::uint64_t>(c);
    return c - static_cast<double>(whole) > 1e-6 ? whole + 1 : whole;
  }
  std::uint64_t ps(const sc_core::sc_time& t) const {
    return static_cast<std::uint64_t>(t.to_seconds() * 1e12 + 0.5);
  }
};

}  // namespace tpusim::models
