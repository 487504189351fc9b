#include "sim/cli/chip_path.h"

#include <filesystem>

namespace tpusim::sim {

namespace {

// A bare name (no '/', no extension) is `folder/NAME.yaml`, looked up under the working directory
// and then under the source tree; anything else is a path, used as given.
std::string resolve_named(const std::string& arg, const std::string& folder) {
  namespace fs = std::filesystem;
  const bool bare_name = arg.find('/') == std::string::npos && fs::path(arg).extension().empty();
  if (!bare_name) return arg;
  const std::string relative = folder + "/" + arg + ".yaml";
  std::error_code ec;
  if (fs::exists(relative, ec)) return relative;
  const std::string in_source = std::string(TPUSIM_SOURCE_DIR) + "/" + relative;
  if (fs::exists(in_source, ec)) return in_source;
  // Let the loader report the missing file under the name a user would look for.
  return relative;
}

}  // namespace

std::string resolve_chip_path(const std::string& chip) { return resolve_named(chip, "configs/chips"); }

std::string resolve_workload_path(const std::string& workload) { return resolve_named(workload, "workloads"); }

std::string resolve_memory_preset_path(const std::string& preset) {
  return resolve_named(preset, "configs/memory");
}

}  // namespace tpusim::sim
