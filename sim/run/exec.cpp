// `tpusim exec`: simulate an assembled program on a chip and report.

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <filesystem>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <iostream>

#include <spdlog/spdlog.h>
#include <systemc>

#include "isa/checker.h"
#include "isa/program_file.h"
#include "models/chip/chip.h"
#include "models/mxu/array_vcd.h"
#include "sim/base/errors.h"
#include "sim/cli/chip_path.h"
#include "sim/cli/commands.h"
#include "sim/config/chip_config.h"
#include "sim/report/array_view.h"
#include "sim/report/writers.h"

namespace tpusim::sim {
namespace {

struct MemoryImage {
  std::uint64_t addr = 0;
  std::uint64_t bytes = 0;
  std::string file;
};

std::uint64_t parse_number(const std::string& text, const std::string& spec) {
  std::size_t used = 0;
  std::uint64_t v = 0;
  try {
    v = std::stoull(text, &used, 0);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || text[0] == '-')
    throw InputError("'" + spec + "': expected a number, got '" + text + "'");
  return v;
}

// "hbm:ADDR=FILE" (load) or "hbm:ADDR:BYTES=FILE" (dump), checked against the memory and the
// file system before anything is simulated.
std::vector<MemoryImage> parse_images(const std::vector<std::string>& specs, bool dump,
                                      const ChipSpec& chip) {
  namespace fs = std::filesystem;
  std::vector<MemoryImage> out;
  for (const std::string& spec : specs) {
    const std::string form = dump ? "hbm:ADDR:BYTES=FILE" : "hbm:ADDR=FILE";
    const std::size_t eq = spec.find('=');
    if (spec.rfind("hbm:", 0) != 0 || eq == std::string::npos || eq + 1 == spec.size())
      throw InputError("'" + spec + "': expected " + form);
    MemoryImage image;
    image.file = spec.substr(eq + 1);
    const std::string where = spec.substr(4, eq - 4);
    const std::size_t colon = where.find(':');
    if (dump != (colon != std::string::npos)) throw InputError("'" + spec + "': expected " + form);
    image.addr = parse_number(where.substr(0, colon), spec);
    std::error_code ec;
    if (fs::is_directory(image.file, ec))
      throw InputError(image.file + ": is a directory, not a file");
    if (dump) {
      image.bytes = parse_number(where.substr(colon + 1), spec);
      const fs::path parent = fs::path(image.file).parent_path();
      if (!parent.empty() && !fs::is_directory(parent, ec))
        throw InputError(image.file + ": no such directory '" + parent.string() + "'");
    } else {
      if (!fs::is_regular_file(image.file, ec)) throw InputError(image.file + ": no such file");
      image.bytes = fs::file_size(image.file, ec);
      if (ec) throw InputError(image.file + ": cannot read file");
    }
    const std::uint64_t capacity = chip.memory.capacity.value();
    if (image.addr > capacity || image.bytes > capacity - image.addr)
      throw InputError("'" + spec + "': hbm range [" + std::to_string(image.addr) + ", +" +
                       std::to_string(image.bytes) + ") is outside memory.capacity (" +
                       std::to_string(capacity) + " B)");
    out.push_back(std::move(image));
  }
  return out;
}

std::vector<std::uint8_t> read_binary(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<std::uint8_t> data;
  try {
    data.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  } catch (const std::exception&) {
    throw InputError(path + ": cannot read file");
  }
  if (!in && !in.eof()) throw InputError(path + ": cannot read file");
  return data;
}

void write_binary(const std::string& path, const std::vector<std::uint8_t>& data) {
  const std::string temp = path + ".partial";
  std::ofstream out(temp, std::ios::binary);
  out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
  if (!out.flush() || std::rename(temp.c_str(), path.c_str()) != 0) {
    std::remove(temp.c_str());
    throw InputError(path + ": cannot write file");
  }
}

// The output directory exists (or is created) and takes files, before the run spends any time.
void prepare_output_dir(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (!fs::is_directory(dir, ec)) throw InputError(dir + ": cannot create output directory");
  const fs::path probe = fs::path(dir) / ".tpusim-write-test";
  if (!std::ofstream(probe).good()) throw InputError(dir + ": output directory is not writable");
  fs::remove(probe, ec);
}

std::uint64_t peak_rss_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;  // Linux reports KiB
}

}  // namespace

