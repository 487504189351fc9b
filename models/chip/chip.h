#pragma once
// The chip: `cores` cores sharing off-chip memory. Built from a validated spec and a checked
// program; run() simulates to completion and reports whether every core finished.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/chip/core.h"
#include "models/common/sim_context.h"
#include "models/memory/memory.h"

namespace tpusim::models {

struct RunResult {
  sc_core::sc_time end;  // when the last core finished
  std::uint64_t cycles = 0;
  std::string deadlock;  // empty when every core finished; else what was blocked
};

class Chip : public sc_core::sc_module {
 public:
  Chip(sc_core::sc_module_name name, const SimContext& ctx);

  // Simulates until every core has finished, or until nothing can happen any more (a
  // deadlock), which the result then describes. It does not throw: unwinding past a SystemC
  // kernel that still holds suspended threads is best avoided.
  RunResult run();

  std::vector<StatsSource> stats_sources() const;
  const Memory& memory() const { return *memory_; }
  Memory& memory() { return *memory_; }
  std::vector<std::unique_ptr<Core>>& cores() { return cores_; }

 private:
  std::string deadlock_report() const;

  const SimContext& ctx_;
  std::unique_ptr<CoreBarrier> barrier_;
  std::vector<std::uint32_t> wait_turns_;  // isa::wait_turns(), read by every core's semaphores
  std::unique_ptr<Memory> memory_;
  std::vector<std::unique_ptr<Core>> cores_;
};

}  // namespace tpusim::models
