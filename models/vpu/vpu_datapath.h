#pragma once
// The values a vector instruction computes (functional mode). Floating ops compute in fp32 and
// round to the destination type; integer add/sub/mul wrap to the destination width; conversions
// to integers (cast, requantize, transcendental ops on integers) round half to even and
// saturate. requantize: saturate(round_half_even(a * scale) + zero_point). gelu is the tanh
// form 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), as the graph format defines it.
// Reductions combine a row left to right.

#include <cstdint>

#include "isa/program.h"

namespace tpusim::models {

// `memory(space)` gives the byte array of an on-chip space.
struct VpuMemories {
  std::uint8_t* vmem = nullptr;
  std::uint8_t* accmem = nullptr;
  std::uint8_t* of(isa::Space s) const { return s == isa::Space::kAccmem ? accmem : vmem; }
};

void vpu_compute(const isa::VectorInstr& v, const VpuMemories& memories);

}  // namespace tpusim::models
