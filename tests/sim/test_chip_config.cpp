#include <filesystem>
#include <functional>

#include <catch2/catch.hpp>

#include "sim/config/chip_config.h"
#include "tests/sim/test_support.h"

using namespace tpusim;
using namespace tpusim::config;
using tpusim::test::kMinimalChip;
using tpusim::test::position_of;
using tpusim::test::replaced;
using tpusim::test::TempDir;
using tpusim::test::error_of;
using tpusim::test::write_chip;

namespace {


// Loads the minimal chip with `from` replaced by `to` and returns the error, whose expected
// position is that of `marker` in the edited text.
struct Edited {
  TempDir dir;
  std::string text;
  std::string path;
  Edited(const std::string& from, const std::string& to)
      : text(replaced(kMinimalChip, from, to)), path(write_chip(dir, text)) {}
  std::string at(const std::string& marker) const { return path + ":" + position_of(text, marker); }
  std::string error() const { return error_of([&] { load_chip_config(path); }); }
};

}  // namespace

TEST_CASE("chip config: the minimal chip binds every written value", "[config][chip]") {
  TempDir dir;
  const ChipConfig c = load_chip_config(write_chip(dir));
  const ChipSpec& s = c.spec;
  CHECK(s.name == "test-chip");
  CHECK(s.clock.value() == 1e9);
  CHECK(s.cores == 2);
  CHECK(s.core.mxu.count == 2);
  CHECK(s.core.mxu.rows == 8);
  CHECK(s.core.mxu.precisions.at(DType::kInt8) == 1.0);
  CHECK(s.core.mxu.precisions.at(DType::kBf16) == 0.5);
  CHECK(s.core.vmem.capacity.value() == 64 * kKiB);
  CHECK(s.core.vmem.banks == 4);
  CHECK(s.core.vmem.port_width.value() == 32);
  CHECK(s.core.accmem.capacity.value() == 16 * kKiB);
  CHECK_FALSE(s.core.cmem.present());
  CHECK(s.memory.capacity.value() == kGiB);
  CHECK(s.memory.bandwidth.bytes_per_second(s.clock).value() == 100e9);
  CHECK(s.memory.hbm.total_channels() == 16);
  // 16 pseudo-channels x 16 banks x 16384 rows x 32 columns x 32 B bursts.
  CHECK(s.memory.hbm.capacity().value() == 16ull * 16 * 16384 * 32 * 32);
  // 2 x 1 GHz x 8 bytes per pseudo-channel x 16 pseudo-channels.
  CHECK(s.memory.hbm.peak_bandwidth().value() == Approx(2 * 1e9 * 8 * 16));
  CHECK(s.memory.hbm.timing.tRFC.cycles(s.memory.hbm.clock).value() == 260);
  CHECK(s.memory.hbm.timing.tREFI.cycles(s.memory.hbm.clock).value() == 3900);
  CHECK(s.energy.table.name == "test-energy");
  CHECK(s.energy.table.mac.at(DType::kInt8).value() == Approx(0.3));
  CHECK(s.energy.table.vector_op[static_cast<int>(VectorOp::kExp)].value() == 15);
  CHECK(s.energy.table.dram_per_bit.at("hbm2").value() == Approx(3.9));
  // 2 cores x 2 MXUs x 8 x 8 PEs x 1 GHz, bf16 at half rate.
  CHECK(s.peak_macs_per_second(DType::kInt8) == Approx(2 * 2 * 64 * 1e9));
  CHECK(s.peak_macs_per_second(DType::kBf16) == Approx(2 * 2 * 64 * 1e9 * 0.5));
  CHECK(s.peak_macs_per_second(DType::kFp32) == 0);
}

