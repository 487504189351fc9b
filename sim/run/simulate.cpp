#include "sim/run/simulate.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include <spdlog/spdlog.h>
#include <systemc>

#include "models/chip/chip.h"
#include "models/mxu/array_vcd.h"
#include "sim/base/errors.h"
#include "sim/config/units_parse.h"
#include "sim/report/array_view.h"
#include "sim/report/writers.h"

namespace tpusim::sim {

namespace {
// A developer's tool, not an option of the run: the timeline DRAM engine's calls recorded for
// bench/dram_replay (models/hbm/README.md, "Timing it alone").
std::string dram_recording_path() {
  const char* path = std::getenv("TPUSIM_DRAM_RECORD");
  return path ? path : "";
}

constexpr double kMaxSimulatedSeconds = 9000.0;

std::uint64_t peak_rss_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;  // Linux reports KiB
}

// This machine's physical memory in bytes (0 if unknown).
double machine_bytes() { return double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGE_SIZE)); }

// Functional mode keeps the contents of every on-chip memory: refuse up front a chip whose
// memories would not fit in this machine's, rather than fail (or be killed) partway through.
void check_functional_fits(const ChipSpec& spec) {
  const CoreSpec& core = spec.core;
  const std::uint64_t per_core = core.vmem.capacity.value() + core.accmem.capacity.value() +
                                 (core.cmem.present() ? core.cmem.capacity.value() : 0);
  const double needed = double(per_core) * spec.cores;
  const double machine = machine_bytes();
  const auto gib = [](double bytes) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f GiB", bytes / double(kGiB));
    return std::string(text);
  };
  if (machine > 0 && needed > machine)
    throw InputError(
        "--functional keeps every on-chip memory's contents: " + std::to_string(spec.cores) +
        " cores x " + config::format_size(Bytes(per_core)) + " = " + gib(needed) +
        ", more than this machine's " + gib(machine) + "; run without --functional (timing only)");
}

// The MXU --vcd and --show watch, given as the report names it: "chip.core1.mxu0" (the "chip."
// may be left out). Empty: core 0's first.
struct WatchedMxu {
  std::uint32_t core = 0, mxu = 0;
  std::string name() const {
    return "chip.core" + std::to_string(core) + ".mxu" + std::to_string(mxu);
  }
};

WatchedMxu watched_mxu(const std::string& given, const ChipSpec& spec) {
  WatchedMxu w;
  if (given.empty()) return w;
  const std::string bare = given.rfind("chip.", 0) == 0 ? given.substr(5) : given;
  unsigned core = 0, mxu = 0;
  // Read back and compared whole, so "core01.mxu0", "core-1.mxu0" or a trailing word fail.
  const bool parsed = std::sscanf(bare.c_str(), "core%u.mxu%u", &core, &mxu) == 2 &&
                      "core" + std::to_string(core) + ".mxu" + std::to_string(mxu) == bare;
  if (!parsed || core >= spec.cores || mxu >= spec.core.mxu.count)
    throw InputError("--watch-mxu: " + quoted_excerpt(given) + " is not an MXU of " + spec.name +
                     ": it has chip.core0.mxu0 to chip.core" + std::to_string(spec.cores - 1) +
                     ".mxu" + std::to_string(spec.core.mxu.count - 1));
  w.core = core;
  w.mxu = mxu;
  return w;
}

// A watched array that did nothing while another worked is a view of nothing: say which did.
void warn_if_watched_idle(const Report& report, const WatchedMxu& watched) {
  std::uint64_t watched_matmuls = 0;
  std::string busy;
  for (const UnitStats& u : report.units) {
    if (u.kind != "mxu") continue;
    const std::uint64_t matmuls = u.get("matmuls");
    if (u.path == watched.name())
      watched_matmuls = matmuls;
    else if (matmuls > 0 && busy.empty())
      busy = u.path;
  }
  if (watched_matmuls == 0 && !busy.empty())
    std::cerr << "warning: " << watched.name() << " (watched by --vcd/--show) ran no matmul; "
              << busy << " did: add --watch-mxu " << busy << "\n";
}

}  // namespace

