#pragma once
// The part of `tpusim exec` and `tpusim run` after a program exists: elaborate the chip,
// simulate, derive the report and write it.

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "isa/program.h"
#include "models/memory/memory.h"
#include "sim/config/chip_config.h"
#include "workloads/graph.h"

namespace tpusim::sim {

// Watching the cycle-level MXU: a VCD waveform and the cycle-by-cycle array view.
struct WatchOptions {
  std::string vcd;                   // waveform file; empty: none
  bool show = false;                 // the array cycle by cycle
  std::string show_format = "text";  // text | html
  std::string show_out;              // file for the view; empty: stdout
  std::string mxu;                   // the watched MXU ("chip.core1.mxu0"); empty: core 0's first
};

struct SimulateRequest {
  SimulateRequest(const config::ChipConfig& c, isa::Program& p) : chip(c), program(p) {}
  const config::ChipConfig& chip;
  isa::Program& program;
  bool functional = false;
  std::string out_dir;   // empty: terminal summary only
  std::string workload;  // recorded in the report
  std::string title;     // of the --show page
  WatchOptions watch;
  std::chrono::steady_clock::time_point wall_start = std::chrono::steady_clock::now();
  // Functional mode: fill off-chip memory before the run, read results after it.
  std::function<void(models::BackingStore&)> before;
  std::function<void(models::BackingStore&)> after;
};

// Returns the exit code (kExitSimError when the program deadlocks).
int simulate(const SimulateRequest& request);

// Refuses up front a graph whose inputs and weights cannot be held: more bytes than the chip's
// memory.capacity (the lowering would say so, but only after they were generated), or, as the
// doubles functional mode keeps them in, more than this machine's memory.
void check_functional_data_fits(const workloads::Graph& graph, const ChipSpec& chip);

// An earlier run's reports in `dir` must not pass for this run's if this one fails, whatever it
// fails on (report.json marks a complete run): removed first thing.
void remove_earlier_reports(const std::string& dir);
// The same for other files a run writes (a waveform, an array page, dumps): regular files only,
// with their .partial temporaries; empty names are skipped.
void remove_earlier_outputs(const std::vector<std::string>& files);
// The output directory exists (or is created) and takes files, before the run spends any time.
void prepare_output_dir(const std::string& dir);
// The report files a run writes into `dir` (none when it is empty), for check_output_files().
std::vector<std::string> report_paths(const std::string& dir);

}  // namespace tpusim::sim
