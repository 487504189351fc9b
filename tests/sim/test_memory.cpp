// The memory system end to end (`tpusim exec` on the shipped presets, memory.model hbm): a
// sequential stream reaches the peak its DRAM organisation allows and no more; a memory-bound
// program on TPUv4i and on TPUv1 differs by the ratio of their peaks; the memory model changes
// no functional output; the NoC shows up in the report. Peaks are derived here from the
// organisation each preset documents.

#include <sys/wait.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "models/hbm/dram_recording.h"
#include "sim/config/chip_config.h"
#include "tests/sim/test_support.h"

using nlohmann::json;
using tpusim::test::slurp;
using tpusim::test::TempDir;

namespace {

// Both ways of simulating the controller (models/hbm/README.md): every command, or one decision
// per piece on bank and bus timelines.
const char* const kEngines[] = {"command", "timeline"};
std::string hbm_with(const std::string& engine) {
  return "--set memory.model=hbm --set memory.hbm.controller.engine=" + engine;
}

// tpu-v4i: 2 stacks x 8 channels x 2 pseudo-channels x 64 bits x 2 transfers x 1.2 GHz.
constexpr double kV4iPeak = 2 * 8 * 2 * 8.0 * 2 * 1.2e9;  // 614.4 GB/s
// tpu-v1: 2 DDR3-2133 channels x 64 bits x 2 transfers x 1066.67 MHz.
constexpr double kV1Peak = 2 * 8.0 * 2 * 1066.67e6;  // 34.13 GB/s

// Runs `program` and returns its report.json; the terminal summary goes to `summary`, if given.
json exec(const TempDir& dir, const std::string& chip, const std::string& program,
          const std::string& sets, std::string* summary = nullptr) {
  const std::string source = dir.write("p.tasm", program);
  const std::string out = dir.path("out");
  const std::string command = "timeout 120 '" TPUSIM_EXE "' exec -q -c " + chip + " '" + source +
                              "' -o '" + out + "' " + sets + " > '" + dir.path("stdout") +
                              "' 2> '" + dir.path("err") + "'";
  const int status = std::system(command.c_str());
  INFO(slurp(dir.path("err")));
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  if (summary) *summary = slurp(dir.path("stdout"));
  return json::parse(slurp(out + "/report.json"));
}

// `bytes` streamed from hbm:0 into vmem by four DMA engines taking turns in 4 KiB blocks, so
// together they read one contiguous stream (as a compiler splits one weight tensor), then a
// tiny matmul that waits for all of it.
std::string stream_program(std::uint64_t bytes) {
  const std::uint64_t block = 4096, engines = 4, blocks = bytes / block / engines;
  std::ostringstream p;
  p << ".op 0 load \"weights\"\n.core 0\n";
  for (std::uint64_t e = 0; e < engines; ++e)
    p << "load dma" << e << " dst=vmem:" << e * block << " src=hbm:" << e * block
      << " elem=" << block << " count=[" << blocks << "] src_stride=[" << engines * block
      << "] dst_stride=[" << engines * block << "]\nsem.signal dma" << e << " s0\n";
  p << "sem.wait mxu0 s0 4\n"
       "mxu.lw mxu0 src=vmem:0 k=16 n=16 dtype=int8\n"
       "mxu.mm mxu0 src=vmem:4096 dst=accmem:0 m=16 k=16 n=16 dtype=int8\nhalt\n";
  return p.str();
}

// Bytes read over the time the loads took: from the first DMA's start to the last one's end
// (the longest engine busy span; the engines start together), so the tiny matmul after the
// stream does not dilute the figure.
double achieved_bandwidth(const json& report) {
  std::uint64_t span = 0;
  for (const json& u : report["units"])
    if (u["kind"] == "dma") span = std::max(span, u["stats"]["busy_cycles"].get<std::uint64_t>());
  return double(report["traffic_bytes"]["hbm_read"].get<std::uint64_t>()) /
         (double(span) / report["clock_hz"].get<double>());
}

}  // namespace

