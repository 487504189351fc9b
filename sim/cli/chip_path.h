#pragma once

#include <string>

namespace tpusim::sim {

inline constexpr const char* kDefaultChip = "tpu-v4i";

// A chip argument is a path to a YAML file, or the bare name of a preset in configs/chips/
// ("tpu-v4i"), looked up under the working directory and then under the source tree.
std::string resolve_chip_path(const std::string& chip);

}  // namespace tpusim::sim
