#include <catch2/catch.hpp>

#include "isa/lexer.h"
#include "isa_test_support.h"

using namespace tpusim;
using namespace tpusim::isa;
using test::error_of;

namespace {

const std::string kHead = ".region a vmem 0 0x1000\n.region H hbm 0 0x10000\n.op 0 matmul \"m\"\n";

// Assembles kHead + `line` (so the line under test is line 4) and returns the error.
std::string err(const std::string& line) {
  return error_of([&] { test::assemble(kHead + line + "\n"); });
}

Instruction one(const std::string& line) {
  Program p = test::assemble(kHead + line + "\n");
  REQUIRE(p.instructions.size() == 1);
  return p.instructions[0];
}

}  // namespace

TEST_CASE("asm: tokens carry 1-based columns and comments end the line", "[isa][asm]") {
  auto t = tokenize_line("  load dma0 dst=a+4 ; comment", "f", 1);
  REQUIRE(t.size() == 7);
  CHECK(t[0].text == "load");
  CHECK(t[0].column == 3);
  CHECK(t[3].is('='));
  CHECK(t[6].text == "4");
  CHECK(tokenize_line("# only a comment", "f", 1).empty());
  CHECK(tokenize_line(".op 0 k \"a ; b\"", "f", 1)[3].text == "a ; b");
}

TEST_CASE("asm: directives make core and operator sticky", "[isa][asm]") {
  Program p = test::assemble(R"(
.op 0 matmul "a"
.op 1 relu "b"       ; declaring selects it
halt
.core 3
.op 0
barrier
)");
  REQUIRE(p.ops.size() == 2);
  CHECK(p.ops[1].kind == "relu");
  CHECK(p.ops[1].name == "b");
  REQUIRE(p.instructions.size() == 2);
  CHECK(p.instructions[0].core == 0);
  CHECK(p.instructions[0].op == 1);
  CHECK(p.instructions[0].line == 4);
  CHECK(p.instructions[1].core == 3);
  CHECK(p.instructions[1].op == 0);
}

TEST_CASE("asm: addresses from regions, offsets, constants and space prefixes", "[isa][asm]") {
  Program p = test::assemble(R"(
.const ROW 3*(4+4)
.const NEG -ROW
.region buf vmem 0x100 ROW*4
.op 0 matmul "m"
load dma1, dst=buf+ROW*2-1, src=hbm:0x10+NEG+ROW, elem=ROW, count=[2, ROW]
)");
  const auto& d = std::get<DmaInstr>(p.instructions[0].body);
  CHECK(d.engine == 1);
  CHECK(d.dst == Address{Space::kVmem, 0x100 + 47});
  CHECK(d.src == Address{Space::kHbm, 0x10});
  CHECK(d.elem_bytes == 24);
  CHECK(d.dims == 2);
  CHECK(d.count[1] == 24);
  // Dense default strides: innermost = elem, outer = elem * inner count.
  CHECK(d.src_stride[0] == 24 * 24);
  CHECK(d.src_stride[1] == 24);
  CHECK(d.dst_stride == d.src_stride);
}

