#pragma once
// One function per implemented subcommand. Each returns the exit code, or throws a typed error
// that run_cli maps to one.

#include <string>
#include <vector>

namespace tpusim::sim {

struct ConfigCommandArgs {
  std::string chip;
  std::vector<std::string> overrides;
};
int run_config(const ConfigCommandArgs& args);

struct ValidateCommandArgs {
  std::vector<std::string> chips;
  std::vector<std::string> overrides;
};
int run_validate(const ValidateCommandArgs& args);

}  // namespace tpusim::sim
