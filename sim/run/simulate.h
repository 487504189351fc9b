#pragma once
// The part of `tpusim exec` and `tpusim run` after a program exists: elaborate the chip,
// simulate, derive the report and write it.

#include <chrono>
#include <functional>
#include <string>

#include "isa/program.h"
#include "models/memory/memory.h"
#include "sim/config/chip_config.h"

namespace tpusim::sim {

struct SimulateRequest {
  SimulateRequest(const config::ChipConfig& c, isa::Program& p) : chip(c), program(p) {}
  const config::ChipConfig& chip;
  isa::Program& program;
  bool functional = false;
  std::string out_dir;   // empty: terminal summary only
  std::string workload;  // recorded in the report
  std::chrono::steady_clock::time_point wall_start = std::chrono::steady_clock::now();
  // Functional mode: fill off-chip memory before the run, read results after it.
  std::function<void(models::BackingStore&)> before;
  std::function<void(models::BackingStore&)> after;
};

// Returns the exit code (kExitSimError when the program deadlocks).
int simulate(const SimulateRequest& request);

// The output directory exists (or is created) and takes files, before the run spends any time.
void prepare_output_dir(const std::string& dir);

}  // namespace tpusim::sim
