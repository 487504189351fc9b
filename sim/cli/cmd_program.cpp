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

// The command's format is fixed; a name with the other format's extension would mislead `exec`'s
// readers and the next person to open the file.
void refuse_extension(const std::string& output, const char* wrong, const std::string& why) {
  if (std::filesystem::path(output).extension() == wrong) throw InputError(output + ": " + why);
}

}  // namespace

int run_asm(const AsmCommandArgs& args) {
  const std::string chip_path = args.chip.empty() ? "" : resolve_chip_path(args.chip);
  const std::vector<std::string> inputs = {args.input, chip_path};
  check_output_files({args.output}, inputs);  // an input named as output: the first thing to say
  refuse_extension(args.output, ".tasm", "asm writes a binary program: name it .tbin, not .tasm");
  return replacing_output(args.output, inputs, [&] {
    const isa::Program program = isa::read_program_file(args.input);
    if (!args.chip.empty()) {
      const config::ChipConfig chip = config::load_chip_config(chip_path, args.overrides);
      isa::check(program, chip.spec);
    }
    isa::write_binary_file(program, args.output);
    return kExitOk;
  });
}

int run_disasm(const DisasmCommandArgs& args) {
  check_output_files({args.output}, {args.input});
  refuse_extension(args.output, ".tbin", "disasm writes program text: name it .tasm, not .tbin");
  return replacing_output(args.output, {args.input}, [&] {
    const std::string text = isa::disassemble(isa::read_program_file(args.input));
    if (args.output.empty())
      std::cout << text;
    else
      write_file(args.output, text);
    return kExitOk;
  });
}

}  // namespace tpusim::sim
