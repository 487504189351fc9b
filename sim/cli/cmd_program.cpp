// `tpusim asm` and `tpusim disasm`.

#include <filesystem>
#include <iostream>

#include "isa/assembler.h"
#include "isa/checker.h"
#include "isa/disassembler.h"
#include "isa/program_file.h"
#include "sim/base/errors.h"
#include "sim/cli/chip_path.h"
#include "sim/cli/commands.h"
#include "sim/report/writers.h"
#include "sim/config/chip_config.h"

namespace tpusim::sim {
namespace {

// Writing the result over the program it came from loses the source: refused.
void refuse_overwriting_input(const std::string& input, const std::string& output) {
  std::error_code ec;
  if (std::filesystem::equivalent(input, output, ec))
    throw InputError(output + ": is the input file; write the result elsewhere");
}

}  // namespace

int run_asm(const AsmCommandArgs& args) {
  refuse_overwriting_input(args.input, args.output);
  const isa::Program program = isa::read_program_file(args.input);
  if (!args.chip.empty()) {
    const config::ChipConfig chip =
        config::load_chip_config(resolve_chip_path(args.chip), args.overrides);
    isa::check(program, chip.spec);
  }
  isa::write_binary_file(program, args.output);
  return kExitOk;
}

int run_disasm(const DisasmCommandArgs& args) {
  if (!args.output.empty()) refuse_overwriting_input(args.input, args.output);
  const std::string text = isa::disassemble(isa::read_program_file(args.input));
  if (args.output.empty()) {
    std::cout << text;
    return kExitOk;
  }
  write_file(args.output, text);
  return kExitOk;
}

}  // namespace tpusim::sim
