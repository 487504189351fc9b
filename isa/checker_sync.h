#pragma once
// Internal to the checker: the synchronisation rules (semaphore totals, barrier counts, and
// the abstract run that finds waits that can never be released).

#include <string>

#include "isa/program.h"
#include "sim/base/spec/chip_spec.h"

namespace tpusim::isa {

// "line 12" for text programs, "instruction #12" otherwise: a short reference to another
// instruction inside an error message.
std::string instruction_place(const Program& p, std::size_t index);

// Assumes every instruction already passed the per-instruction checks (units and semaphores
// exist, nothing after halt).
void check_sync(const Program& p, const ChipSpec& chip);

}  // namespace tpusim::isa
