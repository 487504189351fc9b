#pragma once
// The .tasm assembler: text -> Program. Syntax and semantics: isa/README.md.
// Errors are AsmError at file:line:col naming the offending token and what was expected.
// The assembler knows no chip; check() (isa/checker.h) validates a Program against one.

#include <cstdint>
#include <string>
#include <string_view>

#include "isa/program.h"

namespace tpusim::isa {

// `file_name` is used in error messages and stored in the Program.
Program assemble_text(std::string_view text, const std::string& file_name);

// Reads and assembles a file; an unreadable file is an AsmError naming it.
// The largest program file read: 16 M instructions as .tbin (the lowering's limit) fit in 2 GiB.
// A device or a pipe is cut off at 64 MiB, so /dev/zero is refused in a moment.
std::uint64_t max_program_file_bytes(const std::string& path);

Program assemble_file(const std::string& path);

}  // namespace tpusim::isa
