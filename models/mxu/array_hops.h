#pragma once
// Operand movement inside a systolic array, for energy: how many elements a PE register latches
// from a neighbour or from the array's edge, by dataflow (models/mxu/README.md, "Register
// hops"). An operand crosses the whole register chain it enters, edge to edge, whatever part of
// the array its tile uses; lanes the tile leaves empty carry nothing. Stationary operands cost
// their trip down the load chain, partial sums their trip down the columns, and os results
// their trip up and out of the top edge; a value that stays in its PE (an os accumulator, a
// stationary plane) is not a hop. Pure C++: the cycle-level array counts the same latches.

#include <cstdint>

#include "isa/program.h"
#include "sim/base/spec/core_spec.h"

namespace tpusim::models {

// Elements latched, by the operand that moves: X (the matmul's M x K input), W (the K x N
// weights) and the M x N sums (partial sums, or os results on their way out).
struct ArrayHops {
  std::uint64_t inputs = 0, weights = 0, sums = 0;
};

// ws shifts the tile down all R rows into the PEs; is and os stage it beside the array, where
// it does not move between PEs until a matmul streams it.
ArrayHops load_hops(const MxuSpec& spec, const isa::MxuLoadWeights& lw);
ArrayHops matmul_hops(const MxuSpec& spec, const isa::MxuMatmul& mm);

}  // namespace tpusim::models
