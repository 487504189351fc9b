// The vector unit through `tpusim exec` on the small chip of exec_support.h: issue and latency,
// pipelining and dependences, and how its operand streams use the on-chip memories' ports.

#include <utility>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/sim/exec_support.h"

using namespace tpusim::test::exec_chip;

TEST_CASE("exec: a vector op's stream holds one port at a time: other traffic never speeds it",
          "[exec][vpu][sram]") {
  // The exp holds the vector unit until cycle 12; meanwhile a 64 B load lands in vmem (chunk
  // 1, port 0 for a cycle) or in accmem. The move then reads 2 KiB of vmem, 32 cycles of one of
  // the two ports. With the load in vmem the other port is free for all of it, so the move takes
  // as long as without; it used to take both ports where one was fragmented and end sooner.
  const std::string sets =
      "--set memory.latency=10cycles --set core.vpu.lanes=64 --set core.vpu.sublanes=1 "
      "--set core.vpu.ops.exp.throughput=0.125";
  auto move_span = [&](const std::string& load_into) {
    const Run r =
        exec(".op 0 move \"v\"\n.core 0\nload dma0 dst=" + load_into +
                 ":0 src=hbm:0 elem=64\n"
                 "vpu.exp dtype=bf16 shape=[1,80] dst=vmem:8192 a=vmem:12288\n"
                 "vpu.move dtype=int32 shape=[8,64] dst=accmem:16384 a=vmem:24576\nhalt\n",
             sets);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    for (const json& e : r.trace["traceEvents"])
      if (e["ph"] == "X" && e["name"] == "vpu.move")
        return std::make_pair(e["ts"].get<double>(), e["dur"].get<double>());
    FAIL("no vpu.move event");
    return std::make_pair(0.0, 0.0);
  };
  const auto alone = move_span("accmem"), beside = move_span("vmem");
  CHECK(beside.first == alone.first);
  CHECK(beside.second == alone.second);
  CHECK(alone.second * 1000 >= 2048.0 / kPort);  // microseconds at 1 GHz: at least its port time
}

TEST_CASE("exec: vector ops take latency + issue cycles, reductions add their tree depth",
          "[exec][vpu]") {
  // A port wide enough that operands never limit: every transfer takes one cycle.
  const std::string wide = "--set core.vmem.port_width=64KiB ";
  const std::uint64_t lanes = 128, sublanes = 8;
  SECTION("exp at a quarter result per slot per cycle") {
    const std::uint64_t latency = 8, rows = 64, cols = 128;
    const std::uint64_t issue = rows * cols * 4 / (lanes * sublanes);  // throughput 0.25
    CHECK(
        cycles_of(
            kHeader + "vpu.exp dtype=fp32 shape=[64,128] dst=vmem:65536 a=vmem:0\nhalt\n",
            wide +
                "--set core.vpu.ops.exp.latency=8cycles --set core.vpu.ops.exp.throughput=0.25") ==
        kDispatch + latency + issue - 1);
  }
  SECTION("a row sum of 128 elements adds log2(128) levels") {
    const std::uint64_t latency = 2, issue = 1, tree = 7;
    CHECK(cycles_of(
              kHeader + "vpu.reduce_sum dtype=fp32 shape=[8,128] dst=vmem:65536 a=vmem:0\nhalt\n",
              wide) == kDispatch + latency + issue - 1 + tree);
  }
  SECTION("a narrow port makes the op wait for its operands") {
    // add [8,128] fp32: a and b (4 KiB each) stream through the two 64 B ports for 64 cycles,
    // plus one cycle of read latency; the result then waits for a port: 64 more cycles.
    CHECK(
        cycles_of(kHeader +
                  "vpu.add dtype=fp32 shape=[8,128] dst=vmem:65536 a=vmem:0 b=vmem:4096\nhalt\n") ==
        kDispatch + 64 + 64);
  }
}

TEST_CASE("exec: a vector mac reads its accumulator from the memory it writes", "[exec][vpu]") {
  // a and b (8 x 128 fp32 each) in vmem, the accumulator in accmem: read there, then written.
  const Run r = exec(
      ".op 0 dw \"v\"\n.core 0\n"
      "vpu.mac dtype=fp32 shape=[8,128] dst=accmem:0 a=vmem:0 b=vmem:8192\nhalt\n");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const std::uint64_t tile = 8 * 128 * 4;
  const json vmem = unit_stats(r.report, "chip.core0.vmem");
  const json accmem = unit_stats(r.report, "chip.core0.accmem");
  CHECK(vmem["read_bytes"].get<std::uint64_t>() == 2 * tile);
  CHECK(vmem["write_bytes"].get<std::uint64_t>() == 0);
  CHECK(accmem["read_bytes"].get<std::uint64_t>() == tile);
  CHECK(accmem["write_bytes"].get<std::uint64_t>() == tile);
}

TEST_CASE("exec: independent vector ops pipeline, dependent ones wait for the result",
          "[exec][vpu]") {
  // Wide ports, and three of them: each add reads a and b and writes dst in the same cycle.
  const std::string wide = "--set core.vmem.port_width=64KiB --set core.vmem.ports=3";
  // add [8,128] fp32: one issue cycle (1024 elements, 1024 slots), latency 2.
  const std::uint64_t n = 10, latency = 2;
  std::string independent = kHeader, chained = kHeader;
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::string dst = std::to_string(65536 + i * 4096);
    independent += "vpu.add dtype=fp32 shape=[8,128] dst=vmem:" + dst + " a=vmem:0 b=vmem:4096\n";
    const std::string src = i == 0 ? "0" : std::to_string(65536 + (i - 1) * 4096);
    chained +=
        "vpu.add dtype=fp32 shape=[8,128] dst=vmem:" + dst + " a=vmem:" + src + " b=vmem:4096\n";
  }
  // Dispatched one per cycle, issued one per cycle: the last starts at cycle n.
  CHECK(cycles_of(independent + "halt\n", wide) == n + latency);
  // Each reads the one before: a full latency apart.
  CHECK(cycles_of(chained + "halt\n", wide) == kDispatch + n * latency);
}
