#pragma once
// Helpers shared by the isa tests: chips built in the test, and error capture.

#include <string>

#include "isa/assembler.h"
#include "sim/base/errors.h"
#include "sim/base/spec/chip_spec.h"

namespace tpusim::isa::test {

// The message of the AsmError `f` throws, or "<no error>" / "<other exception: ...>".
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const AsmError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("<other exception: ") + e.what() + ">";
  }
  return "<no error>";
}

// A TPUv4i-like core: 128x128 bf16 MXUs, 16 MiB vmem, 4 MiB accmem, 2 DMA engines.
inline ChipSpec chip_128(std::uint32_t mxus = 1) {
  ChipSpec c;
  c.cores = 1;
  c.core.mxu.count = mxus;
  c.core.mxu.rows = 128;
  c.core.mxu.cols = 128;
  c.core.mxu.precisions = {{DType::kBf16, 1.0}};
  c.core.vmem.capacity = Bytes(16 * kMiB);
  c.core.accmem.capacity = Bytes(4 * kMiB);
  c.core.cmem.capacity = Bytes(0);
  c.core.dma.engines = 2;
  c.core.sequencer.semaphores = 32;
  c.core.sequencer.queue_depth = 16;
  c.memory.capacity = Bytes(8 * kGiB);
  return c;
}

// The teaching chip: one 4x4 int8 MXU, tiny memories.
inline ChipSpec chip_4x4() {
  ChipSpec c;
  c.cores = 1;
  c.core.mxu.count = 1;
  c.core.mxu.rows = 4;
  c.core.mxu.cols = 4;
  c.core.mxu.precisions = {{DType::kInt8, 1.0}};
  c.core.vmem.capacity = Bytes(1 * kKiB);
  c.core.accmem.capacity = Bytes(1 * kKiB);
  c.core.dma.engines = 1;
  c.core.sequencer.semaphores = 4;
  c.memory.capacity = Bytes(1 * kMiB);
  return c;
}

inline Program assemble(const std::string& text) { return assemble_text(text, "t.tasm"); }

}  // namespace tpusim::isa::test
