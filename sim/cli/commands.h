#pragma once
// One function per implemented subcommand. Each returns the exit code, or throws a typed error
// that run_cli maps to one.

#include <cstdint>
#include <string>
#include <vector>

namespace tpusim::sim {

// Messages quote user text (a YAML key, a value); its control characters, escaped, cannot break
// an error over several lines.
std::string one_line(const char* text);

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

// Watching the cycle-level MXU (exec and run).
struct WatchArgs {
  std::string vcd;                   // waveform file; empty: none
  bool show = false;                 // print the array cycle by cycle
  std::string show_format = "text";  // text | html
  std::string show_out;              // file for the --show view; empty: stdout
  std::string mxu;  // the watched MXU as the report names it; empty: core 0's first
};

struct ExecCommandArgs {
  std::string chip;
  std::string program;
  std::vector<std::string> overrides;
  std::string out;  // directory for report.json, ops.csv, trace.json; empty: terminal only
  bool functional = false;
  std::vector<std::string> loads;  // "hbm:ADDR=FILE": file contents into memory before the run
  std::vector<std::string> dumps;  // "hbm:ADDR:BYTES=FILE": memory into a file after the run
  WatchArgs watch;
};
int run_exec(const ExecCommandArgs& args);

struct RunCommandArgs {
  std::string chip;
  std::string workload;
  std::vector<std::string> overrides;
  std::string out;
  bool functional = false;
  std::string inputs;  // directory of NAME.npy inputs and weights (functional)
  std::string dump;    // directory for output tensors and generated inputs (functional)
  std::uint64_t seed = 1;
  bool no_overlap = false;  // a barrier between every two operators (isa LowerOptions)
  WatchArgs watch;
};
int run_run(const RunCommandArgs& args);

struct CompileCommandArgs {
  std::string chip;
  std::string workload;
  std::vector<std::string> overrides;
  std::string output;  // .tasm or .tbin; empty: none
  bool explain = false;
  bool no_overlap = false;
};
int run_compile(const CompileCommandArgs& args);

struct SweepCommandArgs {
  std::string file;                // sweep YAML; empty with --merge
  std::string out;                 // results.csv and points/<id>/ go here
  unsigned jobs = 0;               // points at once; 0: one per CPU
  bool force = false;              // rerun points already in results.csv
  std::string shard;               // "i/N", 0-based; empty: every point
  std::vector<std::string> merge;  // sweep output directories to join into `out`
  double timeout_seconds = 0;      // per point; 0: none
  bool list = false;               // print the selected points and exit
};
int run_sweep(const SweepCommandArgs& args);

}  // namespace tpusim::sim
