#pragma once
// The .tasm assembler: text -> Program. Syntax and semantics: isa/README.md.
// Errors are AsmError at file:line:col naming the offending token and what was expected.
// The assembler knows no chip; check() (isa/checker.h) validates a Program against one.

#include <string>
#include <string_view>

#include "isa/program.h"

namespace tpusim::isa {

// `file_name` is used in error messages and stored in the Program.
Program assemble_text(std::string_view text, const std::string& file_name);

// Reads and assembles a file; an unreadable file is an AsmError naming it.
Program assemble_file(const std::string& path);

}  // namespace tpusim::isa