int run_exec(const ExecCommandArgs& args) {
  const auto wall_start = std::chrono::steady_clock::now();
  const config::ChipConfig chip = config::load_chip_config(resolve_chip_path(args.chip), args.overrides);
  if (!args.functional && !(args.loads.empty() && args.dumps.empty()))
    throw InputError("--load and --dump need --functional (timing mode carries no data)");
  const std::vector<MemoryImage> loads = parse_images(args.loads, false, chip.spec);
  const std::vector<MemoryImage> dumps = parse_images(args.dumps, true, chip.spec);
  if (!args.out.empty()) prepare_output_dir(args.out);
  isa::Program program = isa::read_program_file(args.program);
  isa::check(program, chip.spec);
  const bool watch = !args.vcd.empty() || args.show;
  if (watch && chip.spec.core.mxu.model != MxuModel::kCycle)
    throw InputError(
        "--vcd and --show watch the cycle-level MXU; this chip has core.mxu.model: fast (add "
        "--set core.mxu.model=cycle)");
  if (!args.show && (args.show_format != "text" || !args.show_out.empty()))
    throw InputError("--show-format and --show-out go with --show");
  if (args.show_format == "html" && args.show_out.empty())
    throw InputError("--show-format html needs --show-out FILE (the page is one file)");
  std::ofstream vcd_file;
  if (!args.vcd.empty()) {
    vcd_file.open(args.vcd);
    if (!vcd_file) throw InputError(args.vcd + ": cannot write file");
  }
  std::ofstream show_file;
  if (!args.show_out.empty()) {
    show_file.open(args.show_out);
    if (!show_file) throw InputError(args.show_out + ": cannot write file");
  }

  // Femtosecond resolution keeps a non-integer clock period (952.38 ps at 1.05 GHz) exact to
  // 1e-6 relative; it must be set before the first sc_time exists.
  sc_core::sc_set_time_resolution(1, sc_core::SC_FS);
  models::TraceRecorder trace(!args.out.empty());
  const sc_core::sc_time period(1.0 / chip.spec.clock.value(), sc_core::SC_SEC);
  ObserverFanout observers;
  ArrayRecording recording;
  std::unique_ptr<models::ArrayVcd> vcd;
  if (!args.vcd.empty()) {
    const auto period_ps = static_cast<std::uint64_t>(period.to_seconds() * 1e12 + 0.5);
    vcd = std::make_unique<models::ArrayVcd>(vcd_file, std::max<std::uint64_t>(1, period_ps));
    observers.add(vcd.get());
  }
  if (args.show) observers.add(&recording);
  const models::SimContext ctx{chip.spec, program, trace, period, args.functional,
                               observers.empty() ? nullptr : &observers};
  models::Chip model("chip", ctx);
  for (const MemoryImage& image : loads) {
    const std::vector<std::uint8_t> data = read_binary(image.file);
    model.memory().store().write(image.addr, data.data(), data.size());
  }
  const models::RunResult result = model.run();
  vcd.reset();  // writes the closing time stamp
  if (vcd_file.is_open() && !vcd_file.flush()) throw InputError(args.vcd + ": cannot write file");
  if (args.show) {
    const std::string view = args.show_format == "html"
                                 ? render_show_html(recording, "tpusim --show: " + args.program)
                                 : render_show_text(recording);
    if (show_file.is_open()) {
      if (!(show_file << view).flush()) throw InputError(args.show_out + ": cannot write file");
    } else {
      std::cout << view << "\n";
    }
  }
  if (!result.deadlock.empty()) {
    std::cerr << "simulation error: " << result.deadlock << "\n";
    return kExitSimError;
  }
  for (const MemoryImage& image : dumps) {
    std::vector<std::uint8_t> data(image.bytes);
    model.memory().store().read(image.addr, data.data(), data.size());
    write_binary(image.file, data);
  }

  Report report = derive_report(chip.spec, program,
                                collect_stats(model.stats_sources(), program.ops.size()),
                                trace.op_spans(), result.cycles, ctx.ps(result.end));
  report.config = chip.resolved;
  report.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  report.peak_rss_bytes = peak_rss_bytes();
  if (!args.out.empty()) write_outputs(args.out, report, trace, program);
  std::cout << terminal_summary(report);
  spdlog::debug("simulated {} cycles in {:.3f} s wall", result.cycles, report.wall_seconds);
  return kExitOk;
}

}  // namespace tpusim::sim
