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

struct AsmCommandArgs {
  std::string input;
  std::string output;
  std::string chip;  // optional: check the program against this chip
  std::vector<std::string> overrides;
};
int run_asm(const AsmCommandArgs& args);

struct DisasmCommandArgs {
  std::string input;
  std::string output;  // empty: stdout
};
int run_disasm(const DisasmCommandArgs& args);

struct ExecCommandArgs {
  std::string chip;
  std::string program;
  std::vector<std::string> overrides;
  std::string out;  // directory for report.json, ops.csv, trace.json; empty: terminal only
  bool functional = false;
  std::vector<std::string> loads;  // "hbm:ADDR=FILE": file contents into memory before the run
  std::vector<std::string> dumps;  // "hbm:ADDR:BYTES=FILE": memory into a file after the run
  std::string vcd;                 // cycle-level MXU waveform file; empty: none
  bool show = false;               // print the cycle-level MXU cycle by cycle
  std::string show_format = "text";  // text | html
  std::string show_out;            // file for the --show view; empty: stdout
};
int run_exec(const ExecCommandArgs& args);

}  // namespace tpusim::sim
