#pragma once
// The small chip the `tpusim exec` tests run on, whose every timing parameter is set here so each
// expected cycle count can be derived from the machine's structure, and helpers that run a
// program on it and read its report and trace.

#include <sys/wait.h>

#include <cstdlib>
#include <map>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/sim/test_support.h"

namespace tpusim::test::exec_chip {

using nlohmann::json;

// 1 GHz, so cycles and ns coincide. One memory channel of 64 B/cycle with a 100-cycle latency;
// DMA chunks of 512 B (8 channel cycles each), 64 in flight; vmem ports of 64 B/cycle. The
// interconnect is made transparent (wide links, no hop latency); test_memory.cpp times it.
inline const std::string kChip = R"(name: test-exec
clock: 1 GHz
cores: 2
core:
  sequencer: {queue_depth: 16, dispatch_latency: 1 cycles}
  mxu: {count: 1, rows: 16, cols: 16, precisions: {int8: 1}, writeback_latency: 1 cycles}
  vmem: {capacity: 1 MiB, banks: 8, port_width: 64 B, ports: 2}
  accmem: {capacity: 256 KiB, banks: 4, port_width: 64 B, ports: 1}
  dma: {engines: 2, max_outstanding: 64, chunk: 512 B, setup_latency: 8 cycles}
memory:
  capacity: 1 GiB
  channels: 1
  bandwidth: 64 B/cycle
  latency: 100 cycles
  hbm: {extends: hbm.yaml}
noc: {link_width: 1 KiB, hop_latency: 0 cycles}
energy: {table: energy.yaml}
)";

constexpr std::uint64_t R = 16, C = 16, kDispatch = 1, kWriteback = 1;
constexpr std::uint64_t kSetup = 8, kLatency = 100, kChunk = 512, kBytesPerCycle = 64, kPort = 64;

struct Run {
  int exit_code = -1;
  std::string err;
  json report;
  json trace;
};

inline Run exec_in(const TempDir& dir, const std::string& program, const std::string& sets) {
  dir.write("energy.yaml", tpusim::test::kEnergyTable);
  dir.write("hbm.yaml", tpusim::test::kHbm);
  const std::string chip = dir.write("chip.yaml", kChip);
  const std::string source = dir.write("p.tasm", program);
  const std::string out = dir.path("out");
  const std::string command = "timeout 60 '" TPUSIM_EXE "' exec -q -c '" + chip + "' '" + source +
                              "' -o '" + out + "' " + sets + " > /dev/null 2> '" + dir.path("err") +
                              "'";
  const int status = std::system(command.c_str());
  Run r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = slurp(dir.path("err"));
  if (r.exit_code == 0) {
    r.report = json::parse(slurp(out + "/report.json"));
    r.trace = json::parse(slurp(out + "/trace.json"));
  }
  return r;
}

inline Run exec(const std::string& program, const std::string& sets = "") {
  TempDir dir;
  return exec_in(dir, program, sets);
}

// The stats of the unit at `path` ("chip.core0.vmem"); fails the test when there is none.
inline json unit_stats(const json& report, const std::string& path) {
  for (const json& u : report["units"])
    if (u["path"] == path) return u["stats"];
  FAIL("no unit " << path);
  return {};
}

// Each trace thread's unit name, by (pid, tid).
inline std::map<std::pair<int, int>, std::string> thread_names(const json& trace) {
  std::map<std::pair<int, int>, std::string> names;
  for (const json& e : trace["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "thread_name")
      names[{e["pid"].get<int>(), e["tid"].get<int>()}] = e["args"]["name"].get<std::string>();
  return names;
}

inline std::uint64_t cycles_of(const std::string& program, const std::string& sets = "") {
  const Run r = exec(program, sets);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return r.report["cycles"].get<std::uint64_t>();
}

inline const std::string kHeader = ".op 0 matmul \"mm\"\n.core 0\n";

inline std::string tile(std::uint64_t m) {
  return "mxu.lw mxu0 src=vmem:0 k=16 n=16 dtype=int8\n"
         "mxu.mm mxu0 src=vmem:4096 dst=accmem:0 m=" +
         std::to_string(m) + " k=16 n=16 dtype=int8\n";
}

// A 64 KiB load on dma0 from hbm:0 into vmem:65536, alone on the memory channel: the first chunk
// issues after dispatch and setup, the channel then moves one chunk per 8 cycles, the last
// chunk's data arrives `latency` later and takes a port for chunk / port cycles.
constexpr std::uint64_t kLoadBytes = 64 * 1024;
constexpr std::uint64_t load_cycles(std::uint64_t dispatched_at, std::uint64_t bytes) {
  return dispatched_at + kSetup + bytes / kBytesPerCycle + kLatency + kChunk / kPort;
}
inline const std::string kLoad = "load dma0 dst=vmem:65536 src=hbm:0 elem=65536\n";

}  // namespace tpusim::test::exec_chip