void check_functional_data_fits(const workloads::Graph& graph, const ChipSpec& chip) {
  double elements = 0, bytes = 0;
  for (const workloads::Tensor& t : graph.tensors) {
    if (t.role != workloads::TensorRole::kInput && t.role != workloads::TensorRole::kWeight)
      continue;
    elements += double(t.elements());
    bytes += double(t.elements()) * double(dtype_bytes(t.dtype));
  }
  if (bytes > double(chip.memory.capacity.value()))
    throw InputError("graph '" + graph.name + "': its inputs and weights need " +
                     std::to_string(static_cast<std::uint64_t>(bytes)) + " bytes of HBM; " +
                     chip.name + " has " + std::to_string(chip.memory.capacity.value()) +
                     " (memory.capacity)");
  const double held = elements * sizeof(double) + bytes;
  const double machine = machine_bytes();
  if (machine > 0 && held > machine)
    throw InputError("--functional holds the inputs and weights of graph '" + graph.name + "' (" +
                     std::to_string(static_cast<std::uint64_t>(elements)) + " values, " +
                     std::to_string(static_cast<std::uint64_t>(held / double(kGiB))) +
                     " GiB with their copy in memory), more than this machine's " +
                     std::to_string(static_cast<std::uint64_t>(machine / double(kGiB))) +
                     " GiB; run without --functional (timing only)");
}

void remove_earlier_outputs(const std::vector<std::string>& files) {
  namespace fs = std::filesystem;
  std::error_code ec;
  // With them go the .partial files of a run stopped while writing. A directory of one of these
  // names is left, to fail the write, saying so; a device is not a file to remove.
  for (const std::string& file : files)
    if (!file.empty())
      for (const fs::path& old : {fs::path(file), fs::path(file + ".partial")})
        if (fs::is_regular_file(old, ec)) fs::remove(old, ec);
}

void remove_earlier_reports(const std::string& dir) { remove_earlier_outputs(report_paths(dir)); }

std::vector<std::string> report_paths(const std::string& dir) {
  std::vector<std::string> paths;
  if (!dir.empty())
    for (const char* name : kReportFiles)
      paths.push_back((std::filesystem::path(dir) / name).string());
  return paths;
}

void prepare_output_dir(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (!fs::is_directory(dir, ec)) throw InputError(dir + ": cannot create output directory");
  const fs::path probe = fs::path(dir) / ".tpusim-write-test";
  if (!std::ofstream(probe).good()) throw InputError(dir + ": output directory is not writable");
  fs::remove(probe, ec);
  remove_earlier_reports(dir);
}

