// `tpusim exec`: simulate an assembled program on a chip and report.

#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <iostream>

#include <spdlog/spdlog.h>
#include <systemc>

#include "isa/checker.h"
#include "isa/program_file.h"
#include "models/chip/chip.h"
#include "sim/base/errors.h"
#include "sim/cli/chip_path.h"
#include "sim/cli/commands.h"
#include "sim/config/chip_config.h"
#include "sim/report/writers.h"

namespace tpusim::sim {
namespace {

struct MemoryImage {
  std::uint64_t addr = 0;
  std::string file;
  std::vector<std::uint8_t> data;
};

std::uint64_t parse_number(const std::string& text, const std::string& spec) {
  std::size_t used = 0;
  std::uint64_t v = 0;
  try {
    v = std::stoull(text, &used, 0);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size())
    throw InputError("'" + spec + "': expected a number, got '" + text + "'");
  return v;
}

// "hbm:ADDR=FILE" (load) or "hbm:ADDR:BYTES=FILE" (dump).
std::vector<MemoryImage> parse_images(const std::vector<std::string>& specs, bool dump) {
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
    if (dump) {
      image.data.resize(parse_number(where.substr(colon + 1), spec));
    } else {
      std::ifstream in(image.file, std::ios::binary);
      if (!in) throw InputError(image.file + ": cannot read file");
      image.data.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    out.push_back(std::move(image));
  }
  return out;
}

void check_range(const MemoryImage& image, const ChipSpec& chip) {
  const std::uint64_t capacity = chip.memory.capacity.value();
  if (image.addr > capacity || image.data.size() > capacity - image.addr)
    throw InputError(image.file + ": hbm range [" + std::to_string(image.addr) + ", +" +
                     std::to_string(image.data.size()) + ") is outside memory.capacity (" +
                     std::to_string(capacity) + " B)");
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
  const std::vector<MemoryImage> loads = parse_images(args.loads, false);
  const std::vector<MemoryImage> dumps = parse_images(args.dumps, true);
  isa::Program program = isa::read_program_file(args.program);
  isa::check(program, chip.spec);

  // Femtosecond resolution keeps a non-integer clock period (952.38 ps at 1.05 GHz) exact to
  // 1e-6 relative; it must be set before the first sc_time exists.
  sc_core::sc_set_time_resolution(1, sc_core::SC_FS);
  models::TraceRecorder trace(!args.out.empty());
  const models::SimContext ctx{chip.spec, program, trace,
                               sc_core::sc_time(1.0 / chip.spec.clock.value(), sc_core::SC_SEC),
                               args.functional};
  models::Chip model("chip", ctx);
  for (const MemoryImage& image : loads) {
    check_range(image, chip.spec);
    model.memory().store().write(image.addr, image.data.data(), image.data.size());
  }
  const models::RunResult result = model.run();
  for (MemoryImage image : dumps) {
    check_range(image, chip.spec);
    model.memory().store().read(image.addr, image.data.data(), image.data.size());
    write_binary(image.file, image.data);
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