TEST_CASE("memory: a sequential stream over all channels reaches 90% of the HBM peak",
          "[memory][hbm][exec]") {
  for (const std::string engine : kEngines) {
    INFO("engine " << engine);
    TempDir dir;
    const json r = exec(dir, "tpu-v4i", stream_program(8 << 20), hbm_with(engine));
    const double bw = achieved_bandwidth(r);
    // Refresh alone takes tRFC / tREFI = 350 / 3900 = 9% of each channel's time when the channel
    // is always busy; a backlog lets most of it overlap, so about 7% is lost.
    CHECK(bw <= kV4iPeak);
    CHECK(bw >= 0.90 * kV4iPeak);
    REQUIRE(r["memory_channels"].size() == 32);
    for (const json& c : r["memory_channels"]) {
      // Every pseudo-channel carries 1/32 of the stream, almost all of it as row hits: one ACT
      // per 1 KiB page (32 bursts) at most, plus refresh closing rows.
      CHECK(c["read_bytes"] == (8 << 20) / 32);
      CHECK(c["row_hits"].get<double>() >= 0.95 * (8 << 20) / 32 / 32);
      CHECK(c["bus_utilization"].get<double>() <= 1.0);
      CHECK(c["p99_latency_s"].get<double>() >= c["avg_latency_s"].get<double>());
    }
    WARN("tpu-v4i stream (" << engine << "): " << bw / 1e9 << " GB/s = " << 100 * bw / kV4iPeak
                            << "% of peak");
  }
}

TEST_CASE("memory: a memory-bound program is slower on TPUv1's DDR3 by the bandwidth ratio",
          "[memory][hbm][exec][acceptance]") {
  const std::string program = stream_program(4 << 20);
  for (const std::string engine : kEngines) {
    INFO("engine " << engine);
    TempDir a, b;
    const json v4i = exec(a, "tpu-v4i", program, hbm_with(engine));
    // TPUv1 has one DMA engine; one issues 512 B x 700 MHz = 358 GB/s, ten times the DDR3 peak, so
    // four change nothing but let the same program run.
    const json v1 = exec(b, "tpu-v1", program, hbm_with(engine) + " --set core.dma.engines=4");
    const double bw_v4i = achieved_bandwidth(v4i), bw_v1 = achieved_bandwidth(v1);
    CHECK(bw_v4i <= kV4iPeak);
    CHECK(bw_v1 <= kV1Peak);
    CHECK(bw_v4i >= 0.90 * kV4iPeak);
    const double slowdown = bw_v4i / bw_v1;
    const double ratio = kV4iPeak / kV1Peak;  // 18.0
    CHECK(slowdown >= 0.9 * ratio);
    CHECK(slowdown <= 1.1 * ratio);
    WARN(engine << ": v4i " << bw_v4i / 1e9 << " GB/s, v1 " << bw_v1 / 1e9 << " GB/s: slowdown "
                << slowdown << " vs peak ratio " << ratio);
  }
}

TEST_CASE("memory: FR-FCFS serves row hits across transactions, FCFS ping-pongs rows",
          "[memory][hbm][exec][frfcfs]") {
  // Four engines stream four tensors 2 MiB apart: with ro-ba-co-ch-bg the same offset in each
  // lands in the same bank (bank group and bank bits below bit 19, rows above), another row.
  // Chunks of the four streams alternate in each pseudo-channel's queue.
  const std::uint64_t each = 2 << 20;
  std::ostringstream p;
  p << ".op 0 load \"four\"\n.core 0\n";
  for (int e = 0; e < 4; ++e)
    p << "load dma" << e << " dst=vmem:" << e * each << " src=hbm:" << e * each << " elem=" << each
      << "\n";
  p << "halt\n";
  TempDir a, b;
  const double fcfs = achieved_bandwidth(exec(
      a, "tpu-v4i", p.str(), "--set memory.model=hbm --set memory.hbm.controller.scheduler=fcfs"));
  const double frfcfs = achieved_bandwidth(exec(b, "tpu-v4i", p.str(), "--set memory.model=hbm"));
  // The timeline engine keeps the rule that matters here: a row change waits for the hits
  // queued by then.
  TempDir c;
  const double timeline = achieved_bandwidth(exec(c, "tpu-v4i", p.str(), hbm_with("timeline")));
  CHECK(timeline >= 3 * fcfs);
  CHECK(timeline <= kV4iPeak);
  // FCFS: each 4-burst batch of a chunk hits the 4 bank groups of one bank index and finds
  // another stream's row open: one burst per bank per tRC (57 tCK at 1.2 GHz), 4 banks busy.
  const double fcfs_bound = 32 * (4 * 32.0 / 57) * 1.2e9;  // 32 PCs x 4 banks x 32 B per tRC
  CHECK(fcfs <= fcfs_bound);
  CHECK(fcfs >= 0.8 * fcfs_bound);  // refresh (9%) and the first activates take the rest
  // FR-FCFS keeps a row open while queued chunks of its stream still hit it.
  CHECK(frfcfs >= 3 * fcfs);
  CHECK(frfcfs <= kV4iPeak);
  WARN("four streams sharing banks: FCFS "
       << fcfs / 1e9 << " GB/s (bound " << fcfs_bound / 1e9 << "), FR-FCFS " << frfcfs / 1e9
       << " GB/s, timeline engine " << timeline / 1e9 << " GB/s");
}

