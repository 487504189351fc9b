#include <catch2/catch.hpp>

#include "isa/binary.h"
#include "isa/checker.h"
#include "isa_test_support.h"

using namespace tpusim;
using namespace tpusim::isa;
using test::error_of;

namespace {

constexpr std::uint64_t kVmem = 16 * kMiB;
constexpr std::uint64_t kAcc = 4 * kMiB;

// Checks `body` (line 2 onwards) on `chip`; returns the error or "<no error>".
std::string check_err(const std::string& body, const ChipSpec& chip = test::chip_128()) {
  return error_of([&] { check(test::assemble(".op 0 matmul \"m\"\n" + body), chip); });
}

std::string hex(std::uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

const char* kOk = "<no error>";

}  // namespace

TEST_CASE("checker: core and operator ids", "[isa][checker]") {
  CHECK(check_err(".core 0\nhalt\n") == kOk);
  CHECK(check_err(".core 1\nhalt\n") == "t.tasm:3:1: halt: core 1 does not exist (cores is 1)");
  Program p;
  p.file_name = "gen";
  p.ops = {{0, "k", "n"}};
  Instruction i;
  i.op = 1;
  i.body = Halt{};
  p.instructions = {i};
  CHECK(error_of([&] { check(p, test::chip_128()); }) ==
        "gen: instruction #0 (halt): operator id 1 is not in the operator table (1 entries)");
}

TEST_CASE("checker: DMA engine index and empty descriptors", "[isa][checker]") {
  CHECK(check_err("load dma1 dst=vmem:0 src=hbm:0 elem=4\n") == kOk);
  CHECK(check_err("load dma2 dst=vmem:0 src=hbm:0 elem=4\n") ==
        "t.tasm:2:1: load: dma2 does not exist (core.dma.engines is 2)");
  CHECK(check_err("load dma0 dst=vmem:0 src=hbm:0 elem=0\n") ==
        "t.tasm:2:1: load: elem must be at least 1");
  CHECK(check_err("load dma0 dst=vmem:0 src=hbm:0 elem=1 count=[2,0]\n") ==
        "t.tasm:2:1: load: every count must be at least 1");
}

TEST_CASE("checker: DMA extents at the last valid byte and one past it", "[isa][checker]") {
  // 1-D: [addr, addr + elem) must end at or before the capacity.
  CHECK(check_err("load dma0 dst=vmem:" + hex(kVmem - 4) + " src=hbm:0 elem=4\n") == kOk);
  CHECK(check_err("load dma0 dst=vmem:" + hex(kVmem - 3) + " src=hbm:0 elem=4\n") ==
        "t.tasm:2:1: load: dst: touches vmem bytes 0xfffffd..0x1000000, beyond core.vmem.capacity "
        "(0x1000000 bytes)");
  // Strided 2-D: last byte = base + (3-1)*1000 + (2-1)*10 + 4 - 1.
  const std::uint64_t extent = 2 * 1000 + 1 * 10 + 4;
  std::string desc = " elem=4 count=[3,2] src_stride=[1000,10]\n";
  CHECK(check_err("load dma0 dst=vmem:0 src=hbm:" + hex(8 * kGiB - extent) + desc) == kOk);
  CHECK(check_err("load dma0 dst=vmem:0 src=hbm:" + hex(8 * kGiB - extent + 1) + desc) ==
        "t.tasm:2:1: load: src: touches hbm bytes 0x1fffff823..0x200000000, beyond memory.capacity "
        "(0x200000000 bytes)");
  // Extents beyond 2^64 are caught, not wrapped.
  CHECK(check_err(
            "load dma0 dst=vmem:0 src=hbm:0xffffffffffffffff elem=4294967295 count=[4294967295] "
            "src_stride=[4294967295]\n")
            .find("beyond 2^64, beyond memory.capacity") != std::string::npos);
}

TEST_CASE("checker: DMA destinations never overlap themselves (rule 5)", "[isa][checker]") {
  // From the smallest stride up, a repeated dimension steps at least past what it contains.
  const std::string load = "load dma0 dst=vmem:0 src=hbm:0 elem=4 ";
  CHECK(check_err(load + "count=[3,2] dst_stride=[8,4]\n") == kOk);  // dense
  CHECK(check_err(load + "count=[2,3] dst_stride=[4,8]\n") == kOk);  // interleaved columns
  CHECK(check_err(load + "count=[1,2] dst_stride=[0,4]\n") == kOk);  // a count of 1 never steps
  CHECK(check_err(load + "count=[2] dst_stride=[3]\n") ==
        "t.tasm:2:1: load: dst_stride[0] 3 is less than the 4 bytes its inner dimensions write: "
        "the runs written would overlap");
  // Inside: 3 runs 8 apart cover 2 * 8 + 4 = 20 bytes, so the outer stride needs 20.
  CHECK(check_err(load + "count=[2,3] dst_stride=[20,8]\n") == kOk);
  CHECK(check_err(load + "count=[2,3] dst_stride=[19,8]\n") ==
        "t.tasm:2:1: load: dst_stride[0] 19 is less than the 20 bytes its inner dimensions write: "
        "the runs written would overlap");
  // A zero-stride destination repeated 65535^4 times was simulated for ever; sources may repeat.
  CHECK(check_err(load +
                  "count=[65535,65535,65535,65535] src_stride=[0,0,0,0] dst_stride=[0,0,0,0]\n") ==
        "t.tasm:2:1: load: dst_stride[0] 0 is less than the 4 bytes its inner dimensions write: "
        "the runs written would overlap");
  CHECK(check_err(load + "count=[4] src_stride=[0] dst_stride=[4]\n") == kOk);
}

TEST_CASE("checker: a copy within one memory must not read what it writes", "[isa][checker]") {
  // vmem [0, 1024) -> [64, 1088): the result would depend on the chunk order.
  CHECK(check_err("store dma0 dst=vmem:64 src=vmem:0 elem=1024\n") ==
        "t.tasm:2:1: store: src and dst overlap in vmem: a copy must not read what it writes");
  CHECK(check_err("store dma0 dst=vmem:1024 src=vmem:0 elem=1024\n") == kOk);  // adjacent
  // Spans, not bytes: the strided source [0, 3 * 256 + 16) covers a destination at 512.
  CHECK(check_err("store dma0 dst=vmem:512 src=vmem:0 elem=16 count=[4] src_stride=[256]\n") !=
        kOk);
}

TEST_CASE("checker: cmem only when the chip has one, within its capacity", "[isa][checker]") {
  CHECK(check_err("load dma0 dst=cmem:0 src=hbm:0 elem=4\n") ==
        "t.tasm:2:1: load: dst: this chip has no cmem (no core.cmem section)");
  ChipSpec chip = test::chip_128();
  chip.core.cmem.capacity = Bytes(128 * kMiB);
  CHECK(check_err("load dma0 dst=cmem:" + hex(128 * kMiB - 1) + " src=hbm:0 elem=1\n", chip) ==
        kOk);
  CHECK(
      check_err("store dma0 dst=cmem:" + hex(128 * kMiB) + " src=vmem:0 elem=1\n", chip) ==
      "t.tasm:2:1: store: dst: touches cmem bytes 0x8000000..0x8000000, beyond core.cmem.capacity "
      "(0x8000000 bytes)");
}

TEST_CASE("checker: regions must fit their memory", "[isa][checker]") {
  CHECK(check_err(".region r vmem 0 " + hex(kVmem) + "\n") == kOk);
  CHECK(
      check_err(".region r vmem 1 " + hex(kVmem) + "\n") ==
      "t.tasm:2:1: region r: vmem bytes 1..0x1000000 exceed core.vmem.capacity (0x1000000 bytes)");
}

TEST_CASE("checker: MXU shape and dtype against the chip", "[isa][checker]") {
  const std::string lw = "mxu.lw mxu0 src=vmem:0 dtype=bf16 ";
  CHECK(check_err(lw + "k=128 n=128\n") == kOk);
  CHECK(check_err(lw + "k=129 n=128\n") ==
        "t.tasm:2:1: mxu.lw: k=129 exceeds the MXU rows (core.mxu.rows is 128)");
  CHECK(check_err(lw + "k=128 n=129\n") ==
        "t.tasm:2:1: mxu.lw: n=129 exceeds the MXU columns (core.mxu.cols is 128)");
  CHECK(check_err(lw + "k=0 n=1\n") == "t.tasm:2:1: mxu.lw: k must be at least 1");
  CHECK(check_err("mxu.lw mxu0 src=vmem:0 dtype=int8 k=4 n=4\n") ==
        "t.tasm:2:1: mxu.lw: dtype int8 is not supported by the MXU (core.mxu.precisions: bf16)");
  CHECK(check_err("mxu.lw mxu1 src=vmem:0 dtype=bf16 k=4 n=4\n") ==
        "t.tasm:2:1: mxu.lw: mxu1 does not exist (core.mxu.count is 1)");
  CHECK(check_err("mxu.lw mxu1 src=vmem:0 dtype=bf16 k=4 n=4\n", test::chip_128(2)) == kOk);
}

TEST_CASE("checker: the MXU takes the operand types it rounds", "[isa][checker]") {
  ChipSpec chip = test::chip_128();
  const std::string lw = "mxu.lw mxu0 src=vmem:0 dtype=fp32 k=4 n=4\n";
  CHECK(check_err(lw, chip) ==
        "t.tasm:2:1: mxu.lw: dtype fp32 is not supported by the MXU (core.mxu.precisions: bf16)");
  chip.core.mxu.rounding = {{DType::kFp32, DType::kBf16}};
  CHECK(check_err(lw, chip) == kOk);
  CHECK(check_err("mxu.lw mxu0 src=vmem:0 dtype=int8 k=4 n=4\n", chip) ==
        "t.tasm:2:1: mxu.lw: dtype int8 is not supported by the MXU (core.mxu.precisions: bf16, "
        "fp32 (rounded to bf16))");
}

TEST_CASE("checker: mxu.lw extent follows the transpose flag", "[isa][checker]") {
  // Not transposed: K rows of N bf16 -> 4 rows x 16 bytes with stride 32: extent 3*32 + 16.
  std::string at_ok = hex(kVmem - (3 * 32 + 16));
  std::string at_bad = hex(kVmem - (3 * 32 + 16) + 1);
  CHECK(check_err("mxu.lw mxu0 src=vmem:" + at_ok + " k=4 n=8 dtype=bf16 stride=32\n") == kOk);
  CHECK(check_err("mxu.lw mxu0 src=vmem:" + at_bad + " k=4 n=8 dtype=bf16 stride=32\n")
            .find("beyond") != std::string::npos);
  // Transposed: N rows of K bf16 -> 8 rows x 8 bytes with stride 32: extent 7*32 + 8.
  std::string t_ok = hex(kVmem - (7 * 32 + 8));
  CHECK(check_err("mxu.lw mxu0 src=vmem:" + t_ok + " k=4 n=8 dtype=bf16 stride=32 transpose\n") ==
        kOk);
  CHECK(check_err("mxu.lw mxu0 src=vmem:" + hex(kVmem - (7 * 32 + 8) + 1) +
                  " k=4 n=8 dtype=bf16 stride=32 transpose\n")
            .find("beyond") != std::string::npos);
}

TEST_CASE("checker: a streamed weight tile must fit the vmem it is read from", "[isa][checker]") {
  // Under os the K rows stream, so the array does not bound k; rows read again (stride 0)
  // would stage k x n values from a few bytes. 16 MiB of vmem holds k x 8 bf16 (16 B) rows
  // for k up to 1 Mi.
  ChipSpec chip = test::chip_128();
  chip.core.mxu.dataflow = Dataflow::kOutputStationary;
  const std::string lw = "mxu.lw mxu0 src=vmem:0 n=8 dtype=bf16 stride=0 ";
  CHECK(check_err(lw + "k=" + std::to_string(kVmem / 16) + "\n", chip) == kOk);
  CHECK(check_err(lw + "k=" + std::to_string(kVmem / 16 + 1) + "\n", chip) ==
        "t.tasm:2:1: mxu.lw: the tile it stages (k=1048577 x n=8, " + hex(kVmem + 16) +
            " bytes) does not fit the memory it is read from (core.vmem.capacity " + hex(kVmem) +
            " bytes)");
  // Under is the N columns stream: a transposed tile reads N rows of K.
  chip.core.mxu.dataflow = Dataflow::kInputStationary;
  CHECK(check_err("mxu.lw mxu0 src=vmem:0 k=8 n=4294967295 dtype=bf16 stride=0 transpose\n", chip)
            .find("does not fit the memory it is read from") != std::string::npos);
}

TEST_CASE("checker: mxu.mm keep computes with the tile in use while a later one is staged",
          "[isa][checker]") {
  const std::string a = "mxu.lw mxu0 src=vmem:0 k=128 n=64 dtype=bf16\n";
  const std::string b = "mxu.lw mxu0 src=vmem:0 k=32 n=16 dtype=bf16\n";
  const std::string mm_a = "mxu.mm mxu0 src=vmem:0 dst=accmem:0 m=8 k=128 n=64 dtype=bf16";
  const std::string mm_b = "mxu.mm mxu0 src=vmem:0 dst=accmem:0 m=8 k=32 n=16 dtype=bf16";
  // The first matmul switches to tile a; b is staged; keep still uses a; the next one switches.
  CHECK(check_err(a + mm_a + "\n" + b + mm_a + " keep\n" + mm_b + "\n") == kOk);
  // Without keep the matmul after b's load computes with b, so a's shape no longer matches.
  CHECK(check_err(a + mm_a + "\n" + b + mm_a + "\n") ==
        "t.tasm:5:1: mxu.mm: k=128 n=64 dtype=bf16 do not match the weights loaded at line 4 (k=32 "
        "n=16 dtype=bf16)");
  CHECK(check_err(b + mm_a + " keep\n") ==
        "t.tasm:3:1: mxu.mm: keep, but no tile is in use on mxu0 yet (the mxu.lw at line 2 is "
        "staged; a "
        "matmul without keep switches to it)");
  // The shadow holds one staged tile: a second load before any matmul switched would overwrite it.
  CHECK(check_err(a + mm_a + "\n" + b + a) ==
        "t.tasm:5:1: mxu.lw: mxu0 still holds the tile staged at line 4, which no matmul has "
        "switched "
        "to (a matmul without keep must come between)");
  // One weight buffer: the staged load has overwritten the tile keep asks for.
  ChipSpec single = test::chip_128();
  single.core.mxu.weight_double_buffer = false;
  CHECK(check_err(a + mm_a + "\n" + b + mm_a + " keep\n", single) ==
        "t.tasm:5:1: mxu.mm: keep needs core.mxu.weight_double_buffer: with one weight buffer the "
        "mxu.lw at line 4 loads into the tile matmuls use");
}

TEST_CASE("checker: mxu.mm needs matching weights and fitting operands", "[isa][checker]") {
  const std::string lw = "mxu.lw mxu0 src=vmem:0 k=128 n=64 dtype=bf16\n";
  CHECK(check_err("mxu.mm mxu0 src=vmem:0 dst=accmem:0 m=1 k=128 n=64 dtype=bf16\n") ==
        "t.tasm:2:1: mxu.mm: no mxu.lw loads weights into mxu0 of core 0 before this matmul");
  CHECK(
      check_err(lw + "mxu.mm mxu0 src=vmem:0 dst=accmem:0 m=1 k=128 n=128 dtype=bf16\n") ==
      "t.tasm:3:1: mxu.mm: k=128 n=128 dtype=bf16 do not match the weights loaded at line 2 (k=128 "
      "n=64 dtype=bf16)");
  CHECK(check_err(lw + "mxu.mm mxu0 src=vmem:0 dst=accmem:0 m=0 k=128 n=64 dtype=bf16\n") ==
        "t.tasm:3:1: mxu.mm: m must be at least 1");
  // Output rows are n fp32 = 256 bytes: the last valid accmem start for m rows is cap - m*256.
  std::string mm = "mxu.mm mxu0 src=vmem:0 m=16 k=128 n=64 dtype=bf16 dst=accmem:";
  CHECK(check_err(lw + mm + hex(kAcc - 16 * 256) + "\n") == kOk);
  CHECK(check_err(lw + mm + hex(kAcc - 16 * 256 + 1) + "\n") ==
        "t.tasm:3:1: mxu.mm: dst: touches accmem bytes 0x3ff001..0x400000, beyond "
        "core.accmem.capacity (0x400000 bytes)");
  CHECK(check_err(lw + mm + "0 dst_stride=256\n") == kOk);
  CHECK(
      check_err(lw + mm + "0 dst_stride=255\n") ==
      "t.tasm:3:1: mxu.mm: dst_stride 255 is less than one row (256 bytes): the rows written would "
      "overlap");
  // A single row may have any stride; sources may overlap (sliding windows).
  CHECK(check_err(lw +
                  "mxu.mm mxu0 src=vmem:0 src_stride=2 dst=accmem:0 dst_stride=0 m=1 k=128 n=64 "
                  "dtype=bf16\n") == kOk);
}

TEST_CASE("checker: vector ops: dtypes, shapes and extents", "[isa][checker]") {
  CHECK(check_err("vpu.exp dtype=int32 shape=[1,1] dst=vmem:0 a=vmem:0\n") ==
        "t.tasm:2:1: vpu.exp: needs a floating dtype (bf16, fp32, fp8), not int32");
  CHECK(
      check_err("vpu.requantize dtype=int8 from=int16 shape=[1,1] dst=vmem:0 a=vmem:0 scale=1\n") ==
      "t.tasm:2:1: vpu.requantize: from= must be int32 or fp32, not int16");
  CHECK(
      check_err("vpu.requantize dtype=int8 from=int32 shape=[1,1] dst=vmem:0 a=vmem:0 scale=0\n") ==
      "t.tasm:2:1: vpu.requantize: scale must be positive");
  CHECK(check_err("vpu.reduce_sum dtype=int16 from=int8 shape=[1,4] dst=vmem:0 a=vmem:0\n") ==
        "t.tasm:2:1: vpu.reduce_sum: sums int8 into int8 or int32, not int16");
  CHECK(check_err("vpu.reduce_sum dtype=bf16 from=fp32 shape=[1,4] dst=vmem:0 a=vmem:0\n") ==
        "t.tasm:2:1: vpu.reduce_sum: sums fp32 into fp32, not bf16");
  CHECK(check_err("vpu.add dtype=fp32 shape=[0,4] dst=vmem:0 a=vmem:0 b=vmem:0\n") ==
        "t.tasm:2:1: vpu.add: rows must be at least 1");
  // reduce_max writes [rows, 1]: 8 rows of one fp32, dense stride 4: extent 32 bytes.
  CHECK(check_err("vpu.reduce_max dtype=fp32 shape=[8,128] dst=accmem:" + hex(kAcc - 32) +
                  " a=vmem:0\n") == kOk);
  CHECK(check_err("vpu.reduce_max dtype=fp32 shape=[8,128] dst=accmem:" + hex(kAcc - 31) +
                  " a=vmem:0\n")
            .find("dst: touches accmem") != std::string::npos);
  // broadcast reads a as [rows, 1]; b of a binary op with stride 0 is one row.
  CHECK(check_err("vpu.broadcast dtype=fp32 shape=[8,128] dst=vmem:0 a=vmem:" + hex(kVmem - 32) +
                  "\n") == kOk);
  CHECK(check_err("vpu.add dtype=bf16 shape=[8,128] dst=vmem:0 a=vmem:0 b=vmem:" +
                  hex(kVmem - 256) + " b_stride=0\n") == kOk);
  CHECK(check_err("vpu.add dtype=bf16 shape=[8,128] dst=vmem:0 a=vmem:0 b=vmem:" +
                  hex(kVmem - 255) + " b_stride=0\n") ==
        "t.tasm:2:1: vpu.add: b: touches vmem bytes 0xffff01..0x1000000, beyond core.vmem.capacity "
        "(0x1000000 bytes)");
}

TEST_CASE("checker: semaphore indices and wait counts", "[isa][checker]") {
  CHECK(check_err("sem.signal dma0 s31\nsem.wait mxu0 s31\n") == kOk);
  CHECK(check_err("sem.signal dma0 s32\n") ==
        "t.tasm:2:1: sem.signal: s32 does not exist (core.sequencer.semaphores is 32)");
  CHECK(check_err("sem.wait dma0 s0 0\n") == "t.tasm:2:1: sem.wait: count must be at least 1");
  CHECK(check_err("sem.signal dma2 s0\n") ==
        "t.tasm:2:1: sem.signal: dma2 does not exist (core.dma.engines is 2)");
}

TEST_CASE("checker: total waits may not exceed total signals", "[isa][checker]") {
  const std::string two = "sem.signal dma0 s1\nsem.signal vpu s1\n";
  CHECK(check_err(two + "sem.wait mxu0 s1\nsem.wait mxu0 s1\n") == kOk);
  CHECK(check_err(two + "sem.wait mxu0 s1 2\n") == kOk);
  CHECK(check_err(two + "sem.wait mxu0 s1\nsem.wait seq s1 2\n") ==
        "t.tasm:5:1: sem.wait: can never be satisfied: waits on core 0 s1 take 3 by here, but the "
        "program signals it only 2 times");
}

TEST_CASE("checker: the abstract run finds waits that order makes impossible", "[isa][checker]") {
  CHECK(check_err("sem.wait mxu0 s0\nsem.signal mxu0 s1\nsem.wait dma0 s1\nsem.signal dma0 s0\n") ==
        "t.tasm:2:1: sem.wait: deadlock: this wait never completes (core 0 s0 holds 0 of the 1 it "
        "needs when every unit has stopped)");
  // A wait on the sequencer blocks everything after it, even the signal it waits for.
  CHECK(check_err("sem.wait seq s0\nsem.signal dma0 s0\n") ==
        "t.tasm:2:1: sem.wait: deadlock: this wait never completes (core 0 s0 holds 0 of the 1 it "
        "needs when every unit has stopped)");
  CHECK(check_err("sem.signal dma0 s0\nsem.wait seq s0\n") == kOk);
}

TEST_CASE("checker: waits on one semaphore take their counts in program order", "[isa][checker]") {
  // s0 is signalled twice and waited for twice. vpu's wait (line 5) comes after mxu0's (line 4),
  // so it may not take the first count while mxu0 is held at line 3; mxu0 needs the s1 that vpu
  // signals only after its wait: a deadlock, whichever unit happens to reach its wait first.
  const std::string prog =
      "sem.signal dma0 s0\nsem.wait mxu0 s1\nsem.wait mxu0 s0\nsem.wait vpu s0\n"
      "sem.signal vpu s1\nsem.signal dma0 s0\n";
  CHECK(check_err(prog) ==
        "t.tasm:3:1: sem.wait: deadlock: this wait never completes (core 0 s1 holds 0 of the 1 it "
        "needs when every unit has stopped)");
  // With vpu's wait first in program order, it takes the first count and the program completes.
  CHECK(check_err("sem.signal dma0 s0\nsem.wait vpu s0\nsem.wait mxu0 s1\nsem.wait mxu0 s0\n"
                  "sem.signal vpu s1\nsem.signal dma0 s0\n") == kOk);
}

TEST_CASE("checker: queue depth: a full queue behind a blocked wait deadlocks", "[isa][checker]") {
  const std::string prog =
      "sem.wait dma0 s0\nload dma0 dst=vmem:0 src=hbm:0 elem=4\nload dma0 dst=vmem:0 src=hbm:0 "
      "elem=4\nsem.signal vpu s0\n";
  ChipSpec chip = test::chip_128();
  chip.core.sequencer.queue_depth = 3;  // wait + 2 loads fit; the signal reaches the VPU
  CHECK(check_err(prog, chip) == kOk);
  chip.core.sequencer.queue_depth = 2;
  CHECK(check_err(prog, chip) ==
        "t.tasm:2:1: sem.wait: deadlock: this wait never completes (core 0 s0 holds 0 of the 1 it "
        "needs when every unit has stopped); the sequencer is stuck at line 4 because the dma0 "
        "queue is full (core.sequencer.queue_depth is 2)");
}

TEST_CASE("checker: barriers: equal counts per core, and they drain the core first",
          "[isa][checker]") {
  ChipSpec chip = test::chip_128();
  chip.cores = 2;
  CHECK(check_err(".core 0\nbarrier\n.core 1\nbarrier\n", chip) == kOk);
  CHECK(
      check_err(".core 0\nbarrier\nbarrier\n.core 1\nbarrier\n", chip) ==
      "t.tasm:4:1: barrier: core 0 runs 2 barriers but core 1 runs only 1: this barrier would wait "
      "forever");
  // Core 1's signal comes after the barrier, and core 0 cannot reach the barrier before its
  // dma0 wait is released: deadlock.
  CHECK(check_err(
            ".core 0\nsem.wait dma0 s0\nbarrier\n.core 1\nbarrier\n.core 0\nsem.signal vpu s0\n",
            chip) ==
        "t.tasm:3:1: sem.wait: deadlock: this wait never completes (core 0 s0 holds 0 of the 1 it "
        "needs when every unit has stopped)");
  CHECK(check_err(".core 0\nsem.signal vpu s0\nsem.wait dma0 s0\nbarrier\n.core 1\nbarrier\n",
                  chip) == kOk);
}

TEST_CASE("checker: a deadlock names the stuck wait before any barrier, whatever the core order",
          "[isa][checker]") {
  // Core 0 reaches its barrier; core 1 never does, held by a wait nothing signals first.
  const std::string wait_then_barrier = "sem.wait vpu s0\nsem.signal vpu s0\nbarrier\n";
  const std::string expected =
      ": sem.wait: deadlock: this wait never completes (core 1 s0 holds 0 of the 1 it needs when "
      "every unit has stopped)";
  ChipSpec chip = test::chip_128();
  chip.cores = 2;
  CHECK(check_err(".core 0\nbarrier\n.core 1\n" + wait_then_barrier, chip) ==
        "t.tasm:5:1" + expected);
  CHECK(check_err(".core 1\n" + wait_then_barrier + ".core 0\nbarrier\n", chip) ==
        "t.tasm:3:1" + expected);
}

TEST_CASE("checker: nothing may follow halt on the same core", "[isa][checker]") {
  ChipSpec chip = test::chip_128();
  chip.cores = 2;
  CHECK(check_err("halt\n.core 1\nhalt\n", chip) == kOk);
  CHECK(check_err("halt\nbarrier\n", chip) ==
        "t.tasm:3:1: barrier: core 0 already halted at line 2");
}

TEST_CASE("checker: errors in binary programs name the instruction index", "[isa][checker]") {
  Program p =
      test::assemble(".op 0 m \"m\"\nhalt\n.core 1\nmxu.lw mxu3 src=vmem:0 k=1 n=1 dtype=bf16\n");
  Program b = decode(encode(p), "p.tbin");
  ChipSpec chip = test::chip_128();
  chip.cores = 2;
  CHECK(error_of([&] { check(b, chip); }) ==
        "p.tbin: instruction #1 (mxu.lw): mxu3 does not exist (core.mxu.count is 1)");
}
