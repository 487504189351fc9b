#include <catch2/catch.hpp>

#include "isa/assembler.h"
#include "isa/binary.h"
#include "isa/checker.h"
#include "isa/disassembler.h"
#include "isa_test_support.h"

using namespace tpusim;
using namespace tpusim::isa;

namespace {

std::string example(const std::string& name) {
  return std::string(TPUSIM_ISA_EXAMPLES_DIR) + "/" + name;
}

// assemble -> encode -> disassemble -> assemble -> encode gives the same bytes.
std::vector<std::uint8_t> round_trip(const Program& p) {
  std::vector<std::uint8_t> bytes = encode(p);
  Program decoded = decode(bytes, "x.tbin");
  std::string text = disassemble(decoded);
  INFO(text);
  std::vector<std::uint8_t> again = encode(assemble_text(text, "x.tasm"));
  REQUIRE(again == bytes);
  return bytes;
}

}  // namespace

TEST_CASE("examples: single-matmul assembles, round-trips and checks on a 128x128 bf16 chip",
          "[isa][examples]") {
  Program p = assemble_file(example("single-matmul.tasm"));
  REQUIRE(p.instructions.size() == 10);
  round_trip(p);
  REQUIRE_NOTHROW(check(p, test::chip_128()));
  REQUIRE_NOTHROW(check(decode(encode(p), "x.tbin"), test::chip_128()));
}

TEST_CASE("examples: gemm-double-buffered round-trips and checks with two DMA engines",
          "[isa][examples]") {
  Program p = assemble_file(example("gemm-double-buffered.tasm"));
  round_trip(p);
  REQUIRE_NOTHROW(check(p, test::chip_128()));
  ChipSpec one_dma = test::chip_128();
  one_dma.core.dma.engines = 1;
  CHECK_THROWS_AS(check(p, one_dma), AsmError);
}

TEST_CASE("examples: teach-4x4 round-trips and checks on a 4x4 int8 chip", "[isa][examples]") {
  Program p = assemble_file(example("teach-4x4.tasm"));
  round_trip(p);
  REQUIRE_NOTHROW(check(p, test::chip_4x4()));
  // The bf16-only 128x128 chip has no int8 MXU.
  CHECK_THROWS_AS(check(p, test::chip_128()), AsmError);
}

TEST_CASE("examples: every one-character mutation assembles or fails with an AsmError",
          "[isa][examples][fuzz]") {
  // Mutated text must either be rejected cleanly or assemble to a program whose binary
  // round-trips; it must never crash (this binary also runs under ASan/UBSan).
  // The disassembly of the teaching example: every line is code (comments would only dilute).
  std::string text = disassemble(assemble_file(example("teach-4x4.tasm")));
  const char replacements[] = {'\0', ' ', '=', '[', ',', '+', '9', ':'};
  int accepted = 0;
  int rejected = 0;
  for (std::size_t pos = 0; pos < text.size(); ++pos) {
    for (char c : replacements) {
      std::string m = text;
      if (c == '\0') {
        m.erase(pos, 1);
      } else {
        m[pos] = c;
      }
      try {
        Program p = assemble_text(m, "m.tasm");
        ++accepted;
        std::vector<std::uint8_t> bytes = encode(p);
        REQUIRE(encode(assemble_text(disassemble(decode(bytes, "m.tbin")), "m2.tasm")) == bytes);
      } catch (const AsmError&) {
        ++rejected;
      }
    }
  }
  CHECK(accepted > 0);
  CHECK(rejected > 0);
}
