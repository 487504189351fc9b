#include "sim/run/simulate.h"

#include <sys/resource.h>

#include <filesystem>
#include <fstream>
#include <iostream>

#include <spdlog/spdlog.h>
#include <systemc>

#include "models/chip/chip.h"
#include "sim/base/errors.h"
#include "sim/report/writers.h"

namespace tpusim::sim {

namespace {

std::uint64_t peak_rss_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;  // Linux reports KiB
}

}  // namespace

void prepare_output_dir(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (!fs::is_directory(dir, ec)) throw InputError(dir + ": cannot create output directory");
  const fs::path probe = fs::path(dir) / ".tpusim-write-test";
  if (!std::ofstream(probe).good()) throw InputError(dir + ": output directory is not writable");
  fs::remove(probe, ec);
}

int simulate(const SimulateRequest& request) {
  const config::ChipConfig& chip = request.chip;
  // Femtosecond resolution keeps a non-integer clock period (952.38 ps at 1.05 GHz) exact to
  // 1e-6 relative; it must be set before the first sc_time exists.
  sc_core::sc_set_time_resolution(1, sc_core::SC_FS);
  models::TraceRecorder trace(!request.out_dir.empty());
  const models::SimContext ctx{chip.spec, request.program, trace,
                               sc_core::sc_time(1.0 / chip.spec.clock.value(), sc_core::SC_SEC),
                               request.functional};
  models::Chip model("chip", ctx);
  if (request.functional && request.before) request.before(model.memory().store());
  const models::RunResult result = model.run();
  if (!result.deadlock.empty()) {
    std::cerr << "simulation error: " << result.deadlock << "\n";
    return kExitSimError;
  }
  if (request.functional && request.after) request.after(model.memory().store());

  Report report = derive_report(chip.spec, request.program,
                                collect_stats(model.stats_sources(), request.program.ops.size()),
                                trace.op_spans(), result.cycles, ctx.ps(result.end));
  report.config = chip.resolved;
  if (!request.workload.empty()) report.workload = request.workload;
  report.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - request.wall_start).count();
  report.peak_rss_bytes = peak_rss_bytes();
  if (!request.out_dir.empty()) write_outputs(request.out_dir, report, trace, request.program);
  std::cout << terminal_summary(report);
  spdlog::debug("simulated {} cycles in {:.3f} s wall", result.cycles, report.wall_seconds);
  return kExitOk;
}

}  // namespace tpusim::sim