TEST_CASE("chip config: omitted keys take the documented defaults and appear resolved",
          "[config][chip]") {
  TempDir dir;
  const ChipConfig c = load_chip_config(write_chip(dir));
  const CoreSpec& core = c.spec.core;
  const MxuSpec mxu_defaults;
  CHECK(core.mxu.dataflow == mxu_defaults.dataflow);
  CHECK(core.mxu.weight_double_buffer == mxu_defaults.weight_double_buffer);
  CHECK(core.sequencer.queue_depth == SequencerSpec{}.queue_depth);
  CHECK(core.dma.engines == DmaSpec{}.engines);
  CHECK(c.spec.noc.topology == NocSpec{}.topology);
  CHECK(c.spec.memory.model == MemorySpec{}.model);
  // The resolved tree names every key in force, defaults included, in the config's own units.
  const auto text = [&](const std::string& path) {
    const ConfigNode* n = find_path(c.resolved, path);
    REQUIRE(n != nullptr);
    return n->text();
  };
  CHECK(text("core.mxu.dataflow") == "ws");
  CHECK(text("core.mxu.weight_double_buffer") == "true");
  CHECK(text("core.sequencer.queue_depth") == "16");
  CHECK(text("core.vpu.ops.exp.latency") == "2 cycles");
  // Numbers as a person writes them, not printf's "1.000000".
  CHECK(text("core.vpu.ops.exp.throughput") == "1");
  const ConfigNode defaulted =
      load_chip_config(write_chip(dir), {"core.mxu={rows: 8, cols: 8}"}).resolved;
  REQUIRE(find_path(defaulted, "core.mxu.precisions.bf16") != nullptr);
  CHECK(find_path(defaulted, "core.mxu.precisions.bf16")->text() == "1");
  CHECK(text("core.dma.chunk") == "512 B");
  CHECK(text("memory.latency") == "100 ns");
  CHECK(text("memory.hbm.timing.tRCD") == "14 cycles");
  CHECK(text("noc.topology") == "crossbar");
  CHECK(text("clock") == "1 GHz");
  CHECK(find_path(c.resolved, "memory.hbm.extends") == nullptr);
  // Sections left out whole show their defaults too.
  CHECK(text("memory.hbm.controller.queue_depth") == std::to_string(DramSpec{}.queue_depth));
  CHECK(text("memory.hbm.controller.scheduler") == "frfcfs");
  CHECK(text("memory.hbm.controller.page_policy") == "open");
  CHECK(text("memory.hbm.controller.engine") == "command");
  const ConfigNode* rounding = find_path(c.resolved, "core.mxu.rounding");
  REQUIRE(rounding != nullptr);
  CHECK(rounding->is_map());
  CHECK(rounding->entries().empty());
}

TEST_CASE("chip config: --set overrides are bound and validated like file values",
          "[config][chip][set]") {
  TempDir dir;
  const std::string path = write_chip(dir);
  const ChipConfig c = load_chip_config(
      path, {"core.mxu.rows=16", "core.mxu.cols=4", "memory.model=hbm", "core.mxu.dataflow=os"});
  CHECK(c.spec.core.mxu.rows == 16);
  CHECK(c.spec.core.mxu.cols == 4);
  CHECK(c.spec.memory.model == MemoryModel::kHbm);
  CHECK(c.spec.core.mxu.dataflow == Dataflow::kOutputStationary);
  CHECK(error_of([&] { load_chip_config(path, {"core.mxu.rows=0"}); }) ==
        "--set core.mxu.rows=0: core.mxu.rows: expected an integer from 1 to 4096, got \"0\"");
  CHECK(error_of([&] { load_chip_config(path, {"core.mxu.rwos=4"}); }) ==
        "--set core.mxu.rwos=4: core.mxu.rwos: unknown key; did you mean 'rows'?");
  // Removing a required key is the --set's doing, not the file's; removing a misspelt key is
  // caught as any unknown key.
  CHECK(error_of([&] { load_chip_config(path, {"clock=null"}); }) ==
        "--set clock=null: clock: a required key: null removes it");
  CHECK(error_of([&] { load_chip_config(path, {"core.vmem=null"}); }) ==
        "--set core.vmem=null: core.vmem: a required key: null removes it");
  CHECK(error_of([&] { load_chip_config(path, {"core.mxu.rwos=null"}); }) ==
        "--set core.mxu.rwos=null: core.mxu.rwos: unknown key; did you mean 'rows'?");
  // An optional key removed reads as absent: its default.
  CHECK(load_chip_config(path, {"cores=null"}).spec.cores == 1);
}

TEST_CASE("chip config: unknown keys name the nearest valid key", "[config][chip][errors]") {
  const Edited typo("    rows: 8", "    rwos: 8");
  CHECK(typo.error() == typo.at("rwos") + ": core.mxu.rwos: unknown key; did you mean 'rows'?");
  const Edited top("cores: 2", "cores: 2\nclok: 1 GHz");
  CHECK(top.error() == top.at("clok") + ": clok: unknown key; did you mean 'clock'?");
  const Edited far("cores: 2", "cores: 2\nzzzzzzzz: 1");
  CHECK_THAT(far.error(), Catch::StartsWith(far.at("zzzzzzzz") + ": zzzzzzzz: unknown key (valid keys here: "));
  // A typo in a file the chip extends is named in that file.
  TempDir dir;
  const std::string chip = write_chip(dir);
  const std::string hbm = replaced(tpusim::test::kHbm, "tRCD: 14 cycles", "tRDC: 14 cycles");
  dir.write("hbm.yaml", hbm);
  CHECK(error_of([&] { load_chip_config(chip); }) ==
        dir.path("hbm.yaml") + ":" + position_of(hbm, "tRDC") +
            ": memory.hbm.timing.tRCD: missing required key; is 'tRDC' a misspelling of it?");
  // A key that is simply missing is not taken for a misspelling of another valid key, even one
  // read after it (tRTW is optional, tRP required).
  const std::string missing = replaced(tpusim::test::kHbm, "  tRCD: 14 cycles\n", "");
  dir.write("hbm.yaml", missing);
  CHECK_THAT(error_of([&] { load_chip_config(chip); }),
             Catch::EndsWith(": memory.hbm.timing.tRCD: missing required key"));
  // A chip that removes a required key of the file it extends is named at its own null.
  dir.write("hbm.yaml", tpusim::test::kHbm);
  const std::string nulled = replaced(kMinimalChip, "    extends: hbm.yaml",
                                      "    extends: hbm.yaml\n    timing: {tRP: null}");
  const std::string nulled_chip = write_chip(dir, nulled, "nulled.yaml");
  CHECK(error_of([&] { load_chip_config(nulled_chip); }) ==
        nulled_chip + ":" + position_of(nulled, "tRP: null") +
            ": memory.hbm.timing.tRP: a required key: null removes it");
  const std::string optional_typo = replaced(tpusim::test::kHbm, "bank_groups", "bank_gruops");
  dir.write("hbm.yaml", optional_typo);
  CHECK(error_of([&] { load_chip_config(chip); }) ==
        dir.path("hbm.yaml") + ":" + position_of(optional_typo, "bank_gruops") +
            ": memory.hbm.bank_gruops: unknown key; did you mean 'bank_groups'?");
}