TEST_CASE("asm: every mnemonic with its defaults", "[isa][asm]") {
  auto lw = std::get<MxuLoadWeights>(one("mxu.lw mxu1 src=a k=8 n=4 dtype=bf16 transpose").body);
  CHECK(lw.mxu == 1);
  CHECK(lw.transpose);
  CHECK(lw.src_stride == 8 * 2);  // transposed: memory rows hold K elements
  auto mm = std::get<MxuMatmul>(one("mxu.mm mxu0 src=a dst=accmem:64 m=2 k=8 n=4 dtype=int8").body);
  CHECK_FALSE(mm.accumulate);
  CHECK(mm.src_stride == 8);
  CHECK(mm.dst_stride == 4 * 4);  // int32 accumulators
  auto rq = std::get<VectorInstr>(
      one("vpu.requantize dtype=int8 from=int32 shape=[2,3] dst=a a=accmem:0 scale=0.5 zp=-7")
          .body);
  CHECK(rq.op == VectorOp::kRequantize);
  CHECK(rq.src_dtype == DType::kInt32);
  CHECK(rq.dst.stride == 3);
  CHECK(rq.a.stride == 12);
  CHECK(rq.scale == 0.5f);
  CHECK(rq.zero_point == -7);
  auto rs =
      std::get<VectorInstr>(one("vpu.reduce_sum dtype=fp32 from=bf16 shape=[2,8] dst=a a=a").body);
  CHECK(rs.dst.stride == 4);  // one fp32 per row
  CHECK(rs.a.stride == 16);
  auto bc = std::get<VectorInstr>(one("vpu.broadcast dtype=fp32 shape=[2,8] dst=a a=a").body);
  CHECK(bc.a.stride == 4);  // a is [rows, 1]
  auto add =
      std::get<VectorInstr>(one("vpu.add dtype=bf16 shape=[2,8] dst=a a=a b=a+16 b_stride=0").body);
  CHECK(add.b.stride == 0);  // a broadcast row
  auto w = std::get<SemWait>(one("sem.wait mxu2, s3").body);
  CHECK(w.unit == Unit{UnitKind::kMxu, 2});
  CHECK(w.count == 1);
  CHECK(std::get<SemWait>(one("sem.wait seq s0 count=5").body).count == 5);
  CHECK(std::get<SemSignal>(one("sem.signal vpu s31").body).sem == 31);
  CHECK_FALSE(std::get<SemSignal>(one("sem.signal vpu s31").body).reads);
  CHECK(std::get<SemSignal>(one("sem.signal mxu0 s3 reads").body).reads);
  CHECK(one("store dma0 dst=H src=a elem=4").opcode() == Opcode::kStore);
  CHECK(one("barrier").opcode() == Opcode::kBarrier);
  CHECK(one("halt").unit() == Unit{UnitKind::kSeq, 0});
}

TEST_CASE("asm: bad tokens name line and column", "[isa][asm][errors]") {
  CHECK(err("load dma0 @") == "t.tasm:4:11: unexpected character '@'");
  CHECK(err(".op 1 k \"open") == "t.tasm:4:9: unterminated string");
  CHECK(err("42 halt") == "t.tasm:4:1: expected a mnemonic or a directive, got '42'");
  CHECK(err("mxu.lw mxu0 src=a k=8x n=4 dtype=bf16") ==
        "t.tasm:4:21: expected an integer, got '8x'");
  CHECK(err("mxu.lw mxu0 src=a k=(8 n=4 dtype=bf16") == "t.tasm:4:21: unbalanced '('");
}

TEST_CASE("asm: unknown mnemonics and directives list what is expected", "[isa][asm][errors]") {
  CHECK(err("mxu.mul mxu0") ==
        "t.tasm:4:1: unknown mnemonic 'mxu.mul' (expected load, store, mxu.lw, mxu.mm, vpu.<op>, "
        "sem.signal, sem.wait, barrier or halt)");
  CHECK(err("  vpu.tanh dtype=fp32") ==
        "t.tasm:4:3: unknown mnemonic 'vpu.tanh' (expected load, store, mxu.lw, mxu.mm, vpu.<op>, "
        "sem.signal, sem.wait, barrier or halt)");
  CHECK(err(".org 0") ==
        "t.tasm:4:1: unknown directive '.org' (expected .core, .op, .region or .const)");
}