TEST_CASE("memory: memory.model simple and hbm produce the same functional output",
          "[memory][functional]") {
  // Loads two blocks, stores them swapped and interleaved with a second load of the first
  // store's destination, so the order of reads and writes matters; dumps the result.
  const std::uint64_t n = 64 * 1024;
  const std::string program =
      ".op 0 load \"x\"\n.core 0\n"
      "load dma0 dst=vmem:0 src=hbm:0 elem=65536\n"
      "load dma1 dst=vmem:65536 src=hbm:65536 elem=65536\n"
      "sem.signal dma0 s0\nsem.signal dma1 s0\nsem.wait dma2 s0 2\n"
      "store dma2 dst=hbm:1048576 src=vmem:65536 elem=65536\n"
      "store dma2 dst=hbm:1114112 src=vmem:0 elem=4096 count=[16] src_stride=[4096] "
      "dst_stride=[4096]\n"
      "sem.signal dma2 s1\nsem.wait dma3 s1\n"
      "load dma3 dst=vmem:131072 src=hbm:1048576 elem=65536\n"
      "sem.signal dma3 s2\nsem.wait dma0 s2\n"
      "store dma0 dst=hbm:2097152 src=vmem:131072 elem=65536\nhalt\n";
  std::vector<std::uint8_t> data(2 * n);
  std::mt19937 rng(7);
  for (auto& byte : data) byte = static_cast<std::uint8_t>(rng());
  TempDir dir;
  std::ofstream(dir.path("in.bin"), std::ios::binary)
      .write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
  std::string dumps[3];
  const char* models[] = {"simple", "hbm", "hbm --set memory.hbm.controller.engine=timeline"};
  for (int m = 0; m < 3; ++m) {
    const std::string out = dir.path("out-" + std::to_string(m) + ".bin");
    exec(dir, "tpu-v4i", program,
         std::string("--functional --set memory.model=") + models[m] +
             " --load hbm:0=" + dir.path("in.bin") +
             " --dump hbm:1048576:" + std::to_string(3 * n + 1048576) + "=" + out);
    dumps[m] = slurp(out);
  }
  REQUIRE(dumps[0].size() == 3 * n + 1048576);
  CHECK(dumps[0] == dumps[1]);
  CHECK(dumps[0] == dumps[2]);
  // And the result is what the program says: block 1, block 0, then block 1 again.
  CHECK(dumps[0].compare(0, n, std::string(data.begin() + n, data.end())) == 0);
  CHECK(dumps[0].compare(n, n, std::string(data.begin(), data.begin() + n)) == 0);
  CHECK(dumps[0].compare(1048576, n, std::string(data.begin() + n, data.end())) == 0);
}

TEST_CASE("memory: a mesh places the cores first and routes every byte over its hops",
          "[memory][noc][exec]") {
  // tpu-v4i on a 33-node mesh of 11 columns: the core at (0,0), channel c at node 1 + c.
  // A read from channel c crosses |x| + |y| links, so the byte-hops the memory counts equal the
  // bytes each channel served times its distance from the core.
  TempDir dir;
  const json r = exec(dir, "tpu-v4i", stream_program(1 << 20),
                      "--set memory.model=hbm --set noc.topology=mesh --set noc.mesh_columns=11");
  std::uint64_t expect = 0;
  for (std::uint64_t c = 0; c < 32; ++c) {
    const std::uint64_t node = 1 + c, hops = node % 11 + node / 11;
    expect += (1 << 20) / 32 * hops;
  }
  std::uint64_t counted = 0;
  for (const json& u : r["units"])
    if (u["kind"] == "memory") counted = u["stats"]["noc_byte_hops"];
  CHECK(counted == expect);
  // Every byte reaches the core over one of its two links (from the east or from the south).
  std::uint64_t into_core = 0;
  for (const json& l : r["noc_links"])
    if (l["path"] == "chip.noc.x1y0.west" || l["path"] == "chip.noc.x0y1.north")
      into_core += l["bytes"].get<std::uint64_t>();
  CHECK(into_core == 1 << 20);
  CHECK(r["energy_pj"]["noc"].get<double>() > 0);
}

