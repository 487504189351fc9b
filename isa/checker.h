#pragma once
// The program checker: what the simulator runs before executing a program on a chip.
//
// check() throws AsmError at the first broken rule, naming the instruction (file:line:col for
// text programs, "instruction #i" otherwise) or the region. Rules (isa/README.md, "Checker"):
//  - core < cores; operator id in the table; DMA engine, MXU and semaphore indices exist;
//  - every byte an operand touches lies inside its memory (for strided operands the whole
//    extent: base + sum((count_i - 1) * stride_i) + run bytes); cmem only when present; every
//    declared region inside its memory;
//  - MXU: dtype in core.mxu.precisions or core.mxu.rounding, 1 <= k <= rows, 1 <= n <= cols,
//    and each mxu.mm matches the k, n, dtype of the last mxu.lw on its MXU; nothing is empty
//    (counts, m, rows, cols >= 1);
//  - destinations with more than one row have a stride of at least one row (rows never overlap);
//  - VPU dtype rules (transcendentals on floats, requantize from int32/fp32 to int8/int16/fp8
//    with scale > 0, reduce_sum into its own or its accumulator type);
//  - sync: wait counts >= 1; per core and semaphore, total signals >= total waited counts;
//    every core that runs instructions runs the same number of barriers; nothing after halt;
//    and an abstract run of the queues (instant units, queue depth core.sequencer.queue_depth)
//    finishes, so no wait can block forever.

#include "isa/program.h"
#include "sim/base/spec/chip_spec.h"

namespace tpusim::isa {

void check(const Program& program, const ChipSpec& chip);

}  // namespace tpusim::isa
