// tpusim's entry point. main() enters SystemC's standard elaboration entry (with the kernel's
// banner switched off), which calls sc_main; every subcommand, simulating or not, then goes
// through the CLI (sim/cli).

#include <cstdlib>

#include <systemc>

#include "sim/cli/cli.h"

int sc_main(int argc, char* argv[]) { return tpusim::sim::run_cli(argc, argv); }

int main(int argc, char** argv) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 1);
  return sc_core::sc_elab_and_sim(argc, argv);
}
