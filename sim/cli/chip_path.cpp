#include "sim/cli/chip_path.h"

#include <filesystem>

namespace tpusim::sim {

namespace {

// A name that is not a file is looked up as `folder/NAME` and, without an extension, as
// `folder/NAME.yaml` (so `resnet50`, `tpuv1/mlp0` and `tpu-v4i.yaml` all name presets), under the
// working directory and then under the source tree; a file that exists is used as given.
std::string resolve_named(const std::string& arg, const std::string& folder) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (arg.empty() || fs::exists(arg, ec) || fs::path(arg).is_absolute()) return arg;
  const std::string relative =
      folder + "/" + arg + (fs::path(arg).extension().empty() ? ".yaml" : "");
  if (fs::exists(relative, ec)) return relative;
  const std::string in_source = std::string(TPUSIM_SOURCE_DIR) + "/" + relative;
  if (fs::exists(in_source, ec)) return in_source;
  // Let the loader report the missing file: under the preset's name for a bare name, as given
  // for a path.
  const bool bare_name = arg.find('/') == std::string::npos && fs::path(arg).extension().empty();
  return bare_name ? relative : arg;
}

}  // namespace

std::string resolve_chip_path(const std::string& chip) { return resolve_named(chip, "configs/chips"); }

std::string resolve_workload_path(const std::string& workload) { return resolve_named(workload, "workloads"); }

std::string resolve_memory_preset_path(const std::string& preset) {
  return resolve_named(preset, "configs/memory");
}

}  // namespace tpusim::sim
