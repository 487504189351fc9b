// tpusim's entry point. main() is ours rather than libsystemc's: the CLI is parsed and checked
// before SystemC is touched, and only subcommands that simulate enter the kernel.

#include "sim/cli/cli.h"

int main(int argc, char** argv) { return tpusim::sim::run_cli(argc, argv); }