TEST_CASE("memory: two cores sharing the HBM model give identical reports on reruns",
          "[memory][hbm][exec][determinism]") {
  // Both cores of tpu-v4 stream 1 MiB each through the lazily decided controllers; the order in
  // which their engines ask for completions must not change any decision.
  std::string program = ".op 0 load \"two\"\n";
  for (int c = 0; c < 2; ++c) {
    program += ".core " + std::to_string(c) + "\n";
    for (int e = 0; e < 4; ++e)
      program += "load dma" + std::to_string(e) + " dst=vmem:" + std::to_string(e << 18) +
                 " src=hbm:" + std::to_string((c << 24) + (e << 18)) + " elem=262144\n";
    program += "halt\n";
  }
  TempDir a, b;
  json ra = exec(a, "tpu-v4", program,
                 "--set memory.model=hbm --set noc.topology=mesh --set noc.mesh_columns=6");
  json rb = exec(b, "tpu-v4", program,
                 "--set memory.model=hbm --set noc.topology=mesh --set noc.mesh_columns=6");
  CHECK(ra["traffic_bytes"]["hbm_read"] == 2 << 20);
  ra.erase("sim");
  rb.erase("sim");
  ra.erase("workload");
  rb.erase("workload");
  CHECK(ra.dump() == rb.dump());
}

TEST_CASE("memory: activation energy replaces dram_per_bit's page share, never adds to it",
          "[memory][hbm][exec][energy]") {
  // scaled-7nm (dram.yaml): hbm2 3.9 pJ/bit; hbm2-2400: 414 pJ per activate, 1 KiB pages.
  const double per_bit = 3.9, act = 414, page_bits = 32 * 32 * 8, noc_per_bit_hop = 0.12;
  TempDir a, b;
  const std::string program = stream_program(4 << 20);
  const json simple = exec(a, "tpu-v4i", program, "");
  const json hbm = exec(b, "tpu-v4i", program, "--set memory.model=hbm");
  const double bits = 8.0 * (4 << 20);
  json memory;
  for (const json& u : hbm["units"])
    if (u["kind"] == "memory") memory = u["stats"];
  const double activates = memory["activates"].get<double>();
  // Every transfer of the stream fills its bursts.
  CHECK(memory["burst_bytes"].get<double>() == bits / 8);
  CHECK(hbm["energy_pj"]["hbm"].get<double>() ==
        Approx(bits * (per_bit - act / page_bits) + activates * act));
  CHECK(simple["energy_pj"]["hbm"].get<double>() == Approx(bits * per_bit));
  // A stream opens each 1 KiB page about once, so both models charge nearly the same.
  CHECK(activates >= (4 << 20) / 1024);
  CHECK(hbm["energy_pj"]["hbm"].get<double>() == Approx(bits * per_bit).epsilon(0.01));
  // Every byte crosses the crossbar once.
  CHECK(hbm["energy_pj"]["noc"].get<double>() == Approx(bits * noc_per_bit_hop));
}

namespace {
std::uint64_t channel_sum(const json& report, const char* field) {
  std::uint64_t sum = 0;
  for (const json& c : report["memory_channels"]) sum += c[field].get<std::uint64_t>();
  return sum;
}
}  // namespace

