// The lowering's DMA emitter: a transfer whose run, count or stride does not fit the
// instruction's 32-bit fields (tensors of 4 GiB and more) becomes several instructions that move
// exactly the same bytes between the same addresses.

#include <algorithm>
#include <tuple>
#include <vector>

#include <catch2/catch.hpp>

#include "isa/lower/emitter.h"
#include "tests/isa/isa_test_support.h"

using namespace tpusim;
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