TEST_CASE("asm: missing, unknown and repeated operands", "[isa][asm][errors]") {
  CHECK(err("mxu.lw mxu0 src=a n=4 dtype=bf16") == "t.tasm:4:1: mxu.lw: missing operand k=");
  CHECK(err("load dma0 dst=a src=H") == "t.tasm:4:1: load: missing operand elem=");
  CHECK(err("sem.wait mxu0") == "t.tasm:4:1: sem.wait: missing operand sem=");
  CHECK(err("mxu.lw mxu0 src=a k=4 k=4") == "t.tasm:4:23: operand 'k' given twice");
  CHECK(err("mxu.lw mxu0 src=a q=4") ==
        "t.tasm:4:19: mxu.lw has no operand 'q' (expected: mxu, src, k, n, dtype, stride)");
  CHECK(err("halt now") == "t.tasm:4:6: unexpected operand 'now' (write key=value)");
  CHECK(err("mxu.lw mxu0 src=a k= n=4") == "t.tasm:4:19: missing value after '='");
  CHECK(err("sem.wait mxu0, s1,") == "t.tasm:4:18: expected an operand after ','");
  CHECK(err("vpu.add dtype=fp32 shape=[4,4] dst=a a=a b=a from=int8") ==
        "t.tasm:4:46: vpu.add has no operand 'from' (expected: dtype, shape, dst, a, dst_stride, "
        "a_stride, b, b_stride)");
  CHECK(err("mxu.mm mxu0 src=a dst=accmem:0 m=1 k=1 n=1 dtype=bf16 accumulate accumulate") ==
        "t.tasm:4:66: flag 'accumulate' given twice");
  // A directive's missing operand is reported at the directive, whatever the line before.
  CHECK(error_of([] {
          test::assemble(kHead + "        mxu.lw mxu0 src=a k=1 n=1 dtype=bf16\n.region r hbm 0\n");
        }) == "t.tasm:5:1: .region: missing operand size=");
  // An operator before the next key=value: the expression is cut short there.
  CHECK(err("load dma0 dst=a src=H+ elem=1") == "t.tasm:4:22: expected a term after '+'");
  // Operands join across + - *: the whole of one is quoted, not its first token.
  CHECK(err("sem.wait mxu0 s0 -1") ==
        "t.tasm:4:15: sem: expected a semaphore such as s0, got 's0 -1'");
}

TEST_CASE("asm: wrong operand kinds say what was expected", "[isa][asm][errors]") {
  CHECK(err("load mxu0 dst=a src=H elem=4") ==
        "t.tasm:4:6: engine: expected a DMA engine such as dma0, got 'mxu0'");
  CHECK(
      err("mxu.lw mxu0 src=a k=4 n=4 dtype=int4") ==
      "t.tasm:4:33: dtype: unknown dtype 'int4' (expected int8, int16, int32, bf16, fp32 or fp8)");
  CHECK(err("sem.signal dma0 t1") == "t.tasm:4:17: sem: expected a semaphore such as s0, got 't1'");
  CHECK(err("sem.signal dma0 s01") ==
        "t.tasm:4:17: sem: expected a semaphore such as s0, got 's01'");
  CHECK(err("vpu.relu dtype=fp32 shape=[4] dst=a a=a") ==
        "t.tasm:4:21: shape: expected 2 entries, got 1");
  CHECK(err("vpu.relu dtype=fp32 shape=4 dst=a a=a") ==
        "t.tasm:4:27: shape: expected a list like [4,128]");
  CHECK(err("vpu.requantize dtype=int8 from=int32 shape=[1,1] dst=a a=a scale=fast") ==
        "t.tasm:4:66: scale: expected a number such as 0.05");
  CHECK(err("vpu.requantize dtype=int8 from=int32 shape=[1,1] dst=a a=a scale=1e39") ==
        "t.tasm:4:66: scale: number out of range: 1e39 is not a finite fp32");
  // Below the least subnormal fp32 a number would silently read as 0: refused like overflow.
  CHECK(err("vpu.requantize dtype=int8 from=int32 shape=[1,1] dst=a a=a scale=1e-50") ==
        "t.tasm:4:66: scale: number out of range: 1e-50 is too small for fp32: it would be read "
        "as 0");
  CHECK(std::get<VectorInstr>(
            one("vpu.requantize dtype=int8 from=int32 shape=[1,1] dst=a a=a scale=1e-40").body)
            .scale == 1e-40f);
  CHECK(err("load dma0 dst=a src=H elem=4 count=[1,1,1,1,1]") ==
        "t.tasm:4:30: count: expected 1 to 4 entries, got 5");
  CHECK(err("load dma0 dst=a src=H elem=4 count=[2,2] src_stride=[4]") ==
        "t.tasm:4:42: src_stride: expected 2 entries, got 1");
  CHECK(err("load dma0 dst=a src=H elem=a") ==
        "t.tasm:4:28: elem: expected a number, got an address");
  CHECK(err("load dma0 dst=4 src=H elem=4") ==
        "t.tasm:4:15: expected an address: a region name (a0, a0+256) or a space prefix "
        "(vmem:0x100)");
  CHECK(err("load dma0 dst=sram:0 src=H elem=4") ==
        "t.tasm:4:15: unknown memory space 'sram' (expected hbm, vmem, accmem or cmem)");
}

