#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>

#include "isa/binary.h"
#include "isa/program_file.h"
#include "isa_test_support.h"

using namespace tpusim;
using namespace tpusim::isa;
using test::error_of;

namespace {

// One instruction of each encoded size, so truncation hits every kind of field.
const char* kSmall = R"(
.region a vmem 0 64
.region B hbm 0x100 64
.op 0 matmul "mm"
load dma0 dst=a src=B elem=16 count=[2,2] src_stride=[32,16]
mxu.lw mxu0 src=a k=4 n=4 dtype=int8 transpose
mxu.mm mxu0 src=a dst=accmem:0 m=4 k=4 n=4 dtype=int8
vpu.add dtype=int8 shape=[4,4] dst=a a=a b=a
sem.wait dma0 s1 2
barrier
)";

std::vector<std::uint8_t> small_bytes() { return encode(test::assemble(kSmall)); }

// Offset of instruction `i` of kSmall: header, op table (8 + 6 + 2), regions (24 + 1 + 24 + 1).
constexpr std::size_t kFirstInstr = kFileHeaderBytes + 16 + 50;

std::string decode_error(const std::vector<std::uint8_t>& b) {
  return error_of([&] { decode(b, "p.tbin"); });
}

}  // namespace

TEST_CASE("binary: header layout is magic, version and table sizes", "[isa][binary]") {
  auto b = small_bytes();
  REQUIRE(b.size() == kFirstInstr + 80 + 32 + 48 + 72 + 16 + 8);
  CHECK(std::string(b.begin(), b.begin() + 4) == "TBIN");
  CHECK(b[4] == 1);  // version 1, little-endian
  CHECK(b[5] == 0);
  CHECK(b[8] == 1);   // one operator
  CHECK(b[12] == 2);  // two regions
  CHECK(b[16] == 6);  // six instructions
  CHECK(b[kFirstInstr] == static_cast<std::uint8_t>(Opcode::kLoad));
}

TEST_CASE("binary: bad magic names byte 0", "[isa][binary]") {
  auto b = small_bytes();
  b[1] = 'X';
  CHECK(decode_error(b) ==
        "p.tbin: byte 0x0: bad magic: not a tpusim binary program (expected \"TBIN\")");
  CHECK(decode_error({}) == "p.tbin: byte 0x0: truncated header (need 4 bytes, 0 left)");
}

TEST_CASE("binary: an unknown version is rejected with both versions named", "[isa][binary]") {
  auto b = small_bytes();
  b[4] = 2;
  CHECK(decode_error(b) ==
        "p.tbin: byte 0x4: unsupported format version 2 (this build reads version 1)");
}

TEST_CASE("binary: truncation at every length throws AsmError and never reads out of bounds",
          "[isa][binary]") {
  auto b = small_bytes();
  for (std::size_t len = 0; len < b.size(); ++len) {
    std::vector<std::uint8_t> cut(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(len));
    INFO("length " << len);
    std::string e = decode_error(cut);
    CHECK(e.rfind("p.tbin: byte 0x", 0) == 0);
    CHECK(e.find("truncated") != std::string::npos);
  }
  std::vector<std::uint8_t> cut(b.begin(),
                                b.begin() + static_cast<std::ptrdiff_t>(kFirstInstr + 12));
  char expected[128];
  std::snprintf(expected, sizeof expected,
                "p.tbin: byte 0x%zx: truncated instruction #0 (need 80 bytes, 12 left)",
                kFirstInstr);
  CHECK(decode_error(cut) == expected);
}

TEST_CASE("binary: trailing bytes after the last instruction are rejected", "[isa][binary]") {
  auto b = small_bytes();
  std::size_t end = b.size();
  b.push_back(0);
  char expected[128];
  std::snprintf(expected, sizeof expected,
                "p.tbin: byte 0x%zx: 1 trailing bytes after the last instruction", end);
  CHECK(decode_error(b) == expected);
}

