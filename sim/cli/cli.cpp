#include "sim/cli/cli.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>
#include <systemc>

#include "sim/base/errors.h"
#include "sim/cli/chip_path.h"
#include "sim/cli/commands.h"

namespace tpusim::sim {
namespace {

// Values CLI11 would take silently: an empty path (the option then did nothing), and numbers
// outside their range (a seed of -1 became 2^64-1; a timeout of nan was kept).
const CLI::Validator kNonEmptyPath(
    [](std::string& s) {
      return s.empty() ? std::string("expected a path, got ''") : std::string();
    },
    "PATH", "non-empty path");

const CLI::Validator kSeed(
    [](std::string& s) {
      const bool digits =
          !s.empty() && s.size() <= 20 && s.find_first_not_of("0123456789") == std::string::npos;
      if (!digits || (s.size() == 20 && s > "18446744073709551615"))
        return "expected a whole number from 0 to 18446744073709551615, got '" + s + "'";
      return std::string();
    },
    "SEED", "seed");

const CLI::Validator kPositiveSeconds(
    [](std::string& s) {
      char* end = nullptr;
      const double v = std::strtod(s.c_str(), &end);
      if (s.empty() || *end != '\0' || !std::isfinite(v) || v <= 0 || v > 1e7)
        return "expected a number of seconds above 0 and at most 1e7, got '" + s + "'";
      return std::string();
    },
    "SECONDS", "seconds");

CLI::Option* add_overrides(CLI::App* cmd, std::vector<std::string>* overrides) {
  return cmd
      ->add_option("--set", *overrides, "Override one config key, e.g. --set core.mxu.rows=64")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
}

void add_watch_options(CLI::App* cmd, WatchArgs* watch) {
  cmd->add_option("--vcd", watch->vcd,
                  "Write a VCD waveform of the watched cycle-level MXU: one scope per PE")
      ->type_name("FILE")
      ->check(kNonEmptyPath);
  cmd->add_flag("--show", watch->show,
                "Show the cycle-level MXU cycle by cycle: inputs, weights and sums of every PE");
  cmd->add_option("--show-format", watch->show_format, "text (default) or html")
      ->check(CLI::IsMember({"text", "html"}));
  cmd->add_option("--show-out", watch->show_out,
                  "Write the --show view to this file (needed for html) instead of stdout")
      ->type_name("FILE")
      ->check(kNonEmptyPath);
  cmd->add_option("--watch-mxu", watch->mxu,
                  "The MXU --vcd and --show watch, named as in the report (default "
                  "chip.core0.mxu0)")
      ->type_name("UNIT")
      ->check(CLI::Validator(
          [](std::string& s) {
            return s.empty() ? std::string("expected an MXU such as chip.core0.mxu1, got ''")
                             : std::string();
          },
          "UNIT", "non-empty unit name"));
}

}  // namespace

int run_cli(int argc, char** argv) {
  CLI::App app{"tpusim: a cycle-approximate simulator of TPU-style ML accelerators", "tpusim"};
  app.set_version_flag("--version", std::string(TPUSIM_VERSION));
  app.require_subcommand(1);
  app.fallthrough();  // global flags (-v, -q) also work after the subcommand
  int verbosity = 0;
  bool quiet = false;
  app.add_flag("-v,--verbose", verbosity, "More log output on stderr (-vv for trace)");
  app.add_flag("-q,--quiet", quiet, "Log errors only (results are still printed)");

  ConfigCommandArgs config_args;
  CLI::App* config = app.add_subcommand("config", "Print the fully resolved chip configuration");
  config->add_option("chip", config_args.chip, "Chip YAML or preset name")
      ->default_val(kDefaultChip)
      ->check(kNonEmptyPath);
  add_overrides(config, &config_args.overrides);

  ValidateCommandArgs validate_args;
  CLI::App* validate = app.add_subcommand("validate", "Check chip configurations without running");
  validate->add_option("chips", validate_args.chips, "Chip YAML files or preset names")
      ->required()
      ->check(kNonEmptyPath);
  add_overrides(validate, &validate_args.overrides);

  RunCommandArgs run_args;
  CLI::App* run = app.add_subcommand("run", "Compile a workload for a chip and simulate it");
  run->add_option("-c,--chip", run_args.chip, "Chip YAML or preset name")
      ->default_val(kDefaultChip)
      ->check(kNonEmptyPath);
  run->add_option("-w,--workload", run_args.workload,
                  "Workload: YAML graph, SCALE-Sim topology CSV, or a sample name")
      ->default_val(kDefaultWorkload)
      ->check(kNonEmptyPath);
  run->add_option("-o,--out", run_args.out,
                  "Write report.json, ops.csv and trace.json into this directory")
      ->check(kNonEmptyPath);
  run->add_flag("--functional", run_args.functional, "Move real data and compute values (slower)");
  run->add_option("--inputs", run_args.inputs,
                  "With --functional: directory of NAME.npy inputs and weights (missing ones come "
                  "from --seed)")
      ->check(kNonEmptyPath);
  run->add_option("--dump", run_args.dump,
                  "With --functional: write outputs (and generated inputs) as NAME.npy here")
      ->check(kNonEmptyPath);
  run->add_option("--seed", run_args.seed, "Seed of generated inputs and weights")
      ->default_val(1)
      ->check(kSeed);
  run->add_flag("--no-overlap", run_args.no_overlap,
                "Separate every two operators by a barrier: no operator starts beside the one before it");
  add_watch_options(run, &run_args.watch);
  add_overrides(run, &run_args.overrides);
  ExecCommandArgs exec_args;
  CLI::App* exec = app.add_subcommand("exec", "Simulate an assembled program on a chip");
  exec->add_option("program", exec_args.program, "Program (.tasm or .tbin)")
      ->required()
      ->check(kNonEmptyPath);
  exec->add_option("-c,--chip", exec_args.chip, "Chip YAML or preset name")
      ->default_val(kDefaultChip)
      ->check(kNonEmptyPath);
  exec->add_option("-o,--out", exec_args.out,
                   "Write report.json, ops.csv and trace.json into this directory")
      ->check(kNonEmptyPath);
  exec->add_flag("--functional", exec_args.functional,
                 "Move real data and compute values (slower; off by default)");
  exec->add_option("--load", exec_args.loads,
                   "With --functional: copy a file into off-chip memory before the run")
      ->type_name("hbm:ADDR=FILE")
      ->allow_extra_args(false);
  exec->add_option("--dump", exec_args.dumps,
                   "With --functional: write off-chip memory to a file after the run")
      ->type_name("hbm:ADDR:BYTES=FILE")
      ->allow_extra_args(false);
  add_watch_options(exec, &exec_args.watch);
  add_overrides(exec, &exec_args.overrides);
  CompileCommandArgs compile_args;
  CLI::App* compile = app.add_subcommand("compile", "Lower a workload to a program for a chip");
  compile->add_option("-c,--chip", compile_args.chip, "Chip YAML or preset name")
      ->default_val(kDefaultChip)
      ->check(kNonEmptyPath);
  compile
      ->add_option("-w,--workload", compile_args.workload,
                   "Workload: YAML graph, SCALE-Sim topology CSV, or a sample name")
      ->default_val(kDefaultWorkload)
      ->check(kNonEmptyPath);
  compile
      ->add_option("-o,--output", compile_args.output,
                   "Program to write (.tasm text or .tbin binary)")
      ->check(kNonEmptyPath);
  compile->add_flag("--explain", compile_args.explain,
                    "Print each operator's tile, loop order, placement, footprint and bound");
  compile->add_flag("--no-overlap", compile_args.no_overlap,
                    "Separate every two operators by a barrier: no operator starts beside the one before it");
  add_overrides(compile, &compile_args.overrides);
  AsmCommandArgs asm_args;
  CLI::App* assemble = app.add_subcommand("asm", "Assemble .tasm text into a .tbin binary");
  assemble->add_option("input", asm_args.input, "Program text (.tasm)")
      ->required()
      ->check(kNonEmptyPath);
  assemble->add_option("-o,--output", asm_args.output, "Binary to write (.tbin)")
      ->required()
      ->check(kNonEmptyPath);
  CLI::Option* asm_chip =
      assemble
          ->add_option("-c,--chip", asm_args.chip,
                       "Also check the program against this chip (addresses, shapes, semaphores)")
          ->check(kNonEmptyPath);
  add_overrides(assemble, &asm_args.overrides)->needs(asm_chip);  // it changes that chip

  DisasmCommandArgs disasm_args;
  CLI::App* disassemble = app.add_subcommand("disasm", "Print a .tbin binary as .tasm text");
  disassemble->add_option("input", disasm_args.input, "Program binary (.tbin)")
      ->required()
      ->check(kNonEmptyPath);
  disassemble->add_option("-o,--output", disasm_args.output, "Text to write (default: stdout)")
      ->check(kNonEmptyPath);
  SweepCommandArgs sweep_args;
  CLI::App* sweep = app.add_subcommand(
      "sweep", "Run a parameter sweep, each point in its own process (configs/sweeps/README.md)");
  sweep->add_option("file", sweep_args.file, "Sweep file (YAML)")->check(kNonEmptyPath);
  sweep->add_option("-o,--out", sweep_args.out, "Output directory: results.csv and points/<id>/")
      ->check(kNonEmptyPath);
  sweep->add_flag("--list", sweep_args.list, "Print the points (after --shard) and exit");
  sweep->add_option("-j,--jobs", sweep_args.jobs, "Points run at once (default: one per CPU)")
      ->check(CLI::Range(1u, 4096u));
  sweep->add_flag("--force", sweep_args.force, "Rerun points already in results.csv");
  sweep->add_option("--shard", sweep_args.shard,
                    "Run only slice i of N (0-based): the points at positions p with p mod N == i")
      ->type_name("i/N");
  sweep->add_option("--merge", sweep_args.merge,
                    "Join these sweep output directories' results.csv into --out")
      ->type_name("DIR...");
  sweep
      ->add_option("--timeout", sweep_args.timeout_seconds,
                   "Kill a point's process after this many seconds (recorded as failed)")
      ->type_name("SECONDS")
      ->check(kPositiveSeconds);

  // CLI11 reports an unknown first word as "a subcommand is required"; name it instead.
  if (argc > 1 && argv[1][0] != '-') {
    std::string names;
    bool known = false;
    for (const CLI::App* sub : app.get_subcommands({})) {
      known |= sub->get_name() == argv[1];
      names += (names.empty() ? "" : ", ") + sub->get_name();
    }
    if (!known) {
      std::cerr << "tpusim: error: unknown subcommand '" << argv[1] << "' (subcommands: " << names
                << ")\n";
      return kExitBadInput;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion&) {
    std::cout << "tpusim " << TPUSIM_VERSION << "\n";
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    // Point at the help of the subcommand that was being parsed, when there was one.
    std::string help = "tpusim --help";
    for (const CLI::App* sub : app.get_subcommands({}))
      if (sub->parsed()) help = "tpusim " + sub->get_name() + " --help";
    std::cerr << "tpusim: error: " << one_line(e.what()) << " (see " << help << ")\n";
    return kExitBadInput;
  } catch (const NotImplemented& e) {
    std::cerr << "error: " << one_line(e.what()) << "\n";
    return kExitNotImplemented;
  }

  // Logs go to stderr, so that stdout holds only results (a summary, a resolved config).
  spdlog::set_default_logger(spdlog::stderr_logger_st("tpusim"));
  spdlog::set_pattern("tpusim: %l: %v");
  spdlog::set_level(quiet ? spdlog::level::err
                    : verbosity >= 2 ? spdlog::level::trace
                    : verbosity == 1 ? spdlog::level::debug
                                     : spdlog::level::info);
  const int status = [&] {
    try {
      if (config->parsed()) return run_config(config_args);
      if (validate->parsed()) return run_validate(validate_args);
      if (assemble->parsed()) return run_asm(asm_args);
      if (exec->parsed()) return run_exec(exec_args);
      if (run->parsed()) return run_run(run_args);
      if (compile->parsed()) return run_compile(compile_args);
      if (disassemble->parsed()) return run_disasm(disasm_args);
      if (sweep->parsed()) return run_sweep(sweep_args);
    } catch (const InputError& e) {
      std::cerr << "error: " << one_line(e.what()) << "\n";
      return kExitBadInput;
    } catch (const NotImplemented& e) {
      std::cerr << "error: " << one_line(e.what()) << "\n";
      return kExitNotImplemented;
    } catch (const SimError& e) {
      std::cerr << "simulation error: " << one_line(e.what()) << "\n";
      return kExitSimError;
    } catch (const sc_core::sc_report& e) {
      std::cerr << "simulation error: " << one_line(e.what()) << "\n";
      return kExitSimError;
    } catch (const std::exception& e) {
      // Not expected: every input problem is an InputError. Still one line, never a stack trace.
      std::cerr << "internal error: " << one_line(e.what()) << "\n";
      return kExitSimError;
    }
    return kExitOk;
  }();
  // Results printed to stdout (disasm, --explain, a summary) that did not all get out (a full
  // disk, a file size limit, a closed pipe) are a failed run, as a failed -o file is.
  errno = 0;
  std::cout.flush();
  if (!std::cout) {
    std::cerr << "error: cannot write the results to standard output"
              << (errno ? std::string(": ") + std::strerror(errno) : std::string()) << "\n";
    return status == kExitOk ? kExitBadInput : status;
  }
  return status;
}

std::string one_line(const char* text) {
  static const char kDigits[] = "0123456789ABCDEF";
  std::string out;
  for (const char* p = text; *p; ++p) {
    const auto b = static_cast<unsigned char>(*p);
    if (*p == '\n') {
      out += "\\n";
    } else if (*p == '\t') {
      out += "\\t";
    } else if (b < 0x20 || b == 0x7F) {
      out += std::string("\\x") + kDigits[b >> 4] + kDigits[b & 15];
    } else {
      out += *p;
    }
  }
  return out;
}

}  // namespace tpusim::sim