TEST_CASE("memory: hbm energy is charged on whole bursts and on the ACT commands issued",
          "[memory][hbm][exec][energy]") {
  // 16 B out of every 64 B: each chunk moves one 32 B HBM2 burst, twice the bytes asked for.
  const double per_bit = 3.9, act = 414, page_bits = 32 * 32 * 8;
  const std::uint64_t chunks = 8192, asked = chunks * 16, burst = 32;
  std::ostringstream p;
  p << ".op 0 load \"strided\"\n.core 0\nload dma0 dst=vmem:0 src=hbm:0 elem=16 count=[" << chunks
    << "] src_stride=[64] dst_stride=[16]\nhalt\n";
  TempDir dir;
  const json r = exec(dir, "tpu-v4i", p.str(), "--set memory.model=hbm");
  json memory;
  for (const json& u : r["units"])
    if (u["kind"] == "memory") memory = u["stats"];
  CHECK(r["traffic_bytes"]["hbm_read"].get<std::uint64_t>() == asked);
  CHECK(memory["burst_bytes"].get<std::uint64_t>() == chunks * burst);
  CHECK(channel_sum(r, "read_bytes") == chunks * burst);
  // The operators' ACTs are the channels' (a refresh may add ACTs beyond misses + conflicts).
  const std::uint64_t activates = memory["activates"].get<std::uint64_t>();
  CHECK(activates == channel_sum(r, "activates"));
  // Each touched page at least once: the 512 KiB range holds 512 pages of 1 KiB, and a 64 B
  // stride (two bursts) touches only bank groups 0 and 2, the lowest address field.
  CHECK(activates >= chunks * 64 / 1024 / 2);
  CHECK(r["energy_pj"]["hbm"].get<double>() ==
        Approx(8.0 * chunks * burst * (per_bit - act / page_bits) + double(activates) * act));
}

TEST_CASE("report: seconds are cycles at the nominal clock, ideal memory has no NoC traffic",
          "[memory][exec]") {
  TempDir a, b;
  const std::string program = stream_program(1 << 20);
  const json simple = exec(a, "tpu-v4i", program, "");  // 1.05 GHz: a period of 952380.95 fs
  CHECK(simple["seconds"].get<double>() ==
        double(simple["cycles"].get<std::uint64_t>()) / simple["clock_hz"].get<double>());
  CHECK(simple["traffic_bytes"]["noc"].get<std::uint64_t>() == 1 << 20);
  const json ideal = exec(b, "tpu-v4i", program, "--set memory.model=ideal");
  CHECK(ideal["traffic_bytes"]["hbm_read"].get<std::uint64_t>() == 1 << 20);
  CHECK(ideal["traffic_bytes"]["noc"].get<std::uint64_t>() == 0);
  CHECK(ideal["noc_links"].empty());
}

TEST_CASE("memory: a core's link no slower than the whole memory never delays its reads",
          "[memory][exec]") {
  // Simple memory of 2 channels at 67.2 GB/s: 32 B per 1.05 GHz cycle each, 64 B together. One
  // DMA reads 256 B (block 0, channel 0) or 512 B (blocks 0 and 1, channels 0 and 1): the two
  // blocks leave their channels over the same 8 cycles. A core link of 64 B per cycle carries
  // both as they arrive, so the 512 B read ends when the 256 B one does. A narrower link is
  // booked block by block at the end of that window: the second block waits for the first to
  // cross, 256 B / width later.
  const auto cycles = [](std::uint64_t bytes, const std::string& width) {
    TempDir dir;
    const std::string program =
        ".op 0 load \"w\"\n.core 0\nload dma0 dst=vmem:0 src=hbm:0 elem=" + std::to_string(bytes) +
        "\nhalt\n";
    return exec(dir, "tpu-v4i", program,
                "--set memory.channels=2 --set 'memory.bandwidth=67.2 GB/s' "
                "--set 'noc.link_width=" +
                    width + "'")["cycles"]
        .get<std::int64_t>();
  };
  CHECK(cycles(512, "64 B") == cycles(256, "64 B"));
  CHECK(cycles(512, "32 B") - cycles(256, "32 B") == 256 / 32);
  // 256 B / 63 B = 4.06 cycles, the end rounded to a clock edge.
  const std::int64_t just_below = cycles(512, "63 B") - cycles(256, "63 B");
  CHECK(just_below >= 4);
  CHECK(just_below <= 5);
}

