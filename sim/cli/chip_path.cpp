#include "sim/cli/chip_path.h"

#include <filesystem>

namespace tpusim::sim {

namespace {

// A bare name (no folder, no extension) is a preset or sample first: `folder/NAME.yaml` under the
// working directory, then under the source tree, so that an output folder called `tpu-v4i` or
// `gemm-2048` does not hide the preset of that name; only when there is none is it a file in the
// working directory. Anything else is a path used as given when it exists, else looked up as
// `folder/ARG` (so `tpuv1/mlp0` and `tpu-v4i.yaml` also name presets).
std::string resolve_named(const std::string& arg, const std::string& folder) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const bool bare_name = arg.find('/') == std::string::npos && fs::path(arg).extension().empty();
  if (arg.empty() || fs::path(arg).is_absolute() || (!bare_name && fs::exists(arg, ec))) return arg;
  const std::string relative =
      folder + "/" + arg + (fs::path(arg).extension().empty() ? ".yaml" : "");
  if (fs::exists(relative, ec)) return relative;
  const std::string in_source = std::string(TPUSIM_SOURCE_DIR) + "/" + relative;
  if (fs::exists(in_source, ec)) return in_source;
  if (fs::exists(arg, ec)) return arg;
  // Let the loader report the missing file: under the preset's name for a bare name, as given
  // for a path.
  return bare_name ? relative : arg;
}

}  // namespace

std::string resolve_chip_path(const std::string& chip) { return resolve_named(chip, "configs/chips"); }

std::string resolve_workload_path(const std::string& workload) { return resolve_named(workload, "workloads"); }

std::string resolve_memory_preset_path(const std::string& preset) {
  return resolve_named(preset, "configs/memory");
}

}  // namespace tpusim::sim
