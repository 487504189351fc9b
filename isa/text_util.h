#pragma once
// Small helpers shared by the assembler and the disassembler (internal to isa/).

#include <cstdint>
#include <string>

#include "isa/program.h"

namespace tpusim::isa {

// Default (dense) byte strides, outermost first, for a DMA side with `dims` counts and
// contiguous runs of elem_bytes: stride[dims-1] = elem_bytes, stride[i] = stride[i+1] *
// count[i+1]. Returns false when a default stride exceeds 32 bits.
bool dense_dma_strides(std::uint32_t elem_bytes, std::uint8_t dims,
                       const std::array<std::uint32_t, kMaxDmaDims>& count,
                       std::array<std::uint32_t, kMaxDmaDims>* stride);

// The shortest decimal text that reads back as exactly `v` (v finite).
std::string float_text(float v);

// Decimal below 1024, lower-case 0x hex from there: addresses and sizes read best in hex.
std::string number_text(std::uint64_t v);

}  // namespace tpusim::isa
