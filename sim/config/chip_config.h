#pragma once
// Chip YAML -> validated ChipSpec. The only code that reads chip and energy YAML.

#include <string>
#include <vector>

#include "sim/base/spec/chip_spec.h"
#include "sim/config/config_tree.h"

namespace tpusim::config {

struct ChipConfig {
  std::string path;     // the file named on the command line
  ChipSpec spec;        // validated
  ConfigNode resolved;  // every key with the value in force, defaults included
};

// Loads `path`, resolves `extends`, applies `overrides` ("key.path=value", in order), binds and
// validates. Throws ConfigError naming file:line:col and key path.
ChipConfig load_chip_config(const std::string& path, const std::vector<std::string>& overrides = {});

// Loads an energy table file (configs/energy/*.yaml).
EnergyTable load_energy_table(const std::string& path);

// Cross-field rules of a bound spec; throws SpecError naming the key path (see docs/config.md).
void validate_chip(const ChipSpec& chip);

}  // namespace tpusim::config
