#include "sim/cli/chip_path.h"

#include <algorithm>
#include <filesystem>
#include <vector>

#include "sim/base/errors.h"
#include "workloads/suggest.h"

namespace tpusim::sim {

namespace {

// The names `folder` offers (its .yaml and .csv files, without the extension) under the
// working directory and the source tree, sorted.
std::vector<std::string> names_in(const std::string& folder) {
  namespace fs = std::filesystem;
  std::vector<std::string> names;
  for (const std::string& dir : {folder, std::string(TPUSIM_SOURCE_DIR) + "/" + folder}) {
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      const fs::path& p = it->path();
      if (p.extension() == ".yaml" || p.extension() == ".csv") names.push_back(p.stem().string());
    }
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

// A bare name (no folder, no extension) is a preset or sample first: `folder/NAME.yaml` under the
// working directory, then under the source tree, so that an output folder called `tpu-v4i` or
// `gemm-2048` does not hide the preset of that name; only when there is none is it a file in the
// working directory. Anything else is a path used as given when it exists, else looked up as
// `folder/ARG` (so `tpuv1/mlp0` and `tpu-v4i.yaml` also name presets).
std::string resolve_named(const std::string& arg, const std::string& folder, const char* what) {
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
  // A path: the loader reports the missing file as given. A bare name was meant as a preset.
  if (!bare_name) return arg;
  throw InputError(std::string("unknown ") + what + " '" + arg + "': no " + relative +
                   " here or in the source tree, and no file of that name" +
                   workloads::suggestion(arg, names_in(folder)));
}

}  // namespace

std::string resolve_chip_path(const std::string& chip) {
  return resolve_named(chip, "configs/chips", "chip");
}

std::string resolve_workload_path(const std::string& workload) {
  return resolve_named(workload, "workloads", "workload");
}

std::string resolve_memory_preset_path(const std::string& preset) {
  return resolve_named(preset, "configs/memory", "DRAM preset");
}

}  // namespace tpusim::sim