TEST_CASE("binary: corrupted opcode, enum, flag and reserved bytes name their offset",
          "[isa][binary]") {
  const std::size_t i0 = kFirstInstr;   // load
  const std::size_t i1 = i0 + 80;       // mxu.lw
  const std::size_t i3 = i1 + 32 + 48;  // vpu.add
  auto at = [](std::size_t off, const std::string& msg) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "p.tbin: byte 0x%zx: ", off);
    return buf + msg;
  };
  auto corrupt = [](std::size_t off, std::uint8_t v) {
    auto b = small_bytes();
    b[off] = v;
    return decode_error(b);
  };
  CHECK(corrupt(i0, 0x77) == at(i0, "instruction #0: unknown opcode 0x77"));
  CHECK(corrupt(i0 + 9, 4) == at(i0 + 9, "instruction #0: src space 4 out of range (0..3)"));
  CHECK(corrupt(i0 + 11, 5) == at(i0 + 11, "instruction #0: dims 5 out of range (1..4)"));
  CHECK(corrupt(i0 + 11, 1) ==
        at(i0, "instruction #0 (load): unused descriptor dimensions must be zero"));
  CHECK(corrupt(i0 + 9, 2) ==
        at(i0,
           "instruction #0 (load): load copies toward the core (hbm -> cmem -> vmem/accmem) or "
           "within vmem, not accmem -> vmem"));
  CHECK(corrupt(i0 + 4, 1) ==
        at(i0 + 4, "instruction #0: operator id 1 is not in the operator table (1 entries)"));
  CHECK(corrupt(i0 + 1, 1) == at(i0 + 1, "instruction #0: unknown flag bits 0x1"));
  CHECK(corrupt(i1 + 1, 3) == at(i1 + 1, "instruction #1: unknown flag bits 0x2"));
  CHECK(corrupt(i1 + 9, 6) == at(i1 + 9, "instruction #1: dtype 6 out of range (0..5)"));
  CHECK(corrupt(i1 + 11, 1) == at(i1 + 11, "instruction #1: reserved byte must be zero"));
  CHECK(corrupt(i1 + 10, 0) == at(i1, "instruction #1 (mxu.lw): src must be in vmem"));
  CHECK(corrupt(i3 + 8, kNumVectorOps) ==
        at(i3 + 8, "instruction #3: vector op " + std::to_string(kNumVectorOps) +
                       " out of range (0.." + std::to_string(kNumVectorOps - 1) + ")"));
  CHECK(corrupt(i3 + 10, 4) ==
        at(i3,
           "instruction #3 (vpu.add): from= (a source dtype) is only for cast, requantize and "
           "reduce_sum"));
  CHECK(corrupt(i3 + 36, 1) ==
        at(i3, "instruction #3 (vpu.add): scale and zp are only for requantize"));
  const std::size_t i4 = i3 + 72;  // sem.wait
  CHECK(corrupt(i4 + 8, 4) == at(i4 + 8, "instruction #4: unit kind 4 out of range (0..3)"));
}

TEST_CASE("binary: corrupted tables name their offset", "[isa][binary]") {
  auto b = small_bytes();
  b[kFileHeaderBytes] = 1;  // operator id
  CHECK(decode_error(b) ==
        "p.tbin: byte 0x18: operator table entry 0 has id 1 (ids must be 0, 1, 2, ...)");
  b = small_bytes();
  b[kFileHeaderBytes + 8] = '9';  // operator kind "matmul" -> "9atmul"
  CHECK(decode_error(b) == "p.tbin: byte 0x20: operator table entry 0: kind is not an identifier");
  b = small_bytes();
  const std::size_t r0 = kFileHeaderBytes + 16;
  b[r0] = 7;
  CHECK(decode_error(b) == "p.tbin: byte 0x28: region table entry 0: space 7 out of range (0..3)");
  b = small_bytes();
  b[r0 + 24 + 1 + 24] = 'a';  // second region renamed to "a"
  CHECK(decode_error(b) == "p.tbin: byte 0x59: region table entry 1: duplicate region name 'a'");
}

TEST_CASE("binary: every single-byte corruption either fails cleanly or re-encodes identically",
          "[isa][binary]") {
  auto b = small_bytes();
  int decoded = 0, refused = 0;
  for (std::size_t off = 0; off < b.size(); ++off) {
    for (std::uint8_t v : {0x00, 0x01, 0x02, 0x7f, 0x80, 0xff}) {
      auto c = b;
      c[off] = v;
      try {
        Program p = decode(c, "p.tbin");
        INFO("offset " << off << " value " << int(v));
        CHECK(encode(p) == c);
        ++decoded;
      } catch (const AsmError&) {
        ++refused;
      }
    }
  }
  // Both branches ran: some corruptions are values the format allows, others are refused.
  CHECK(decoded > 0);
  CHECK(refused > 0);
}

TEST_CASE("binary: huge table counts fail cleanly without huge allocations", "[isa][binary]") {
  auto b = small_bytes();
  for (std::size_t k : {8, 12, 16}) {
    auto c = b;
    c[k] = c[k + 1] = c[k + 2] = c[k + 3] = 0xff;
    INFO(decode_error(c));
    CHECK(decode_error(c).rfind("p.tbin: byte 0x", 0) == 0);
  }
  auto c = b;
  c[16] = c[17] = c[18] = c[19] = 0xff;  // 2^32 - 1 instructions
  CHECK(decode_error(c) == "p.tbin: byte 0x" + [&] {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%zx", b.size());
    return std::string(buf);
  }() + ": truncated instruction #6 (need 1 bytes, 0 left)");
}

TEST_CASE("binary: files are written whole and read back by magic or extension", "[isa][binary]") {
  Program p = test::assemble(kSmall);
  std::string path = "test_isa_written.tbin";
  write_binary_file(p, path);
  Program back = read_program_file(path);
  CHECK(encode(back) == encode(p));
  std::remove(path.c_str());
  // A .tbin extension with text inside is decoded, and reports the bad magic.
  {
    std::ofstream out(path);
    out << "halt\n";
  }
  CHECK(error_of([&] { read_program_file(path); }) ==
        path + ": byte 0x0: bad magic: not a tpusim binary program (expected \"TBIN\")");
  std::remove(path.c_str());
  CHECK(error_of([&] { read_program_file("no/such/file.tasm"); }) ==
        "no/such/file.tasm: cannot open file");
  CHECK(error_of([&] {
          write_binary_file(p, "no/such/dir/out.tbin");
        }).rfind("no/such/dir/out.tbin: cannot create file: ", 0) == 0);
}