int simulate(const SimulateRequest& request) {
  const config::ChipConfig& chip = request.chip;
  const WatchOptions& watch = request.watch;
  if (request.functional) check_functional_fits(chip.spec);
  // Everything about the watch files is checked before the run spends any time.
  if ((!watch.vcd.empty() || watch.show) && chip.spec.core.mxu.model != MxuModel::kCycle) {
    // The hint must work: the cycle-level MXU takes arrays of at most kMaxCycleMxuPes.
    const MxuSpec& mxu = chip.spec.core.mxu;
    const bool fits = std::uint64_t{mxu.rows} * mxu.cols <= kMaxCycleMxuPes;
    throw InputError(
        "--vcd and --show watch the cycle-level MXU; this chip has core.mxu.model: fast (" +
        std::string(fits ? "add --set core.mxu.model=cycle"
                         : "its " + std::to_string(mxu.rows) + "x" + std::to_string(mxu.cols) +
                               " array is above the cycle model's " +
                               std::to_string(kMaxCycleMxuPes) +
                               " PEs: watch a smaller chip, e.g. -c teach-4x4") +
        ")");
  }
  const bool watching = !watch.vcd.empty() || watch.show;
  if (!watching && !watch.mxu.empty()) throw InputError("--watch-mxu goes with --vcd or --show");
  const WatchedMxu watched = watched_mxu(watch.mxu, chip.spec);
  if (!watch.show && (watch.show_format != "text" || !watch.show_out.empty()))
    throw InputError("--show-format and --show-out go with --show");
  if (watch.show_format != "text" && watch.show_format != "html")
    throw InputError("--show-format: expected text or html, got '" + watch.show_format + "'");
  if (watch.show_format == "html" && watch.show_out.empty())
    throw InputError("--show-format html needs --show-out FILE (the page is one file)");
  // Opened before the run, so an unwritable path fails before simulating.
  std::optional<StagedStream> vcd_file, show_file;
  if (!watch.vcd.empty()) vcd_file.emplace(watch.vcd);
  if (!watch.show_out.empty()) show_file.emplace(watch.show_out);

  // Femtosecond resolution keeps a non-integer clock period (952.38 ps at 1.05 GHz) exact to
  // 1e-6 relative; it must be set before the first sc_time exists.
  sc_core::sc_set_time_resolution(1, sc_core::SC_FS);
  models::TraceRecorder trace(!request.out_dir.empty());
  const sc_core::sc_time period(1.0 / chip.spec.clock.value(), sc_core::SC_SEC);
  ObserverFanout observers;
  ArrayRecording recording;
  std::unique_ptr<models::ArrayVcd> vcd;
  if (!watch.vcd.empty()) {
    const auto period_ps = static_cast<std::uint64_t>(period.to_seconds() * 1e12 + 0.5);
    // The cycle-level array carries integer operands only (chip_validate.cpp): a and w are as
    // wide as the widest of them.
    std::uint32_t operand_bits = 8;
    for (const auto& [dtype, rate] : chip.spec.core.mxu.precisions)
      operand_bits = std::max<std::uint32_t>(operand_bits, 8 * dtype_bytes(dtype));
    vcd = std::make_unique<models::ArrayVcd>(vcd_file->out(), std::max<std::uint64_t>(1, period_ps),
                                             operand_bits);
    observers.add(vcd.get());
  }
  if (watch.show) observers.add(&recording);
  std::exception_ptr failure;
  models::BookingHorizon horizon;
  const models::SimContext ctx{chip.spec,
                               request.program,
                               trace,
                               period,
                               request.functional,
                               observers.empty() ? nullptr : &observers,
                               &failure,
                               &horizon,
                               watched.core,
                               watched.mxu,
                               dram_recording_path()};
  models::Chip model("chip", ctx);
  if (request.functional && request.before) request.before(model.memory().store());
  const auto sim_start = std::chrono::steady_clock::now();
  const models::RunResult result = model.run();
  const double sim_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - sim_start).count();
  // An error a unit met while running (not implemented, say) ends the run with its own kind.
  if (failure) std::rethrow_exception(failure);
  // SystemC's time saturates at 2^63 fs (about 9,223 s) instead of overflowing: a run that
  // gets near it would report a wrong time.
  if (sc_core::sc_time_stamp().to_seconds() >= kMaxSimulatedSeconds)
    throw InputError("the simulated time passed " + std::to_string(int(kMaxSimulatedSeconds)) +
                     " s, near the limit of SystemC's time (about 9,223 s): the settings make "
                     "the run too slow to simulate (a low bandwidth or rate, a long latency)");
  observers.end(result.cycles);
  vcd.reset();  // writes the closing time stamp
  // Kept when the run deadlocks below: the waveform of a stuck run is whole, and what shows why.
  if (vcd_file) vcd_file->commit();
  if (watch.show) {
    const std::string view = watch.show_format == "html"
                                 ? render_show_html(recording, "tpusim --show: " + request.title +
                                                                   " (" + watched.name() + ")")
                                 : render_show_text(recording, watched.name());
    if (show_file) {
      show_file->out() << view;
      show_file->commit();
    } else {
      std::cout << view << "\n";
    }
  }
  if (!result.deadlock.empty()) {
    std::cerr << "simulation error: " << result.deadlock << "\n";
    return kExitSimError;
  }
  if (request.functional && request.after) request.after(model.memory().store());

  Report report = derive_report(chip.spec, request.program,
                                collect_stats(model.stats_sources(), request.program.ops.size()),
                                trace.op_spans(), result.cycles);
  report.config = chip.resolved;
  if (watching) warn_if_watched_idle(report, watched);
  if (!request.workload.empty()) report.workload = request.workload;
  report.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - request.wall_start).count();
  report.peak_rss_bytes = peak_rss_bytes();
  spdlog::debug("simulated {} cycles in {:.3f} s ({:.3g} cycles/s); {:.3f} s since start",
                result.cycles, sim_seconds,
                sim_seconds > 0 ? double(result.cycles) / sim_seconds : 0.0, report.wall_seconds);
  if (!request.out_dir.empty()) {
    write_outputs(request.out_dir, report, trace, request.program);
    spdlog::debug("wrote report.json, ops.csv and trace.json into {}", request.out_dir);
  }
  std::cout << terminal_summary(report);
  return kExitOk;
}

}  // namespace tpusim::sim