TEST_CASE("chip config: wrong types, units and ranges are named with the key",
          "[config][chip][errors]") {
  const Edited bare("clock: 1 GHz", "clock: 1000");
  CHECK(bare.error() == bare.at("1000") +
                            ": clock: expected a frequency such as \"940 MHz\" (units: Hz, kHz, MHz, "
                            "GHz), got \"1000\" with no unit");
  // Not 0 in a unit "x64 MHz".
  const Edited hex("clock: 1 GHz", "clock: 0x40 MHz");
  CHECK_THAT(hex.error(), Catch::EndsWith("got \"0x40 MHz\": write the number in decimal"));
  // Reports print the name on one line.
  const Edited control("name: test-chip", "name: \"test\\nchip\"");
  CHECK(control.error() == control.at("\"test") +
                               ": name: expected a name without control characters (reports "
                               "print it on one line)");
  const Edited unit("capacity: 64 KiB", "capacity: 64 Kib");
  CHECK(unit.error() == unit.at("64 Kib") +
                            ": core.vmem.capacity: unknown size unit \"Kib\" in \"64 Kib\" (units: B, "
                            "KiB, MiB, GiB, TiB, KB, kB, MB, GB, TB)");
  const Edited negative("capacity: 64 KiB", "capacity: -64 KiB");
  CHECK(negative.error() == negative.at("-64") +
                                ": core.vmem.capacity: expected a non-negative size, got \"-64 KiB\"");
  const Edited zero("    rows: 8", "    rows: 0");
  CHECK(zero.error() == zero.at("0\n") + ": core.mxu.rows: expected an integer from 1 to 4096, got \"0\"");
  const Edited text("cores: 2", "cores: two");
  CHECK(text.error() == text.at("two") + ": cores: expected an integer from 1 to 1024, got \"two\"");
  const Edited absurd("capacity: 1 GiB", "capacity: 4 PiB");
  CHECK_THAT(absurd.error(), Catch::StartsWith(absurd.at("4 PiB") + ": memory.capacity: unknown size unit"));
  const Edited huge("capacity: 64 KiB", "capacity: 2 TiB");
  CHECK(huge.error() == huge.at("2 TiB") +
                            ": core.vmem.capacity: expected a size from 1 B to 1 TiB, got 2 TiB");
  const Edited clock("clock: 1 GHz", "clock: 500 GHz");
  CHECK(clock.error() == clock.at("500 GHz") +
                             ": clock: expected a clock from 1 kHz to 100 GHz, got 500 GHz");
  const Edited choice("    rows: 8", "    rows: 8\n    dataflow: diagonal");
  CHECK(choice.error() == choice.at("diagonal") +
                              ": core.mxu.dataflow: expected one of ws, os, is, got \"diagonal\"");
  const Edited flag("    rows: 8", "    rows: 8\n    weight_double_buffer: yes please");
  CHECK(flag.error() == flag.at("yes please") +
                            ": core.mxu.weight_double_buffer: expected true or false, got \"yes please\"");
  const Edited dtype("{int8: 1, bf16: 0.5}", "{int9: 1}");
  CHECK(dtype.error() == dtype.at("int9") +
                             ": core.mxu.precisions.int9: unknown dtype (expected one of int8, int16, "
                             "int32, bf16, fp32, fp8)");
  const Edited rate("{int8: 1, bf16: 0.5}", "{int8: 0}");
  CHECK(rate.error() ==
        rate.at("0}") +
            ": core.mxu.precisions.int8: expected a number from 1/1024 to 16, got \"0\"");
  // The range the message gives is the one applied: NaN is refused with the same words.
  const Edited nan("{int8: 1, bf16: 0.5}", "{int8: .nan}");
  CHECK(nan.error() == nan.at(".nan") +
                           ": core.mxu.precisions.int8: expected a number from 1/1024 to 16, got "
                           "\".nan\"");
  // A rate of 1e-20 made an instruction's cycle count overflow to 1: a floor keeps counts in range.
  const Edited tiny("{int8: 1, bf16: 0.5}", "{int8: 1e-20}");
  CHECK(tiny.error() == tiny.at("1e-20") +
                            ": core.mxu.precisions.int8: expected a number from 1/1024 to 16, got "
                            "\"1e-20\"");
  const Edited least("{int8: 1, bf16: 0.5}", "{int8: 0.0009765625}");
  CHECK_NOTHROW(load_chip_config(least.path));
  CHECK_THAT(
      error_of([&] { load_chip_config(least.path, {"core.vpu.ops.gelu.throughput=0.0009"}); }),
      Catch::EndsWith("core.vpu.ops.gelu.throughput: expected a number from 1/1024 to 64, got "
                      "\"0.0009\""));
  const Edited none("{int8: 1, bf16: 0.5}", "{}");  // the key, not "core.mxu.precisions."
  CHECK(none.error() ==
        none.at("{}") + ": core.mxu.precisions: at least one operand dtype is required");
  const Edited section("  vmem:\n    capacity: 64 KiB\n    banks: 4\n    port_width: 32 B",
                       "  vmem: 64 KiB");
  CHECK(section.error() == section.at("64 KiB") +
                               ": core.vmem: expected a section of keys, got a value");
  const Edited list("name: test-chip", "name: [a, b]");
  CHECK(list.error() == list.at("[a, b]") + ": name: expected a value, got a list");
}

