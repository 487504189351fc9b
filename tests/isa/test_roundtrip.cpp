#include <catch2/catch.hpp>

#include <cfloat>
#include <climits>
#include <limits>

#include "isa/binary.h"
#include "isa/disassembler.h"
#include "isa_test_support.h"

using namespace tpusim;
using namespace tpusim::isa;

namespace {

constexpr std::uint64_t kMaxAddr = ~std::uint64_t{0};
constexpr std::uint32_t kMax32 = UINT32_MAX;

Program base_program() {
  Program p;
  p.file_name = "gen";
  p.ops = {{0, "matmul", "first op"}, {1, "conv2d", "layer.1/conv (3x3)"}, {2, "x", ""}};
  // Regions at both ends of the address space, so symbolic and raw addresses both appear.
  p.regions = {{"low", Space::kVmem, 0, 4096, 0},
               {"top", Space::kHbm, kMaxAddr, 1, 0},
               {"all_acc", Space::kAccmem, 0, kMaxAddr, 0}};
  return p;
}

Instruction make(InstrBody body, std::uint16_t core = 65535, std::uint32_t op = 2) {
  Instruction i;
  i.core = core;
  i.op = op;
  i.body = std::move(body);
  return i;
}

// encode -> decode -> disassemble -> assemble -> encode must reproduce the bytes exactly.
void require_round_trip(const Program& p) {
  std::vector<std::uint8_t> bytes = encode(p);
  Program decoded = decode(bytes, "gen.tbin");
  REQUIRE(encode(decoded) == bytes);
  std::string text = disassemble(decoded);
  INFO(text);
  Program again = assemble_text(text, "gen.tasm");
  REQUIRE(encode(again) == bytes);
  REQUIRE(disassemble(again).substr(text.find('\n')) == text.substr(text.find('\n')));
}

std::vector<Instruction> dma_cases() {
  std::vector<Instruction> out;
  const std::pair<Space, Space> loads[] = {{Space::kHbm, Space::kVmem},
                                           {Space::kHbm, Space::kAccmem},
                                           {Space::kHbm, Space::kCmem},
                                           {Space::kCmem, Space::kVmem},
                                           {Space::kCmem, Space::kAccmem}};
  for (auto [from, to] : loads) {
    for (std::uint8_t dims = 1; dims <= kMaxDmaDims; ++dims) {
      for (bool store : {false, true}) {
        DmaInstr d;
        d.store = store;
        d.engine = 255;
        d.src = Address{store ? to : from, kMaxAddr};
        d.dst = Address{store ? from : to, kMaxAddr - dims};
        d.elem_bytes = kMax32;
        d.dims = dims;
        for (std::size_t k = 0; k < dims; ++k) {
          d.count[k] = kMax32;
          d.src_stride[k] = kMax32;
          d.dst_stride[k] = static_cast<std::uint32_t>(k);  // 0 included: broadcast writes
        }
        out.push_back(make(d));
      }
    }
  }
  // Dense descriptors print without strides; a 1-element 1-D copy prints without count.
  DmaInstr dense;
  dense.src = Address{Space::kHbm, 0};
  dense.dst = Address{Space::kVmem, 16};
  dense.elem_bytes = 2;
  dense.dims = 3;
  dense.count = {4, 8, 16, 0};
  dense.src_stride = {256, 32, 2, 0};
  dense.dst_stride = {256, 32, 2, 0};
  out.push_back(make(dense, 0, 0));
  DmaInstr one;
  one.src = Address{Space::kHbm, 0};
  one.dst = Address{Space::kVmem, 0};
  one.count = {1, 0, 0, 0};
  one.src_stride = {0, 0, 0, 0};
  one.dst_stride = {0, 0, 0, 0};
  out.push_back(make(one, 0, 0));
  return out;
}

}  // namespace

TEST_CASE("roundtrip: load and store with extreme descriptors in every direction",
          "[isa][roundtrip]") {
  Program p = base_program();
  p.instructions = dma_cases();
  REQUIRE(p.instructions.size() == 5 * 4 * 2 + 2);
  require_round_trip(p);
}

TEST_CASE("roundtrip: mxu.lw and mxu.mm with every dtype and extreme shapes", "[isa][roundtrip]") {
  Program p = base_program();
  for (DType t : kAllDTypes) {
    for (bool flag : {false, true}) {
      MxuLoadWeights w{255, t, kMax32, kMax32, Address{Space::kVmem, kMaxAddr}, kMax32, flag};
      p.instructions.push_back(make(w));
      MxuLoadWeights small{0, t, 1, 1, Address{Space::kVmem, 0}, 0, flag};
      p.instructions.push_back(make(small, 0, 0));
      MxuMatmul m{255,    t,
                  kMax32, kMax32,
                  kMax32, Address{Space::kVmem, kMaxAddr},
                  kMax32, Address{Space::kAccmem, kMaxAddr},
                  kMax32, flag};
      p.instructions.push_back(make(m));
      // Strides equal to the dense default are left out of the text and must come back.
      MxuMatmul dense{1,
                      t,
                      3,
                      5,
                      7,
                      Address{Space::kVmem, 8},
                      5 * dtype_bytes(t),
                      Address{Space::kAccmem, 0},
                      7 * dtype_bytes(accumulator_dtype(t)),
                      flag};
      p.instructions.push_back(make(dense, 1, 1));
    }
  }
  require_round_trip(p);
}