TEST_CASE("asm: numbers out of range name the field and its range", "[isa][asm][errors]") {
  CHECK(err("mxu.lw mxu0 src=a k=4294967296 n=4 dtype=bf16") ==
        "t.tasm:4:21: k: number out of range: 4294967296 (expected 0..4294967295)");
  CHECK(err("mxu.lw mxu0 src=a k=-1 n=4 dtype=bf16") ==
        "t.tasm:4:21: k: number out of range: -1 (expected 0..4294967295)");
  CHECK(err(".core 65536") == "t.tasm:4:7: .core: number out of range: 65536 (expected 0..65535)");
  CHECK(err("load dma256 dst=a src=H elem=4") ==
        "t.tasm:4:6: engine: expected a DMA engine such as dma0, got 'dma256'");
  CHECK(err("sem.signal dma0 s65536") ==
        "t.tasm:4:17: sem: number out of range: s65536 (expected s0..s65535)");
  CHECK(err("load dma0 dst=vmem:0x10000000000000000 src=H elem=4") ==
        "t.tasm:4:20: number out of range: '0x10000000000000000' exceeds 64 bits");
  CHECK(err("load dma0 dst=vmem:0xffffffffffffffff+1 src=H elem=4") ==
        "t.tasm:4:38: number out of range: exceeds 64 bits");
  CHECK(err("vpu.requantize dtype=int8 from=int32 shape=[1,1] dst=a a=a scale=1 zp=2147483648") ==
        "t.tasm:4:71: zp: number out of range: 2147483648 (expected -2147483648..2147483647)");
  CHECK(err("load dma0 dst=a+4096 src=H elem=4") ==
        "t.tasm:4:15: offset 4096 is outside region a (size 4096)");
  CHECK(err("load dma0 dst=a src=H elem=4 count=[0x100000000]") ==
        "t.tasm:4:37: count: number out of range: 4294967296 (expected 0..4294967295)");
}

TEST_CASE("asm: names: unknown, duplicate, reserved", "[isa][asm][errors]") {
  CHECK(err("load dma0 dst=nope src=H elem=4") ==
        "t.tasm:4:15: unknown name 'nope' (not a region or a .const)");
  CHECK(err(".region a hbm 0 16") == "t.tasm:4:9: duplicate region 'a' (first declared at line 1)");
  CHECK(err(".const H 3") == "t.tasm:4:8: duplicate name 'H' (first declared at line 2)");
  CHECK(err(".region vmem vmem 0 16") ==
        "t.tasm:4:9: 'vmem' is reserved (memory space, unit or semaphore name)");
  CHECK(err(".region s3 vmem 0 16") ==
        "t.tasm:4:9: 's3' is reserved (memory space, unit or semaphore name)");
  CHECK(err(".region r dram 0 16") ==
        "t.tasm:4:11: unknown memory space 'dram' (expected hbm, vmem, accmem or cmem)");
  CHECK(err(".region r vmem 0 0") == "t.tasm:4:18: region size must be at least 1");
  CHECK(err(".region r vmem 0xffffffffffffffff 2") ==
        "t.tasm:4:35: region end exceeds 64-bit address space");
  CHECK(err("load dma0 dst=a*2 src=H elem=4") ==
        "t.tasm:4:16: a region name can only be added to an offset");
  CHECK(err("load dma0 dst=vmem:a src=H elem=4") ==
        "t.tasm:4:20: write either a region or a space prefix, not both");
}