TEST_CASE("chip config: missing required keys are named at their section", "[config][chip][errors]") {
  const Edited no_clock("clock: 1 GHz\n", "");
  CHECK(no_clock.error() == no_clock.path + ":1:1: clock: missing required key");
  const Edited null_clock("clock: 1 GHz\n", "clock:\n");  // written, but empty: named there
  CHECK(null_clock.error() == null_clock.at("clock:") + ": clock: a required key: null removes it");
  const Edited no_capacity("    capacity: 64 KiB\n", "");
  CHECK(no_capacity.error() == no_capacity.at("vmem") + ": core.vmem.capacity: missing required key");
  const Edited no_energy("energy:\n  table: energy.yaml\n", "");
  CHECK(no_energy.error() == no_energy.path + ":1:1: energy: missing required key");
  // The DRAM organisation is needed whatever the model: its standard prices off-chip energy.
  const Edited no_hbm("  hbm:\n    extends: hbm.yaml\n", "");
  CHECK(no_hbm.error() ==
        no_hbm.at("capacity: 1 GiB") +
            ": memory.hbm: missing required key: the DRAM organisation, needed by every model "
            "(its standard prices off-chip energy), e.g. 'hbm: {extends: "
            "../memory/hbm2-2400.yaml}'");
  // cores is not required: one core, as documented.
  TempDir one_core;
  CHECK(
      load_chip_config(write_chip(one_core, replaced(kMinimalChip, "cores: 2\n", ""))).spec.cores ==
      1);
  const Edited no_table("table: energy.yaml", "table: nowhere.yaml");
  CHECK(no_table.error() == no_table.at("nowhere.yaml") + ": energy.table: '" +
                                no_table.dir.path("nowhere.yaml") + "': no such file");
}