TEST_CASE("memory: a DMA engine pipelines across descriptors whatever the memory model",
          "[memory][hbm][exec][dma]") {
  // 32 KiB as one descriptor or as 64 of 512 B (one chunk each) on one engine: either way one
  // chunk issues a cycle (the sequencer dispatches a descriptor a cycle), so the runs take the
  // same time. With the bank model a descriptor used to wait until the DRAM had scheduled all
  // of the previous one: 650 cycles against 100.
  std::string one = ".op 0 load \"w\"\n.core 0\nload dma0 dst=vmem:0 src=hbm:0 elem=32768\nhalt\n";
  std::string many = ".op 0 load \"w\"\n.core 0\n";
  for (int i = 0; i < 64; ++i)
    many += "load dma0 dst=vmem:" + std::to_string(512 * i) +
            " src=hbm:" + std::to_string(512 * i) + " elem=512\n";
  many += "halt\n";
  for (const std::string sets :
       {"--set 'core.dma.setup_latency=0 cycles'",
        "--set 'core.dma.setup_latency=0 cycles' --set memory.model=hbm"}) {
    CAPTURE(sets);
    TempDir a, b;
    const json whole = exec(a, "tpu-v4i", one, sets);
    const json pieces = exec(b, "tpu-v4i", many, sets);
    CHECK(pieces["cycles"] == whole["cycles"]);
  }
}

TEST_CASE("memory: a DMA engine's signal waits for its chunks without holding its queue",
          "[memory][hbm][exec][dma]") {
  // dma0 loads `first`, signals s0, loads `second` and signals s1, while three other engines
  // keep the banks busy (16 MiB apart: row conflicts), so the DRAM decides first's chunks long
  // after they issue. The signals must still let `second` issue and finish as it does with no
  // signal there, and the VPU's ops that wait on them must start when `first` and `second` have
  // landed, in order. Until session 35 the engine's thread waited for those decisions at the
  // signal: `second` started at cycle 1030 instead of 563 (command engine).
  std::string head =
      ".op 0 load \"first\"\n.op 1 load \"second\"\n.op 2 relu \"r0\"\n"
      ".op 3 relu \"r1\"\n.op 4 load \"busy\"\n.core 0\n.op 4\n";
  for (int e = 1; e <= 3; ++e)
    head += "load dma" + std::to_string(e) + " dst=vmem:" + std::to_string((e + 1) << 20) +
            " src=hbm:" + std::to_string(e << 24) + " elem=1048576\n";
  head += ".op 0\nload dma0 dst=vmem:0 src=hbm:0 elem=65536\n";
  const std::string second = ".op 1\nload dma0 dst=vmem:65536 src=hbm:65536 elem=65536\n";
  const std::string signalled_program =
      head + "sem.signal dma0 s0\n" + second +
      "sem.signal dma0 s1\n"
      ".op 2\nsem.wait vpu s0\nvpu.relu dtype=fp32 shape=[8,128] dst=vmem:262144 a=vmem:0\n"
      ".op 3\nsem.wait vpu s1\nvpu.relu dtype=fp32 shape=[8,128] dst=vmem:266240 "
      "a=vmem:65536\nhalt\n";
  const auto op = [](const json& report, const char* name) {
    for (const json& o : report["ops"])
      if (o["name"] == name) return o;
    FAIL("no op " << name);
    return json();
  };
  for (const std::string& sets :
       {std::string("--set memory.model=simple"), hbm_with("command"), hbm_with("timeline")}) {
    CAPTURE(sets);
    TempDir a, b;
    const json signalled = exec(a, "tpu-v4i", signalled_program, sets);
    const json plain = exec(b, "tpu-v4i", head + second + "halt\n", sets);
    CHECK(op(signalled, "second")["start_cycle"] == op(plain, "second")["start_cycle"]);
    CHECK(op(signalled, "second")["end_cycle"] == op(plain, "second")["end_cycle"]);
    CHECK(op(signalled, "r0")["start_cycle"] == op(signalled, "first")["end_cycle"]);
    CHECK(op(signalled, "r1")["start_cycle"] == op(signalled, "second")["end_cycle"]);
  }
}

