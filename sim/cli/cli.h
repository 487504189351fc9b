#pragma once

namespace tpusim::sim {

// Parses the command line, runs the subcommand, and maps errors to exit codes:
// 0 ok, 1 simulation error, 2 bad input (config, program, workload, flags), 3 not implemented.
int run_cli(int argc, char** argv);

}  // namespace tpusim::sim