TEST_CASE("chip config: cross-field rules each reject at their boundary", "[config][chip][rules]") {
  SECTION("a memory must divide evenly into its banks") {
    const Edited e("    banks: 4", "    banks: 3");
    CHECK(e.error() == e.at("3\n") + ": core.vmem.banks: 64 KiB does not divide into 3 equal banks");
  }
  SECTION("vector memory holds one weight tile of the widest operand") {
    // 8 x 8 PEs, widest operand bf16 (2 B): 128 B fits exactly, 127 B does not.
    TempDir dir;
    std::string text = replaced(kMinimalChip, "capacity: 64 KiB", "capacity: 128 B");
    text = replaced(text, "    banks: 4\n", "    banks: 1\n");
    text = replaced(text, "port_width: 32 B", "port_width: 32 B\n  dma: {chunk: 64 B}");
    CHECK_NOTHROW(load_chip_config(write_chip(dir, text)));
    const std::string small = replaced(text, "capacity: 128 B", "capacity: 127 B");
    CHECK(error_of([&] { load_chip_config(write_chip(dir, small)); }) ==
          dir.path("chip.yaml") + ":" + position_of(small, "127 B") +
              ": core.vmem.capacity: 127 B cannot hold one 8x8 weight tile (128 B)");
  }
  SECTION("accumulator memory holds one tile of 32-bit accumulators") {
    // 8 x 8 x 4 B = 256 B.
    TempDir dir;
    const std::string fits = replaced(kMinimalChip, "capacity: 16 KiB", "capacity: 256 B");
    CHECK_NOTHROW(load_chip_config(write_chip(dir, fits)));
    const std::string small = replaced(kMinimalChip, "capacity: 16 KiB", "capacity: 254 B");
    CHECK(error_of([&] { load_chip_config(write_chip(dir, small)); }) ==
          dir.path("chip.yaml") + ":" + position_of(small, "254 B") +
              ": core.accmem.capacity: 254 B cannot hold one 8x8 tile of 32-bit accumulators (256 B)");
  }
  SECTION("memory capacity fits the DRAM organisation") {
    // The organisation holds exactly 4 GiB (see test_support.h).
    TempDir dir;
    const std::string fits = replaced(kMinimalChip, "capacity: 1 GiB", "capacity: 4 GiB");
    CHECK_NOTHROW(load_chip_config(write_chip(dir, fits)));
    const std::string big = replaced(kMinimalChip, "capacity: 1 GiB", "capacity: 4294967297 B");
    CHECK(error_of([&] { load_chip_config(write_chip(dir, big)); }) ==
          dir.path("chip.yaml") + ":" + position_of(big, "4294967297 B") +
              ": memory.capacity: 4294967297 B exceeds the 4 GiB that the memory.hbm organisation holds");
  }
  SECTION("tRC covers tRAS + tRP") {
    TempDir dir;
    write_chip(dir);
    const std::string path = dir.path("chip.yaml");
    CHECK_NOTHROW(load_chip_config(path, {"memory.hbm.timing.tRC=48 cycles"}));
    CHECK(error_of([&] { load_chip_config(path, {"memory.hbm.timing.tRC=47 cycles"}); }) ==
          "--set memory.hbm.timing.tRC=47 cycles: memory.hbm.timing.tRC: tRC (47 tCK at "
          "memory.hbm.clock 1 GHz) "
          "must be at "
          "least tRAS + tRP (48 tCK)");
    CHECK_THAT(
        error_of([&] { load_chip_config(path, {"memory.hbm.timing.tRAS=13 cycles"}); }),
        Catch::EndsWith("memory.hbm.timing.tRAS: tRAS (13 tCK at memory.hbm.clock 1 GHz) must be "
                        "at least tRCD (14 tCK): "
                        "a row stays open until its first column access"));
  }
  SECTION("a burst takes whole DRAM cycles, and same-group turnaround is no shorter") {
    TempDir dir;
    const std::string path = write_chip(dir);
    // BL4 at 2 transfers per clock: 2 cycles. At 3 it would hold the bus 4/3 cycles.
    CHECK_NOTHROW(load_chip_config(path, {"memory.hbm.transfers_per_clock=4"}));
    CHECK(
        error_of([&] { load_chip_config(path, {"memory.hbm.transfers_per_clock=3"}); }) ==
        "--set memory.hbm.transfers_per_clock=3: memory.hbm.transfers_per_clock: burst_length (4) "
        "must "
        "be a multiple of transfers_per_clock (3): a burst takes whole DRAM cycles");
    CHECK_NOTHROW(load_chip_config(path, {"memory.hbm.timing.tWTR_L=6 cycles"}));
    CHECK(error_of([&] { load_chip_config(path, {"memory.hbm.timing.tWTR_L=5 cycles"}); }) ==
          "--set memory.hbm.timing.tWTR_L=5 cycles: memory.hbm.timing.tWTR_L: tWTR_L must be >= "
          "tWTR_S");
  }
  SECTION("tREFI leaves time to serve a request between refreshes") {
    TempDir dir;
    const std::string path = write_chip(dir);
    // test_support.h's timing at 1 GHz: tRFC 260 + tRP 14 + max(tRAS 34, tRTP 4, tWL 4 + burst 2
    // + tWR 16) + tRCD 14 + 1 = 323 tCK.
    CHECK_NOTHROW(load_chip_config(path, {"memory.hbm.timing.tREFI=323 cycles"}));
    CHECK(error_of([&] { load_chip_config(path, {"memory.hbm.timing.tREFI=322 cycles"}); }) ==
          "--set memory.hbm.timing.tREFI=322 cycles: memory.hbm.timing.tREFI: tREFI (322 tCK at "
          "memory.hbm.clock 1 GHz) must "
          "be at least tRFC + tRP + max(tRAS, tRTP, tWL + burst + tWR) + tRCD + 1 (323 tCK), or a "
          "refresh could leave no time to open a row and read it");
    // A write's recovery can be the longest wait: tWL 4 + burst 2 + tWR 40 = 46 > tRAS.
    CHECK(error_of([&] {
            load_chip_config(
                path, {"memory.hbm.timing.tWR=40 cycles", "memory.hbm.timing.tREFI=334 cycles"});
          }).find("(335 tCK)") != std::string::npos);
    // Timings are in ns: a slow clock breaks a rule in cycles, and the message names the clock.
    CHECK_THAT(error_of([&] { load_chip_config(path, {"memory.hbm.clock=1 kHz"}); }),
               Catch::Contains("(1 tCK at memory.hbm.clock 1 kHz)"));
  }
  SECTION("the address mapping names each field once") {
    TempDir dir;
    const std::string path = write_chip(dir);
    CHECK_NOTHROW(load_chip_config(path, {"memory.hbm.address_mapping=ch-ro-bg-ba-co"}));
    CHECK(error_of([&] { load_chip_config(path, {"memory.hbm.address_mapping=ro-ba-ch-co"}); }) ==
          "--set memory.hbm.address_mapping=ro-ba-ch-co: memory.hbm.address_mapping: "
          "\"ro-ba-ch-co\" must name each of ro ba bg ch co exactly once");
    CHECK(error_of([&] { load_chip_config(path, {"memory.hbm.address_mapping=ro-ba-bg-ch-co-xx"}); }) ==
          "--set memory.hbm.address_mapping=ro-ba-bg-ch-co-xx: memory.hbm.address_mapping: unknown "
          "field 'xx' in \"ro-ba-bg-ch-co-xx\" (fields: ro ba bg ch co)");
  }
  SECTION("the energy table prices every precision and the DRAM standard") {
    TempDir dir;
    const std::string path = write_chip(dir);
    // The rule names the table, where the missing price would be added.
    CHECK(error_of([&] { load_chip_config(path, {"core.mxu.precisions={fp32: 1}"}); }) ==
          path + ":" + position_of(kMinimalChip, "energy.yaml") + ": energy.table: energy table 'test-energy' has no mac "
          "energy for fp32, which core.mxu.precisions lists");
    CHECK(error_of([&] { load_chip_config(path, {"memory.hbm.standard=hbm9"}); }) ==
          "--set memory.hbm.standard=hbm9: memory.hbm.standard: energy table 'test-energy' has no "
          "dram_per_bit entry for 'hbm9'");
  }
  SECTION("a mesh is no wider than its nodes") {
    // 2 cores + 16 simple-model channels = 18 nodes.
    TempDir dir;
    const std::string path = write_chip(dir);
    CHECK_NOTHROW(load_chip_config(path, {"noc.topology=mesh", "noc.mesh_columns=18"}));
    CHECK_THAT(error_of([&] { load_chip_config(path, {"noc.topology=mesh", "noc.mesh_columns=19"}); }),
               Catch::EndsWith("noc.mesh_columns: 19 columns for a mesh of only 18 nodes (cores + "
                               "memory channels)"));
  }
}

