// Operator overlap (isa/lower/README.md): what an operator's DMA touches in memories operators
// share decides where the next one, started beside it, must wait. Activations kept in vmem
// (compiler.activations) are shared data too, and vmem addresses are not HBM addresses.

#include <catch2/catch.hpp>

#include "isa/lower/overlap.h"

using namespace tpusim::isa;
using namespace tpusim::isa::lower_detail;

namespace {

Instruction dma(bool store, Address src, Address dst, std::uint32_t bytes) {
  DmaInstr d;
  d.store = store;
  d.src = src;
  d.dst = dst;
  d.elem_bytes = bytes;
  d.dims = 1;
  d.count = {1, 0, 0, 0};
  d.src_stride = {bytes, 0, 0, 0};
  d.dst_stride = {bytes, 0, 0, 0};
  Instruction i;
  i.body = d;
  return i;
}

constexpr std::uint64_t kKept = 1 << 20;  // the kept activation, in vmem and (by number) in HBM
constexpr std::uint32_t kTile = 4096;

}  // namespace

TEST_CASE("overlap: a kept activation in vmem orders operators, its number in HBM does not",
          "[isa][lower][overlap]") {
  Program p;
  // The running operator: loads an input from HBM into its buffer at vmem 0 and stores its result
  // into the kept region.
  p.instructions.push_back(dma(false, {Space::kHbm, 0}, {Space::kVmem, 0}, kTile));
  p.instructions.push_back(dma(true, {Space::kVmem, 0}, {Space::kVmem, kKept}, kTile));
  const SharedSpans running = shared_spans(p, 0, 2);
  // The next operator, in its own window at vmem 64 KiB.
  const Address own{Space::kVmem, 64 * 1024};
  p.instructions.push_back(dma(false, {Space::kHbm, kKept}, own, kTile));   // 2: HBM, same number
  p.instructions.push_back(dma(false, {Space::kVmem, kKept}, own, kTile));  // 3: reads the result
  p.instructions.push_back(dma(true, own, {Space::kVmem, 0}, kTile));       // 4: the buffer it read
  CHECK_FALSE(first_dependent(p, 2, 3, running).has_value());
  CHECK(first_dependent(p, 2, 4, running) == std::optional<std::size_t>(3));
  CHECK(first_dependent(p, 4, 5, running) == std::optional<std::size_t>(4));
  // Writing HBM where the running operator read (write after read) waits as before.
  p.instructions.push_back(dma(true, own, {Space::kHbm, 0}, kTile));  // 5
  CHECK(first_dependent(p, 5, 6, running) == std::optional<std::size_t>(5));
}