TEST_CASE("roundtrip: every vector op with every dtype and extreme operands", "[isa][roundtrip]") {
  Program p = base_program();
  for (std::size_t o = 0; o < kNumVectorOps; ++o) {
    auto op = static_cast<VectorOp>(o);
    for (DType t : kAllDTypes) {
      for (DType from : kAllDTypes) {
        if (!vector_op_converts(op) && from != t) continue;
        VectorInstr v;
        v.op = op;
        v.dtype = t;
        v.src_dtype = from;
        v.rows = kMax32;
        v.cols = kMax32;
        v.dst = {Address{Space::kAccmem, kMaxAddr}, kMax32};
        v.a = {Address{Space::kVmem, kMaxAddr}, 0};
        if (vector_arity(op) == VectorArity::kBinary) v.b = {Address{Space::kVmem, 4095}, 1};
        if (op == VectorOp::kRequantize) {
          v.scale = -FLT_MAX;
          v.zero_point = INT32_MIN;
        }
        p.instructions.push_back(make(v));
      }
    }
  }
  require_round_trip(p);
}

TEST_CASE("roundtrip: requantize scales and zero points survive text exactly", "[isa][roundtrip]") {
  Program p = base_program();
  const float scales[] = {FLT_MAX, -FLT_MAX,     FLT_MIN, std::numeric_limits<float>::denorm_min(),
                          -0.0f,   0.0f,         0.1f,    1.0f / 3.0f,
                          1e-30f,  123456792.0f, 0.0625f};
  const std::int32_t zps[] = {INT32_MIN, INT32_MAX, 0, -1, 1};
  for (float s : scales) {
    for (std::int32_t zp : zps) {
      VectorInstr v;
      v.op = VectorOp::kRequantize;
      v.dtype = DType::kInt8;
      v.src_dtype = DType::kInt32;
      v.rows = 2;
      v.cols = 3;
      v.dst = {Address{Space::kVmem, 0}, 3};
      v.a = {Address{Space::kAccmem, 0}, 12};
      v.scale = s;
      v.zero_point = zp;
      p.instructions.push_back(make(v, 0, 0));
    }
  }
  require_round_trip(p);
}

TEST_CASE("roundtrip: semaphores on every unit, barrier and halt", "[isa][roundtrip]") {
  Program p = base_program();
  const Unit units[] = {{UnitKind::kSeq, 0},   {UnitKind::kVpu, 0}, {UnitKind::kDma, 0},
                        {UnitKind::kDma, 255}, {UnitKind::kMxu, 0}, {UnitKind::kMxu, 255}};
  for (Unit u : units) {
    for (std::uint16_t sem : {std::uint16_t{0}, std::uint16_t{65535}}) {
      p.instructions.push_back(make(SemSignal{u, sem}));
      p.instructions.push_back(make(SemSignal{u, sem, true}));
      for (std::uint32_t count : {0u, 1u, 2u, kMax32})
        p.instructions.push_back(make(SemWait{u, sem, count}));
    }
  }
  p.instructions.push_back(make(Barrier{}, 0, 0));
  p.instructions.push_back(make(Barrier{}, 65535, 1));
  p.instructions.push_back(make(Halt{}, 7, 2));
  require_round_trip(p);
}

TEST_CASE("roundtrip: a program with no ops, regions or instructions", "[isa][roundtrip]") {
  Program p;
  require_round_trip(p);
  CHECK(encode(p).size() == kFileHeaderBytes);
}

TEST_CASE("roundtrip: extreme values written by hand assemble to the same bytes",
          "[isa][roundtrip]") {
  const char* text = R"(
.op 0 k "n"
.core 65535
load dma255 dst=vmem:0xffffffffffffffff src=hbm:18446744073709551615 elem=4294967295 count=[4294967295,1,2,3] src_stride=[4294967295,0,0,0] dst_stride=[1,2,3,4]
mxu.mm mxu255 src=vmem:0 dst=accmem:0xFFFFFFFFFFFFFFFF m=0xffffffff k=1 n=1 dtype=fp8 accumulate
vpu.requantize dtype=int8 from=fp32 shape=[1,1] dst=vmem:0 a=accmem:0 scale=3.40282347e+38 zp=-2147483648
sem.wait seq s65535 4294967295
)";
  Program p = test::assemble(text);
  require_round_trip(p);
  const auto& d = std::get<DmaInstr>(p.instructions[0].body);
  CHECK(d.engine == 255);
  CHECK(d.src.addr == kMaxAddr);
  CHECK(d.dst.addr == kMaxAddr);
  CHECK(d.count[0] == kMax32);
  CHECK(p.instructions[0].core == 65535);
  CHECK(std::get<VectorInstr>(p.instructions[2].body).scale == FLT_MAX);
  CHECK(std::get<VectorInstr>(p.instructions[2].body).zero_point == INT32_MIN);
}