TEST_CASE("chip config: core.mxu.rounding maps operand types onto the array's precisions",
          "[config][chip][rules]") {
  TempDir dir;
  const std::string path = write_chip(dir);  // precisions {int8: 1, bf16: 0.5}
  const ChipSpec s = load_chip_config(path, {"core.mxu.rounding={fp32: bf16}"}).spec;
  CHECK(s.core.mxu.rounding.at(DType::kFp32) == DType::kBf16);
  CHECK(mxu_precision(s.core.mxu, DType::kFp32) == DType::kBf16);
  CHECK(mxu_precision(s.core.mxu, DType::kInt8) == DType::kInt8);
  CHECK(!mxu_precision(s.core.mxu, DType::kInt16));
  CHECK(load_chip_config(path).spec.core.mxu.rounding.empty());
  const auto with = [&](const std::string& set) {
    return error_of([&] { load_chip_config(path, {set}); });
  };
  CHECK(with("core.mxu.rounding={fp32: fp8}") ==
        "--set core.mxu.rounding={fp32: fp8}: core.mxu.rounding.fp32: rounds to fp8, which is not "
        "in core.mxu.precisions (core.mxu.rounding={} rounds nothing)");
  CHECK(with("core.mxu.rounding={bf16: bf16}") ==
        "--set core.mxu.rounding={bf16: bf16}: core.mxu.rounding.bf16: bf16 is a precision of the "
        "array (core.mxu.precisions), so it is not rounded");
  CHECK(with("core.mxu.rounding={fp32: int8}") ==
        "--set core.mxu.rounding={fp32: int8}: core.mxu.rounding.fp32: rounds fp32 to int8: one "
        "is an integer type, the other a floating one");
  CHECK(with("core.mxu.rounding={fp33: bf16}") ==
        "--set core.mxu.rounding={fp33: bf16}: core.mxu.rounding.fp33: unknown dtype (expected one "
        "of int8, int16, int32, bf16, fp32, fp8)");
  CHECK(with("core.mxu.rounding={fp32: bf17}") ==
        "--set core.mxu.rounding={fp32: bf17}: core.mxu.rounding.fp32: rounds to 'bf17', not a "
        "dtype (expected one of int8, int16, int32, bf16, fp32, fp8)");
}

