#pragma once

#include <string>

namespace tpusim::sim {

inline constexpr const char* kDefaultChip = "tpu-v4i";

// A chip argument is a path to a YAML file, or the bare name of a preset in configs/chips/
// ("tpu-v4i"), looked up under the working directory and then under the source tree. A bare
// name that is no preset and no file throws InputError naming the nearest preset.
std::string resolve_chip_path(const std::string& chip);

inline constexpr const char* kDefaultWorkload = "bert-base-layer-s128";

// A workload argument is a path (.yaml graph or SCALE-Sim .csv), or the bare name of a sample in
// workloads/ ("resnet50"), looked up the same way.
std::string resolve_workload_path(const std::string& workload);

// A DRAM preset name ("hbm3-6400" means configs/memory/hbm3-6400.yaml), looked up the same way.
std::string resolve_memory_preset_path(const std::string& preset);

}  // namespace tpusim::sim
