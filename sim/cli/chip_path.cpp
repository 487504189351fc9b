#include "sim/cli/chip_path.h"

#include <filesystem>

namespace tpusim::sim {

std::string resolve_chip_path(const std::string& chip) {
  namespace fs = std::filesystem;
  const bool bare_name = chip.find('/') == std::string::npos && fs::path(chip).extension().empty();
  if (!bare_name) return chip;
  const std::string relative = "configs/chips/" + chip + ".yaml";
  std::error_code ec;
  if (fs::exists(relative, ec)) return relative;
  const std::string in_source = std::string(TPUSIM_SOURCE_DIR) + "/" + relative;
  if (fs::exists(in_source, ec)) return in_source;
  // Let the loader report the missing file under the name a user would look for.
  return relative;
}

std::string resolve_workload_path(const std::string& workload) {
  namespace fs = std::filesystem;
  const bool bare_name = workload.find('/') == std::string::npos && fs::path(workload).extension().empty();
  if (!bare_name) return workload;
  const std::string relative = "workloads/" + workload + ".yaml";
  std::error_code ec;
  if (fs::exists(relative, ec)) return relative;
  const std::string in_source = std::string(TPUSIM_SOURCE_DIR) + "/" + relative;
  if (fs::exists(in_source, ec)) return in_source;
  return relative;
}

}  // namespace tpusim::sim