TEST_CASE("chip config: model: cycle accepts what it models exactly, up to 4096 PEs",
          "[config][chip][rules]") {
  TempDir dir;
  const std::string path = write_chip(dir);
  // 64 x 64 int8: the largest array; a 64-element int8 row needs a 64 B port.
  const std::vector<std::string> ok = {
      "core.mxu.model=cycle",       "core.mxu.precisions={int8: 1}", "core.mxu.rows=64",
      "core.mxu.cols=64",           "core.vmem.port_width=64 B",     "core.accmem.capacity=64 KiB"};
  CHECK_NOTHROW(load_chip_config(path, ok));
  const auto with = [&](const std::string& set) {
    std::vector<std::string> v = ok;
    v.push_back(set);
    return error_of([&] { load_chip_config(path, v); });
  };
  CHECK(with("core.mxu.cols=65") ==
        "--set core.mxu.model=cycle: core.mxu.model: cycle simulates every PE; a 64x65 array "
        "(4160 PEs) is above its limit of 4096 PEs; use model: fast");
  CHECK(with("core.vmem.port_width=63 B") ==
        "--set core.vmem.port_width=63 B: core.vmem.port_width: model: cycle streams a whole "
        "array row per cycle, 64 B, but the port moves 63 B per cycle");
  CHECK(with("core.mxu.precisions={int8: 1, bf16: 1}") ==
        "--set core.mxu.precisions={int8: 1, bf16: 1}: core.mxu.precisions: model: cycle carries "
        "integer operands at rate 1; bf16 at rate 1 needs model: fast");
  CHECK(with("core.mxu.precisions={int8: 2}") ==
        "--set core.mxu.precisions={int8: 2}: core.mxu.precisions: model: cycle carries integer "
        "operands at rate 1; int8 at rate 2 needs model: fast");
  CHECK(with("core.mxu.rounding={int16: int8}") ==
        "--set core.mxu.rounding={int16: int8}: core.mxu.rounding: model: cycle runs its "
        "precisions only; rounding other operand types needs model: fast");
  CHECK_NOTHROW(load_chip_config(path, {"core.mxu.model=fast", "core.mxu.cols=65"}));
}

TEST_CASE("chip config: energy table errors point into the table file", "[config][chip][energy]") {
  TempDir dir;
  const std::string chip = write_chip(dir);
  const std::string table = replaced(tpusim::test::kEnergyTable, "  exp: 15 pJ\n", "");
  dir.write("energy.yaml", table);
  CHECK(error_of([&] { load_chip_config(chip); }) ==
        dir.path("energy.yaml") + ":" + position_of(table, "vector_op") +
            ": vector_op.exp: missing required key (in the energy table named by energy.table)");
  const std::string unsorted = replaced(tpusim::test::kEnergyTable, "macro: 1 MiB", "macro: 4 KiB");
  dir.write("energy.yaml", unsorted);
  CHECK(error_of([&] { load_chip_config(chip); }) ==
        dir.path("energy.yaml") + ":" + position_of(unsorted, "4 KiB") +
            ": sram[1].macro: sram points must be listed by increasing macro size (in the energy "
            "table named by energy.table)");
}

TEST_CASE("chip config: every preset in configs/chips validates", "[config][chip][presets]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(TPUSIM_SOURCE_DIR) / "configs" / "chips";
  int presets = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".yaml") continue;
    INFO(entry.path().string());
    ChipSpec spec;
    REQUIRE_NOTHROW(spec = load_chip_config(entry.path().string()).spec);
    CHECK(spec.name == entry.path().stem().string());
    ++presets;
  }
  CHECK(presets >= 8);
}

TEST_CASE("chip config: the energy table path is relative to its file, or to the working "
          "directory for --set, and resolves to an absolute path", "[config][chip][energy]") {
  TempDir dir;
  const std::string chip = write_chip(dir);
  const ChipConfig c = load_chip_config(chip);
  CHECK(c.spec.energy.table_path == dir.path("energy.yaml"));
  CHECK(find_path(c.resolved, "energy.table")->text() == dir.path("energy.yaml"));
  // The resolved config, saved anywhere, loads to the same chip.
  TempDir elsewhere;
  const std::string saved = elsewhere.write("saved.yaml", to_yaml(c.resolved));
  CHECK(load_chip_config(saved).spec.energy.table.name == "test-energy");
  const std::filesystem::path cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir.path(""));
  const ChipConfig relative = load_chip_config(chip, {"energy.table=energy.yaml"});
  std::filesystem::current_path(cwd);
  CHECK(relative.spec.energy.table_path == dir.path("energy.yaml"));
}