TEST_CASE("memory: late DRAM decisions never book a link or port twice", "[memory][hbm][exec]") {
  // The bank model decides a chunk's arrival after the simulation has moved on; its data is
  // then booked through the interconnect and vmem at that past time. Two engines load 64 KiB
  // each: through an 8 B link the core's link needs 131072 / 8 cycles at least (at 1.05 GHz
  // the link's 8 B are per core cycle), and through one 8 B vmem port as many port cycles.
  const std::string program =
      ".op 0 load \"w\"\n.core 0\n"
      "load dma0 dst=vmem:0 src=hbm:0 elem=65536\n"
      "load dma1 dst=vmem:65536 src=hbm:65536 elem=65536\nhalt\n";
  const std::uint64_t bytes = 2 * 65536, width = 8;
  TempDir a, b;
  const json link = exec(a, "tpu-v4i", program,
                         "--set memory.model=hbm --set 'noc.link_width=8 B' "
                         "--set core.dma.max_outstanding=16");
  CHECK(link["cycles"].get<std::uint64_t>() >= bytes / width);
  for (const json& l : link["noc_links"]) CHECK(l["utilization"].get<double>() <= 1.0);
  const json port = exec(b, "tpu-v4i", program,
                         "--set memory.model=hbm --set 'core.vmem.port_width=8 B' "
                         "--set core.vmem.ports=1 --set core.dma.max_outstanding=64");
  CHECK(port["cycles"].get<std::uint64_t>() >= bytes / width);
}

TEST_CASE("memory: a DMA's 'reads' signal waits for its chunks, as its completion does",
          "[memory][hbm][exec][dma]") {
  // isa/README: on units other than the MXU, `reads` is the same as completion. With the bank
  // model a descriptor's chunks complete after it was issued; the signal must wait for them.
  const std::string head = ".op 0 x \"x\"\n.core 0\nload dma0 dst=vmem:0 src=hbm:0 elem=32768\n";
  const std::string tail =
      "sem.wait vpu s0\n"
      "vpu.relu dtype=fp32 shape=[8,128] dst=vmem:65536 a=vmem:0\nhalt\n";
  for (const std::string model : {"simple", "hbm"}) {
    CAPTURE(model);
    TempDir a, b;
    const json reads = exec(a, "tpu-v4i", head + "sem.signal dma0 s0 reads\n" + tail,
                            "--set memory.model=" + model);
    const json done =
        exec(b, "tpu-v4i", head + "sem.signal dma0 s0\n" + tail, "--set memory.model=" + model);
    CHECK(reads["cycles"] == done["cycles"]);
  }
}

TEST_CASE("memory: a unit woken between clock edges starts on the next edge, not before",
          "[memory][hbm][exec]") {
  // A store to HBM completes on a DRAM clock edge, between core edges: the weight load it
  // releases starts no earlier than that completion.
  TempDir dir;
  const json r = exec(dir, "tpu-v4i",
                      ".op 0 s \"s\"\n.core 0\nstore dma0 dst=hbm:0 src=vmem:0 elem=64\n"
                      "sem.signal dma0 s0\nsem.wait mxu0 s0\n"
                      "mxu.lw mxu0 src=vmem:0 k=128 n=128 dtype=bf16\nhalt\n",
                      "--set memory.model=hbm");
  const json trace = json::parse(slurp(dir.path("out") + "/trace.json"));
  double store_end = 0, lw_start = -1;
  for (const json& e : trace["traceEvents"]) {
    if (e["ph"] != "X") continue;
    const double start = e["ts"].get<double>(), end = start + e["dur"].get<double>();
    if (e["name"] == "store") store_end = end;
    if (e["name"] == "mxu.lw") lw_start = start;
  }
  REQUIRE(store_end > 0);
  REQUIRE(lw_start >= 0);
  // In core cycles (trace times are microseconds; tpu-v4i runs at 1050 MHz, and the trace keeps
  // six decimals, a thousandth of a cycle): the store ends between two edges, and the load
  // starts on the first edge after it.
  const double end_cycle = store_end * 1050, start_cycle = lw_start * 1050;
  CHECK(std::abs(end_cycle - std::round(end_cycle)) > 0.01);
  CHECK(std::abs(start_cycle - std::round(start_cycle)) < 0.01);
  CHECK(std::round(start_cycle) == std::ceil(end_cycle));
}