TEST_CASE("asm: operator table rules", "[isa][asm][errors]") {
  CHECK(error_of([] { test::assemble("halt\n"); }) ==
        "t.tasm:1:1: no operator selected: declare one first with .op 0 KIND \"name\"");
  CHECK(err(".op 5 relu \"r\"") ==
        "t.tasm:4:5: .op: operator ids are declared in order 0, 1, 2, ...: expected 1, got 5");
  CHECK(err(".op 1") == "t.tasm:4:5: .op 1 is not declared (declare it as .op 1 KIND \"name\")");
  CHECK(err(".op 1 relu name") ==
        "t.tasm:4:12: .op: expected a quoted name of printable characters");
  CHECK(err(".op 1 \"relu\" \"r\"") ==
        "t.tasm:4:7: .op: expected an operator kind such as matmul, got 'relu'");
}

TEST_CASE("asm: structural rules are reported at the mnemonic", "[isa][asm][errors]") {
  CHECK(
      err("load dma0 dst=H src=a elem=4") ==
      "t.tasm:4:1: load: load copies toward the core (hbm -> cmem -> vmem/accmem) or within vmem, "
      "not vmem -> hbm");
  CHECK(err("store dma0 dst=accmem:0 src=a elem=4") ==
        "t.tasm:4:1: store: store copies away from the core (vmem/accmem -> cmem -> hbm) or within "
        "vmem, not vmem -> accmem");
  // Within vmem both ways (activations a compiler keeps there), never vmem <-> accmem.
  for (const char* mnemonic : {"load", "store"}) {
    const Instruction inst = one(std::string(mnemonic) + " dma0 dst=a+8 src=a elem=4");
    const DmaInstr d = std::get<DmaInstr>(inst.body);
    CHECK(d.src.space == Space::kVmem);
    CHECK(d.dst.space == Space::kVmem);
  }
  CHECK(
      err("load dma0 dst=accmem:0 src=a elem=4") ==
      "t.tasm:4:1: load: load copies toward the core (hbm -> cmem -> vmem/accmem) or within vmem, "
      "not vmem -> accmem");
  CHECK(err("mxu.lw mxu0 src=H k=4 n=4 dtype=bf16") == "t.tasm:4:1: mxu.lw: src must be in vmem");
  CHECK(err("mxu.mm mxu0 src=a dst=a m=1 k=4 n=4 dtype=bf16") ==
        "t.tasm:4:1: mxu.mm: dst must be in accmem");
  CHECK(err("vpu.relu dtype=fp32 shape=[1,1] dst=H a=a") ==
        "t.tasm:4:1: vpu.relu: dst must be in vmem or accmem");
  CHECK(err("sem.wait mxu0 s0 count=1 3") == "t.tasm:4:26: operand 'count' given twice");
  CHECK(err("sem.wait mxu0 s0 1 3") == "t.tasm:4:20: unexpected operand '3' (write key=value)");
}

TEST_CASE("asm: a file that cannot be opened is an AsmError naming it", "[isa][asm][errors]") {
  CHECK(error_of([] { assemble_file("/nonexistent/x.tasm"); }) ==
        "/nonexistent/x.tasm: cannot open file");
}

TEST_CASE("asm: pathological expressions fail cleanly instead of exhausting the stack",
          "[isa][asm][errors]") {
  CHECK(err(".const X " + std::string(100000, '-') + "1") == "<no error>");
  CHECK(err(".const X " + std::string(1000, '(') + "1" + std::string(1000, ')')) ==
        "t.tasm:4:42: expression nested too deeply (more than 32 parentheses)");
  CHECK(err(".const X " + std::string(20, '(') + "1" + std::string(20, ')')) == "<no error>");
}
