#pragma once
// Register writes inside a systolic array, for energy: how many elements PE registers latch, by
// dataflow (models/mxu/README.md, section 10). A moving operand is latched once per PE it
// crosses, edge to edge along its whole chain, whatever part of the array its tile uses; a sum
// once per PE it passes (ws, is: every row of its column) or is added in (os: every MAC), and an
// os result once per register on its way up and out. Lanes a tile leaves empty are taken to be
// gated and latch nothing. A stationary operand costs only its trip down the load chain; reading
// it at each MAC is part of the MAC. Pure C++: the cycle-level array counts the same latches.

#include <cstdint>

#include "isa/program.h"
#include "sim/base/spec/core_spec.h"

namespace tpusim::models {

// Elements latched, by the data: X (the matmul's M x K input), W (the K x N weights) and the
// M x N sums (partial sums, os accumulators and results).
struct ArrayLatches {
  std::uint64_t inputs = 0, weights = 0, sums = 0;
};

// ws shifts the tile down all R rows into the PEs; is and os stage it beside the array, where
// no PE register holds it until a matmul streams it.
ArrayLatches load_latches(const MxuSpec& spec, const isa::MxuLoadWeights& lw);
ArrayLatches matmul_latches(const MxuSpec& spec, const isa::MxuMatmul& mm);

}  // namespace tpusim::models
