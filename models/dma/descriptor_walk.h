#pragma once
// Walks a DMA descriptor (up to 4-D, strided on both sides) as contiguous runs, merging
// neighbours that are contiguous on both sides, so a dense copy is one run however it is written.

#include <algorithm>
#include <array>
#include <cstdint>

#include "isa/program.h"

namespace tpusim::models {

struct DmaRun {
  std::uint64_t src = 0;
  std::uint64_t dst = 0;
  std::uint64_t bytes = 0;
};

// Bytes the descriptor's source spans from its first byte (the checker has kept it in range).
inline std::uint64_t source_span(const isa::DmaInstr& d) {
  std::uint64_t span = d.elem_bytes;
  for (std::uint32_t k = 0; k < d.dims; ++k)
    span += std::uint64_t{d.count[k] - 1u} * d.src_stride[k];
  return span;
}

// Calls f(run) for each maximal contiguous run, in row-major order of the descriptor.
template <class F>
void for_each_run(const isa::DmaInstr& d, F&& f) {
  const std::uint32_t dims = std::max<std::uint32_t>(1, d.dims);
  std::array<std::uint32_t, isa::kMaxDmaDims> index{};
  DmaRun pending{d.src.addr, d.dst.addr, 0};
  for (;;) {
    std::uint64_t src = d.src.addr, dst = d.dst.addr;
    for (std::uint32_t k = 0; k < dims; ++k) {
      src += std::uint64_t{index[k]} * d.src_stride[k];
      dst += std::uint64_t{index[k]} * d.dst_stride[k];
    }
    if (pending.bytes > 0 && src == pending.src + pending.bytes &&
        dst == pending.dst + pending.bytes) {
      pending.bytes += d.elem_bytes;
    } else {
      if (pending.bytes > 0) f(pending);
      pending = {src, dst, d.elem_bytes};
    }
    // Advance the index tuple, innermost dimension fastest.
    std::int32_t k = static_cast<std::int32_t>(dims) - 1;
    for (; k >= 0; --k) {
      if (++index[k] < d.count[k]) break;
      index[k] = 0;
    }
    if (k < 0) break;
  }
  if (pending.bytes > 0) f(pending);
}

}  // namespace tpusim::models
