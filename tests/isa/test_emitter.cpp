// The lowering's DMA emitter: a transfer whose run, count or stride does not fit the
// instruction's 32-bit fields (tensors of 4 GiB and more) becomes several instructions that move
// exactly the same bytes between the same addresses.

#include <algorithm>
#include <tuple>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "isa/lower/emitter.h"
#include "tests/isa/isa_test_support.h"

using namespace tpusim;
using isa::lower_detail::distribute;
using isa::lower_detail::Emitter;
using isa::lower_detail::Transfer;

namespace {

using Run = std::tuple<std::uint64_t, std::uint64_t, std::uint64_t>;  // src, dst, bytes

// Every contiguous run a transfer describes, by walking its dimensions.
void walk(const std::vector<std::uint64_t>& count, const std::vector<std::uint64_t>& src_stride,
          const std::vector<std::uint64_t>& dst_stride, std::size_t dim, std::uint64_t src,
          std::uint64_t dst, std::uint64_t elem, std::vector<Run>& out) {
  if (dim == count.size()) {
    out.emplace_back(src, dst, elem);
    return;
  }
  for (std::uint64_t i = 0; i < count[dim]; ++i)
    walk(count, src_stride, dst_stride, dim + 1, src + i * src_stride[dim],
         dst + i * dst_stride[dim], elem, out);
}

std::vector<Run> runs_of(const Transfer& t) {
  std::vector<Run> out;
  walk(t.count, t.src_stride, t.dst_stride, 0, t.src.addr, t.dst.addr, t.elem, out);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<Run> runs_of(const isa::Program& program) {
  std::vector<Run> out;
  for (const isa::Instruction& inst : program.instructions) {
    const auto& d = std::get<isa::DmaInstr>(inst.body);
    std::vector<std::uint64_t> count, src_stride, dst_stride;
    for (std::size_t i = 0; i < d.dims; ++i) {
      count.push_back(d.count[i]);
      src_stride.push_back(d.src_stride[i]);
      dst_stride.push_back(d.dst_stride[i]);
    }
    walk(count, src_stride, dst_stride, 0, d.src.addr, d.dst.addr, d.elem_bytes, out);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Every (source byte, destination byte) pair a list of runs moves, so that transfers cut or
// merged differently compare equal when they move the same bytes to the same places.
std::vector<std::pair<std::uint64_t, std::uint64_t>> bytes_moved(const std::vector<Run>& runs) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
  for (const auto& [src, dst, bytes] : runs)
    for (std::uint64_t i = 0; i < bytes; ++i) out.emplace_back(src + i, dst + i);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("lower: DMA strides and counts beyond 32 bits split into instructions, not truncate",
          "[isa][lower]") {
  const ChipSpec chip = isa::test::chip_128();
  constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;
  SECTION("a 4 GiB source stride: one instruction per step of that dimension") {
    // The transpose of an fp32 [2, 2^30] tensor reads column i as two elements 4 GiB apart.
    Transfer t{false, {isa::Space::kHbm, 64}, {isa::Space::kVmem, 0}, 4, {8, 2}, {4, 4 * kGiB},
               {8, 4}};
    Emitter e(chip);
    e.begin_op("transpose", "t");
    e.dma(0, t);
    CHECK(e.program().instructions.size() == 2);
    CHECK(runs_of(e.program()) == runs_of(t));
  }
  SECTION("a count of 2^32 + 3 in runs of at most 2^31") {
    Transfer t{false, {isa::Space::kHbm, 0}, {isa::Space::kVmem, 0}, 1, {(4 * kGiB) + 3, 2}, {2, 1},
               {0, 0}};
    Emitter e(chip);
    e.begin_op("gather", "g");
    e.dma(0, t);
    std::uint64_t elements = 0;
    for (const isa::Instruction& inst : e.program().instructions) {
      const auto& d = std::get<isa::DmaInstr>(inst.body);
      elements += std::uint64_t{d.count[0]} * (d.dims > 1 ? d.count[1] : 1);
      CHECK(d.count[0] <= (std::uint64_t{1} << 31));
    }
    CHECK(elements == 2 * ((4 * kGiB) + 3));
    CHECK(e.program().instructions.size() == 3);
  }
  SECTION("a contiguous run of 5 GiB in pieces of at most 2 GiB") {
    const Transfer t{true, {isa::Space::kVmem, 0}, {isa::Space::kHbm, 128}, 5 * kGiB, {1}, {0},
                     {0}};
    Emitter e(chip);
    e.begin_op("copy", "c");
    e.dma(0, t);
    REQUIRE(e.program().instructions.size() == 3);
    std::uint64_t next = 0;
    for (const isa::Instruction& inst : e.program().instructions) {
      const auto& d = std::get<isa::DmaInstr>(inst.body);
      CHECK(d.src.addr == next);
      CHECK(d.dst.addr == 128 + next);
      next += d.total_bytes();
    }
    CHECK(next == 5 * kGiB);
  }
}

TEST_CASE("lower: a group's small transfers of one shape become one strided descriptor",
          "[isa][lower]") {
  const ChipSpec chip = isa::test::chip_128();
  const std::uint32_t engines = chip.core.dma.engines;
  const std::uint64_t chunk = chip.core.dma.chunk.value();
  constexpr std::uint64_t kSplit = 16 * 1024;
  REQUIRE(chunk >= 256);  // each 256 B run below is one chunk issue
  Emitter e(chip);
  e.begin_op("matmul", "attention scores");
  SECTION("per-item loads of a decode step's attention") {
    // Twelve heads: each head's query row (128 B, the heads contiguous in HBM and in vmem) and
    // its 8 x 128 key slice (rows of 256 B, 2050 B apart in HBM, each head's slice 8 rows
    // further), interleaved as the GEMM emits them per batch item.
    std::vector<Transfer> xfers;
    std::vector<Run> expected;
    for (std::uint64_t h = 0; h < 12; ++h) {
      xfers.push_back(Transfer{false,
                               {isa::Space::kHbm, 0x1000 + h * 128},
                               {isa::Space::kVmem, h * 128},
                               128,
                               {1},
                               {128},
                               {128}});
      xfers.push_back(Transfer{false,
                               {isa::Space::kHbm, 0x100000 + h * 8 * 2050},
                               {isa::Space::kVmem, 0x8000 + h * 2048},
                               256,
                               {8},
                               {2050},
                               {256}});
      for (const Transfer& t : {xfers[xfers.size() - 2], xfers.back()})
        for (const Run& r : runs_of(t)) expected.push_back(r);
    }
    distribute(e, xfers, kSplit, engines);
    CHECK(bytes_moved(runs_of(e.program())) == bytes_moved(expected));
    // The queries are one 1,536 B run: one instruction. The keys are one [12 x 8] descriptor of
    // 24 KiB and 96 chunk issues, cut along the heads into min(heads, engines, 96 / (16 KiB /
    // chunk)) parts; 24 instructions before.
    const std::uint64_t key_parts =
        std::min<std::uint64_t>({12, engines, std::max<std::uint64_t>(1, 96 / (kSplit / chunk))});
    CHECK(e.program().instructions.size() == 1 + key_parts);
    // The heads split evenly over the engines.
    std::vector<std::uint64_t> key_bytes(engines, 0);
    for (const isa::Instruction& inst : e.program().instructions) {
      const auto& d = std::get<isa::DmaInstr>(inst.body);
      if (d.src.addr >= 0x100000) key_bytes[d.engine] += d.total_bytes();
    }
    for (std::uint32_t g = 0; g < engines && g < key_parts; ++g)
      CHECK(key_bytes[g] == 12 * 8 * 256 / key_parts);
  }
  SECTION("transfers of the split size are cut as before, never merged into coarser pieces") {
    // Two contiguous 16 KiB runs one after the other: merging them would put 32 KiB in one
    // piece, and a 16 KiB transfer is already one engine's piece.
    const std::vector<Transfer> xfers = {
        Transfer{false, {isa::Space::kHbm, 0}, {isa::Space::kVmem, 0}, kSplit, {1}, {0}, {0}},
        Transfer{
            false, {isa::Space::kHbm, kSplit}, {isa::Space::kVmem, kSplit}, kSplit, {1}, {0}, {0}}};
    distribute(e, xfers, kSplit, engines);
    REQUIRE(e.program().instructions.size() == 2);
    for (const isa::Instruction& inst : e.program().instructions)
      CHECK(std::get<isa::DmaInstr>(inst.body).total_bytes() == kSplit);
  }
}

TEST_CASE("lower: a run of large items is one descriptor per engine when that is as balanced",
          "[isa][lower]") {
  ChipSpec chip = isa::test::chip_128();
  chip.core.dma.engines = 4;
  const std::uint64_t chunk = chip.core.dma.chunk.value();
  constexpr std::uint64_t kSplit = 16 * 1024;
  // Each item is one head's 64 x 128 key slice: 64 rows of 256 B, 2050 B apart in HBM, 16 KiB
  // and 64 chunk issues, so each alone is cut in two (64 / (16 KiB / chunk) pieces).
  REQUIRE(chunk == 512);
  const auto heads = [&](std::uint64_t n) {
    std::vector<Transfer> xfers;
    for (std::uint64_t h = 0; h < n; ++h)
      xfers.push_back(Transfer{false,
                               {isa::Space::kHbm, 0x100000 + h * 64 * 2050},
                               {isa::Space::kVmem, h * kSplit},
                               256,
                               {64},
                               {2050},
                               {256}});
    return xfers;
  };
  const auto per_engine = [](const Emitter& e, std::uint32_t engines) {
    std::vector<std::uint64_t> bytes(engines, 0), instructions(engines, 0);
    for (const isa::Instruction& inst : e.program().instructions) {
      const auto& d = std::get<isa::DmaInstr>(inst.body);
      bytes[d.engine] += d.total_bytes();
      ++instructions[d.engine];
    }
    return std::pair{bytes, instructions};
  };
  SECTION("twelve heads over four engines: three heads in one descriptor each") {
    Emitter e(chip);
    e.begin_op("matmul", "attention scores");
    const std::vector<Transfer> xfers = heads(12);
    std::vector<Run> expected;
    for (const Transfer& t : xfers)
      for (const Run& r : runs_of(t)) expected.push_back(r);
    distribute(e, xfers, kSplit, 4);
    CHECK(bytes_moved(runs_of(e.program())) == bytes_moved(expected));
    // Cut apart: 24 half heads, six instructions an engine. Whole: 12 / 4 heads an engine in one.
    const auto [bytes, instructions] = per_engine(e, 4);
    for (std::uint32_t g = 0; g < 4; ++g) {
      CHECK(bytes[g] == 3 * kSplit);
      CHECK(instructions[g] == 1);
    }
  }
  SECTION("two heads over four engines stay cut in halves, one on each engine") {
    // Whole, the run could go to two engines only (one head each); apart, each head's two
    // halves use all four.
    Emitter e(chip);
    e.begin_op("matmul", "attention scores");
    distribute(e, heads(2), kSplit, 4);
    const auto [bytes, instructions] = per_engine(e, 4);
    for (std::uint32_t g = 0; g < 4; ++g) {
      CHECK(bytes[g] == kSplit / 2);
      CHECK(instructions[g] == 1);
    }
  }
}
