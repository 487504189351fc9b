// `tpusim config` and `tpusim validate`.

#include <cstdio>
#include <iostream>

#include "sim/base/errors.h"
#include "sim/cli/chip_path.h"
#include "sim/cli/commands.h"
#include "sim/config/chip_config.h"
#include "sim/config/units_parse.h"

namespace tpusim::sim {
namespace {

// "137.6 TOPS" / "3.2 GOPS": peak operations (2 per MAC) in a readable decimal prefix.
std::string format_ops(double ops_per_second) {
  const char* prefixes[] = {"", "K", "M", "G", "T", "P"};
  int i = 0;
  while (ops_per_second >= 1000 && i < 5) {
    ops_per_second /= 1000;
    ++i;
  }
  char text[64];
  std::snprintf(text, sizeof text, "%.1f %sOPS", ops_per_second, prefixes[i]);
  return text;
}

std::string summary(const ChipSpec& chip) {
  const MxuSpec& mxu = chip.core.mxu;
  std::string peaks;
  for (const auto& [dtype, rate] : mxu.precisions)
    peaks += std::string(peaks.empty() ? "" : ", ") +
             format_ops(2 * chip.peak_macs_per_second(dtype)) + " " + std::string(dtype_name(dtype));
  return chip.name + ": " + std::to_string(chip.cores) + " core(s) x " +
         std::to_string(mxu.count) + " MXU " + std::to_string(mxu.rows) + "x" +
         std::to_string(mxu.cols) + " " + std::string(dataflow_name(mxu.dataflow)) + " @ " +
         config::format_frequency(chip.clock) + "; peak " + peaks + "; " +
         config::format_size(chip.memory.capacity) + " " + chip.memory.hbm.standard + " at " +
         config::format_bandwidth(chip.memory.bandwidth);
}

}  // namespace

int run_config(const ConfigCommandArgs& args) {
  const config::ChipConfig chip =
      config::load_chip_config(resolve_chip_path(args.chip), args.overrides);
  std::cout << "# " << chip.path << " resolved (extends merged, --set applied, defaults filled)\n"
            << config::to_yaml(chip.resolved);
  return kExitOk;
}

int run_validate(const ValidateCommandArgs& args) {
  int failures = 0;
  for (const std::string& chip : args.chips) {
    try {
      const config::ChipConfig loaded =
          config::load_chip_config(resolve_chip_path(chip), args.overrides);
      std::cout << "ok: " << loaded.path << ": " << summary(loaded.spec) << "\n";
    } catch (const InputError& e) {
      std::cerr << "error: " << one_line(e.what()) << "\n";
      ++failures;
    }
  }
  return failures == 0 ? kExitOk : kExitBadInput;
}

}  // namespace tpusim::sim
