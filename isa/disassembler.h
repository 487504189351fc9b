#pragma once
// Program -> .tasm text that assemble_text() turns back into the identical binary.
// Addresses print as region names where a region covers them (the first declared one, when
// regions overlap), else with a space prefix (vmem:0x100). Operands equal to their defaults
// (dense strides, wait count 1, zp 0) are left out.

#include <string>

#include "isa/program.h"

namespace tpusim::isa {

std::string disassemble(const Program& program);

}  // namespace tpusim::isa