TEST_CASE("chip config: compiler.activations is hbm or vmem, and vmem needs one core",
          "[config][chip]") {
  TempDir dir;
  const ChipConfig c = load_chip_config(write_chip(dir));
  CHECK(c.spec.compiler.activations == ActivationHome::kHbm);
  REQUIRE(find_path(c.resolved, "compiler.activations") != nullptr);
  CHECK(find_path(c.resolved, "compiler.activations")->text() == "hbm");
  const Edited one_core("cores: 2", "cores: 1\ncompiler: {activations: vmem}");
  CHECK(load_chip_config(one_core.path).spec.compiler.activations == ActivationHome::kVmem);
  const Edited two_cores("cores: 2", "cores: 2\ncompiler: {activations: vmem}");
  CHECK(two_cores.error() == two_cores.at("vmem") +
                                 ": compiler.activations: vmem needs cores: 1 (each core has its "
                                 "own vector memory; cores exchange activations through HBM)");
  const Edited typo("cores: 2", "cores: 2\ncompiler: {activations: vram}");
  CHECK(typo.error() ==
        typo.at("vram") + ": compiler.activations: expected one of hbm, vmem, got \"vram\"");
}

TEST_CASE("chip config: memory-system keys bind, and bad values are named with their key",
          "[config][chip][memory]") {
  TempDir dir;
  const std::string path = write_chip(dir);
  CHECK(load_chip_config(path).spec.memory.hbm.timing.tRTW.cycles(Hertz(1e9)).value() == 0);
  const ChipConfig c = load_chip_config(
      path, {"memory.hbm.timing.tRTW=9 cycles", "memory.hbm.controller.page_policy=close",
             "memory.hbm.controller.scheduler=fcfs", "noc.topology=mesh", "noc.mesh_columns=3",
             "noc.hop_latency=0 cycles"});
  CHECK(c.spec.memory.hbm.timing.tRTW.cycles(c.spec.memory.hbm.clock).value() == 9);
  CHECK(c.spec.memory.hbm.page_policy == PagePolicy::kClose);
  CHECK(c.spec.memory.hbm.scheduler == DramScheduler::kFcfs);
  CHECK(c.spec.noc.topology == NocTopology::kMesh);
  CHECK(c.spec.noc.mesh_columns == 3);
  CHECK(c.spec.memory.hbm.engine == DramEngine::kCommand);
  CHECK(load_chip_config(path, {"memory.hbm.controller.engine=timeline"}).spec.memory.hbm.engine ==
        DramEngine::kTimeline);
  CHECK_THAT(error_of([&] {
               load_chip_config(path, {"memory.hbm.controller.engine=timeline",
                                       "memory.hbm.controller.scheduler=fcfs"});
             }),
             Catch::Contains("memory.hbm.controller.engine: the timeline engine models FR-FCFS "
                             "with an open page only"));
  const Edited topology("cores: 2", "cores: 2\nnoc: {topology: torus}");
  CHECK(topology.error() == topology.at("torus") +
                                ": noc.topology: expected one of crossbar, mesh, got \"torus\"");
  const Edited columns("cores: 2", "cores: 2\nnoc: {topology: mesh, mesh_columns: 100}");
  CHECK(columns.error() == columns.at("100") +
                               ": noc.mesh_columns: 100 columns for a mesh of only 18 nodes (cores + "
                               "memory channels)");
  const std::string bad = replaced(tpusim::test::kHbm, "  tREFI: 3.9 us", "  tREFI: 3.9 us\n  tRTW: soon");
  dir.write("hbm.yaml", bad);
  CHECK_THAT(error_of([&] { load_chip_config(path); }),
             Catch::StartsWith(dir.path("hbm.yaml") + ":" + position_of(bad, "soon") +
                               ": memory.hbm.timing.tRTW: "));
}

TEST_CASE("chip config: DRAM presets give TPUv1 its 34 GB/s and map bank groups lowest",
          "[config][chip][presets][memory]") {
  const auto chip = [](const char* name) {
    return load_chip_config(std::string(TPUSIM_SOURCE_DIR) + "/configs/chips/" + name + ".yaml").spec;
  };
  // 2 channels x 64 bits x 2 transfers x 1066.67 MHz (DDR3-2133).
  CHECK(chip("tpu-v1").memory.hbm.peak_bandwidth().value() == Approx(2 * 8 * 2 * 1066.67e6));
  CHECK(chip("tpu-v1").memory.hbm.peak_bandwidth().value() == Approx(34e9).epsilon(0.01));
  // 2 stacks x 16 pseudo-channels x 64 bits x 2 transfers x 1.2 GHz.
  CHECK(chip("tpu-v4i").memory.hbm.peak_bandwidth().value() == Approx(2 * 16 * 8 * 2 * 1.2e9));
  for (const char* name : {"tpu-v1", "tpu-v2", "tpu-v3", "tpu-v4", "tpu-v4i", "tpu-v5e"}) {
    CHECK(chip(name).memory.hbm.address_mapping == "ro-ba-co-ch-bg");
    CHECK(chip(name).memory.hbm.channel_hash);
  }
}
