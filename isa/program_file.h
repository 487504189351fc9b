#pragma once
// Reading and writing program files for the CLI and the simulator.

#include <string>

#include "isa/program.h"

namespace tpusim::isa {

// A .tbin (recognised by its magic, or by the .tbin extension) is decoded; anything else is
// assembled as .tasm text. Errors are AsmError (file:line:col or file: byte 0x..).
Program read_program_file(const std::string& path);

// Encodes and writes `program` to `path` through a temporary file in the same directory that
// is renamed over `path`, so a failure leaves either the old file or none, never half of one.
void write_binary_file(const Program& program, const std::string& path);

}  // namespace tpusim::isa