TEST_CASE("memory: refreshes are counted to the end of the run, a quiet tail included",
          "[memory][hbm][exec]") {
  // A strided load, 4 B out of every 64 (so 1024 bursts of 32 B move 8x the bytes asked, over
  // every channel of tpu-v4i), then about 80 us of matmuls with no memory traffic. HBM2-2400:
  // tREFI 3.9 us = 4680 tCK, tRFC 350 ns = 420 tCK at 1.2 GHz; all-bank refresh falls due at k x
  // tREFI, k >= 1, whether or not commands follow.
  std::ostringstream p;
  p << ".op 0 mm \"mm\"\n.core 0\nload dma0 dst=vmem:0 src=hbm:0 elem=4 count=[1024] "
       "src_stride=[64] dst_stride=[4]\n"
       "sem.signal dma0 s0\nsem.wait mxu0 s0\nmxu.lw mxu0 src=vmem:0 k=128 n=128 dtype=bf16\n";
  for (int i = 0; i < 20; ++i)
    p << "mxu.mm mxu0 src=vmem:0 dst=accmem:0 m=4096 k=128 n=128 dtype=bf16\n";
  p << "halt\n";
  TempDir dir;
  std::string summary;
  const json r = exec(dir, "tpu-v4i", p.str(), "--set memory.model=hbm", &summary);
  const double ck = 1.2e9, refi = 4680, rfc = 420;
  const double seconds = r["seconds"].get<double>();
  // The run's last DRAM cycle, rounded as the memory rounds times to its clock edges.
  const auto end = static_cast<std::uint64_t>(std::ceil(seconds * ck - 1e-6));
  const double refreshes = std::floor(double(end - 1) / refi);
  REQUIRE(refreshes >= 15);  // the matmuls keep the run long after the load
  REQUIRE(r["memory_channels"].size() == 32);
  for (const json& c : r["memory_channels"])
    CHECK(c["refresh_s"].get<double>() == Approx(refreshes * rfc / ck));
  // The summary's burst latency is the mean over bursts: each channel's mean weighted by its
  // bursts (bus bytes), not by the bytes the program asked for.
  double weighted = 0, bytes = 0;
  for (const json& c : r["memory_channels"]) {
    const double b =
        double(c["read_bytes"].get<std::uint64_t>() + c["write_bytes"].get<std::uint64_t>());
    weighted += c["avg_latency_s"].get<double>() * b;
    bytes += b;
  }
  const double ns = weighted / bytes * 1e9;
  REQUIRE(ns > 10);
  const auto at = summary.find("burst latency avg ");
  REQUIRE(at != std::string::npos);
  CHECK(std::stod(summary.substr(at + 18)) == Approx(ns).epsilon(0.01));
}

TEST_CASE("memory: a recorded timeline run replays to the same decisions", "[memory][hbm][exec]") {
  TempDir c;
  const std::string recording = c.path("run.rec");
  ::setenv("TPUSIM_DRAM_RECORD", recording.c_str(), 1);
  const json report = exec(c, "tpu-v4i", stream_program(1 << 20), hbm_with("timeline"));
  ::unsetenv("TPUSIM_DRAM_RECORD");
  REQUIRE(report["traffic_bytes"]["hbm_read"] == 1 << 20);
  const tpusim::DramSpec spec = tpusim::config::load_chip_config(
                                    TPUSIM_SOURCE_DIR "/configs/chips/tpu-v4i.yaml",
                                    {"memory.model=hbm", "memory.hbm.controller.engine=timeline"})
                                    .spec.memory.hbm;
  const tpusim::models::DramReplay replay = tpusim::models::DramRecording(recording).replay(spec);
  // Bank groups take the lowest address bits, then the channel: each channel's part of a chunk
  // is one piece of 4 bursts of 32 B, so 1 MiB is 1 MiB / 128 B pieces, every one released.
  CHECK(replay.serves == (1 << 20) / (4 * 32));
  CHECK(replay.releases == replay.serves);
  CHECK(replay.mismatches == 0);

  // The command engine has no timeline channels to record: refused as bad input.
  const std::string command = "TPUSIM_DRAM_RECORD='" + recording +
                              "' timeout 120 '" TPUSIM_EXE "' exec -q -c tpu-v4i '" +
                              c.path("p.tasm") + "' -o '" + c.path("out2") + "' " +
                              hbm_with("command") + " 2> '" + c.path("err2") + "'";
  const int status = std::system(command.c_str());
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 2);
  CHECK_THAT(slurp(c.path("err2")), Catch::Contains("TPUSIM_DRAM_RECORD needs"));
}
