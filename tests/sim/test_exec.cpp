// `tpusim exec` end to end on a small chip whose every timing parameter the test sets, so each
// expected cycle count is derived here from the machine's structure (exec_support.h). The vector
// unit's tests are in test_exec_vpu.cpp.

#include <algorithm>
#include <map>
#include <set>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/sim/exec_support.h"

using namespace tpusim::test::exec_chip;
using tpusim::test::TempDir;

TEST_CASE("exec: one weight-stationary tile takes fill + stream + skew + drain", "[exec][mxu]") {
  const std::uint64_t M = 64, N = 16;
  // lw dispatched at cycle 1 shifts for R cycles; the matmul streams M rows; the last row meets
  // PE(R-1, N-1) R + N - 2 cycles after entering; then write-back.
  CHECK(cycles_of(kHeader + tile(M) + "halt\n") == kDispatch + R + M + R + N - 2 + kWriteback);
}

TEST_CASE("exec: two MXUs on one vector-memory port take turns on it", "[exec][mxu][sram]") {
  // One 16 B port: each weight tile is K x N = 256 B (16 port cycles), each input stream M rows
  // of K = 16 B (one port cycle a row, the array's own rate at this width). The four
  // instructions use the port back to back from the first dispatch; the last stream then drains.
  const std::uint64_t M = 32, K = 16, N = 16, width = 16;
  const std::string program =
      kHeader +
      "mxu.lw mxu0 src=vmem:0 k=16 n=16 dtype=int8\n"
      "mxu.lw mxu1 src=vmem:0 k=16 n=16 dtype=int8\n"
      "mxu.mm mxu0 src=vmem:4096 dst=accmem:0 m=32 k=16 n=16 dtype=int8\n"
      "mxu.mm mxu1 src=vmem:4096 dst=accmem:4096 m=32 k=16 n=16 dtype=int8\nhalt\n";
  const Run r = exec(program,
                     "--set core.mxu.count=2 --set core.vmem.ports=1 "
                     "--set 'core.vmem.port_width=16 B'");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const std::uint64_t port_cycles = (2 * K * N + 2 * M * K) / width;
  CHECK(r.report["cycles"].get<std::uint64_t>() ==
        kDispatch + port_cycles + R + N - 2 + kWriteback);
  CHECK(unit_stats(r.report, "chip.core0.vmem")["port_busy_cycles"].get<std::uint64_t>() ==
        port_cycles);
}

TEST_CASE("exec: a port narrower than an operand row slows the array once, not twice",
          "[exec][mxu][sram]") {
  // An 8 B port and rows of 16 int8: every row the array reads takes 2 port cycles. Nothing else
  // uses the port, so the array keeps its own port-bound pace and no more.
  const std::uint64_t M = 64, K = 16, N = 16, per_row = 2;
  const std::string port = "--set 'core.vmem.port_width=8 B'";
  // ws: the load shifts R rows, the matmul streams M rows, then the skew and the write-back.
  CHECK(cycles_of(kHeader + tile(M) + "halt\n", port) ==
        kDispatch + R * per_row + M * per_row + R + N - 2 + kWriteback);
  // os: the load stages K rows; each of the M / R folds reads K columns of R inputs, computes
  // through the skew while the previous fold shifts out, and the last fold shifts its R rows out.
  const std::uint64_t folds = M / R;
  CHECK(cycles_of(kHeader + tile(M) + "halt\n", port + " --set core.mxu.dataflow=os") ==
        kDispatch + K * per_row + folds * (K * per_row + R + N - 2) + R + kWriteback);
}
TEST_CASE("exec: read data crosses the interconnect only once the memory has read it",
          "[exec][memory][noc]") {
  // A 1 B link: 256 B take 256 cycles on it, from the first byte out of the channel (its start
  // plus the memory's latency), not from the request. Then 4 cycles through the vmem port.
  const std::string program =
      ".op 0 load \"l\"\n.core 0\n"
      "load dma0 dst=vmem:0 src=hbm:0 elem=256\nhalt\n";
  const std::uint64_t link_width = 1;
  CHECK(cycles_of(program, "--set 'noc.link_width=1 B'") ==
        kDispatch + kSetup + kLatency + 256 / link_width + 256 / kPort);
}

TEST_CASE("exec: an executing instruction keeps its queue entry", "[exec][sequencer]") {
  // queue_depth 1: the second load to dma0 is dispatched only once the first has issued all
  // its chunks. The sequencer offers it one dispatch after the first (cycle 2 x kDispatch). The
  // first load's 128 chunks of 512 B leave the channel one per 8 cycles (64 B a cycle) from
  // dispatch + setup on, and each lands latency + a port write later. Its last chunk issues once
  // the one 64 slots (max_outstanding) ahead of it has landed, and with it the entry is free.
  const std::string program =
      ".op 0 load \"l\"\n.core 0\n"
      "load dma0 dst=vmem:0 src=hbm:0 elem=65536\n"
      "load dma0 dst=vmem:65536 src=hbm:65536 elem=512\nhalt\n";
  const Run r = exec(program, "--set core.sequencer.queue_depth=1");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const std::uint64_t chunks = 65536 / kChunk, chunk_cycles = kChunk / kBytesPerCycle, slots = 64;
  const auto landed = [&](std::uint64_t chunk) {  // chunk from 0, the channel always busy
    return kDispatch + kSetup + (chunk + 1) * chunk_cycles + kLatency + kChunk / kPort;
  };
  const std::uint64_t entry_free = landed(chunks - 1 - slots);
  const json& seq = unit_stats(r.report, "chip.core0.seq");
  const auto stalled = seq["queue_full_cycles"].get<std::uint64_t>();
  CHECK(stalled == entry_free - 2 * kDispatch);
  // All of it on the DMA engine's queue.
  CHECK(seq["queue_full_dma_cycles"].get<std::uint64_t>() == stalled);
  CHECK(seq["queue_full_mxu_cycles"].get<std::uint64_t>() == 0);
  CHECK(seq["queue_full_vpu_cycles"].get<std::uint64_t>() == 0);
  // The second load's chunk issues long before the channel is free: it is the 129th in line.
  CHECK(r.report["cycles"].get<std::uint64_t>() == landed(chunks));
}

TEST_CASE("exec: a DMA engine stores what it loaded only once the load has landed", "[exec][dma]") {
  // No semaphore between them: the queue's order holds through memory. The store reads vmem
  // once the load's last byte is in (load_cycles), through a port (kChunk / kPort) and the
  // array's read latency (1 cycle: the chip leaves vmem.latency at its default). Its data then
  // crosses two 512 B links, cut through (one cycle in all), takes the channel for kChunk /
  // kBytesPerCycle and is written the memory's latency later.
  const std::string program =
      ".op 0 copy \"c\"\n.core 0\n"
      "load dma0 dst=vmem:0 src=hbm:0 elem=512\n"
      "store dma0 dst=hbm:65536 src=vmem:0 elem=512\nhalt\n";
  const std::uint64_t vmem_read_latency = 1, link_cycles = 1;
  CHECK(cycles_of(program, "--set 'noc.link_width=512 B'") ==
        load_cycles(kDispatch, kChunk) + kChunk / kPort + vmem_read_latency + link_cycles +
            kChunk / kBytesPerCycle + kLatency);
}

TEST_CASE("exec: a weight load takes its port time in the gaps a DMA stream leaves",
          "[exec][mxu][sram]") {
  // One 64 B port. dma0 streams 64 KiB at 32 B a cycle in 128 B chunks: each chunk's write
  // holds the port 2 cycles of every 4, leaving 2-cycle gaps. Meanwhile (once dma1's small load
  // is in) mxu0 loads a 256 B tile: 4 port cycles, which the gaps give it within the 16 cycles
  // the tile takes to shift in, so it starts at once instead of after the booked chunks.
  const std::string program = kHeader +
                              "load dma0 dst=vmem:65536 src=hbm:0 elem=65536\n"
                              "load dma1 dst=vmem:0 src=hbm:1048576 elem=256\n"
                              "sem.signal dma1 s0\n"
                              "sem.wait mxu0 s0\n"
                              "mxu.lw mxu0 src=vmem:0 k=16 n=16 dtype=int8\nhalt\n";
  const Run r = exec(program,
                     "--set core.vmem.ports=1 --set 'core.dma.chunk=128 B' "
                     "--set 'memory.bandwidth=32 B/cycle'");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  double lw_start = 0, lw_end = 0, dma0_end = 0, dma1_end = 0;
  auto names = thread_names(r.trace);
  for (const json& e : r.trace["traceEvents"]) {
    if (e["ph"] != "X") continue;
    const std::string unit = names[{e["pid"].get<int>(), e["tid"].get<int>()}];
    const double start = e["ts"].get<double>() * 1000, end = start + e["dur"].get<double>() * 1000;
    if (e["name"] == "mxu.lw") std::tie(lw_start, lw_end) = std::pair{start, end};
    if (unit == "chip.core0.dma0") dma0_end = std::max(dma0_end, end);
    if (unit == "chip.core0.dma1") dma1_end = std::max(dma1_end, end);
  }
  CHECK(std::lround(lw_end - lw_start) == long(R));  // 1 GHz: ns are cycles
  CHECK(dma0_end > 2000);                            // 64 KiB at 32 B a cycle
  // dma1's data arrives while dma0's chunks have the port booked ahead (64 in flight, 256
  // cycles); the load starts a few dispatch cycles after it, not past those bookings.
  CHECK(dma1_end > 100);
  CHECK(lw_start <= dma1_end + 8);
}

TEST_CASE("exec: small DMA chunks share a port cycle by their bytes", "[exec][dma][sram]") {
  // 16 B chunks through 64 B vmem ports: four fit one port cycle, so 64 KiB take 1024 port
  // cycles, not one per chunk (4096).
  const std::string program =
      ".op 0 load \"l\"\n.core 0\n"
      "load dma0 dst=vmem:0 src=hbm:0 elem=65536\nhalt\n";
  const Run r = exec(program, "--set 'core.dma.chunk=16 B'");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json vmem = unit_stats(r.report, "chip.core0.vmem");
  CHECK(vmem["port_bytes"].get<std::uint64_t>() == 65536);
  CHECK(vmem["port_busy_cycles"].get<std::uint64_t>() == 65536 / kPort);
}

TEST_CASE("exec: a matmul completes once its results are through the accumulator port",
          "[exec][mxu][sram]") {
  // A 4 B accumulator port: accumulating M x N int32 results reads and writes each, 2 x 512 B,
  // 256 port cycles from the first row in, far longer than the array takes.
  const std::uint64_t M = 8, N = 16, width = 4;
  const std::string program = kHeader +
                              "mxu.lw mxu0 src=vmem:0 k=16 n=16 dtype=int8\n"
                              "mxu.mm mxu0 src=vmem:4096 dst=accmem:0 m=8 k=16 n=16 dtype=int8 "
                              "accumulate\nhalt\n";
  const std::uint64_t acc_port_cycles = 2 * M * N * 4 / width;
  CHECK(cycles_of(program, "--set 'core.accmem.port_width=4 B'") ==
        kDispatch + R + acc_port_cycles);
  // With the preset's 64 B port the array's drain is longer than the port's 32 cycles.
  CHECK(cycles_of(program) == kDispatch + R + M + R + N - 2 + kWriteback);
}

TEST_CASE("exec: output stationary folds M over the rows", "[exec][mxu]") {
  const std::uint64_t M = 64, K = 16, N = 16, folds = M / R;
  // Staging the weights takes K cycles; each fold computes K + R + N - 2 cycles, then shifts its
  // R result rows out before the next (single-buffered result registers).
  CHECK(cycles_of(kHeader + tile(M) + "halt\n",
                  "--set core.mxu.dataflow=os --set core.mxu.weight_double_buffer=false") ==
        kDispatch + K + folds * (K + R + N - 2 + R) + kWriteback);
}

TEST_CASE("exec: input stationary folds M over the columns", "[exec][mxu]") {
  const std::uint64_t M = 64, K = 16, N = 16, folds = M / C;
  // Per fold: shift the input tile in (R), stream N weight columns, drain R + C - 2.
  CHECK(cycles_of(kHeader + tile(M) + "halt\n",
                  "--set core.mxu.dataflow=is --set core.mxu.weight_double_buffer=false") ==
        kDispatch + K + folds * (R + N + R + C - 2) + kWriteback);
}

TEST_CASE("exec: the array's register writes and energy follow each dataflow's data movement",
          "[exec][mxu][energy]") {
  // A 16 x 12 array, so rows and columns cannot be confused; a ragged tile (K < R, N < C) and
  // M = 40, which folds over the rows (os) or the columns (is) with a partial last fold; int8
  // operands (1 B) and int32 sums (4 B). Every operand that moves is latched once per PE of the
  // chain it enters (models/mxu/README.md, section 10), and empty lanes latch nothing.
  const std::uint64_t M = 40, K = 12, N = 10, cols = 12, sum = 4;
  const std::uint64_t row_folds = (M + R - 1) / R, col_folds = (M + cols - 1) / cols;
  const std::string program = kHeader +
                              "mxu.lw mxu0 src=vmem:0 k=12 n=10 dtype=int8\n"
                              "mxu.mm mxu0 src=vmem:4096 dst=accmem:0 m=40 k=12 n=10 dtype=int8\n"
                              "halt\n";
  // Shift-out of an output-stationary fold of rf rows: result row r (0 at the top) climbs
  // through r + 1 registers, for each of the N columns.
  std::uint64_t os_shift_out = 0;
  for (std::uint64_t m0 = 0; m0 < M; m0 += R)
    for (std::uint64_t r = 0; r < std::min(R, M - m0); ++r) os_shift_out += N * (r + 1);
  const std::map<std::string, std::uint64_t> want = {
      // The weight tile shifts down all R rows once; each input row crosses all C columns;
      // each of the M x N sums runs down all R rows.
      {"ws", K * N * R + M * K * cols + M * N * R * sum},
      // Each fold's input tile comes down the R rows of the load chain; the N weight columns
      // cross the C columns once per fold; the sums run down the rows as in ws.
      {"is", M * K * R + col_folds * N * K * cols + M * N * R * sum},
      // Inputs cross the columns; the weights come down the R rows once per fold; every MAC
      // writes its accumulator; then the results leave through the top.
      {"os", M * K * cols + row_folds * K * N * R + (M * N * K + os_shift_out) * sum},
  };
  const double mac_pj = 0.3, register_pj = 0.02;  // test_support.h, kEnergyTable (int8)
  for (const auto& [dataflow, bytes] : want) {
    INFO(dataflow);
    const Run r = exec(program, "--set core.mxu.cols=12 --set core.mxu.dataflow=" + dataflow);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(unit_stats(r.report, "chip.core0.mxu0")["register_write_bytes"].get<std::uint64_t>() ==
          bytes);
    CHECK(r.report["energy_pj"]["mxu"].get<double>() ==
          Approx(double(M * K * N) * mac_pj + double(bytes) * register_pj));
  }
}

TEST_CASE("exec: double-buffered weights hide every load but the first", "[exec][mxu]") {
  const std::uint64_t M = 64, N = 16, tiles = 8;
  std::string program = kHeader;
  for (std::uint64_t i = 0; i < tiles; ++i) program += tile(M);
  program += "halt\n";
  // M >= R: each load finishes while the matmul before it streams.
  const std::uint64_t hidden = kDispatch + R + tiles * M + R + N - 2 + kWriteback;
  // A single buffer must drain before the next load starts shifting.
  const std::uint64_t serial = kDispatch + tiles * (R + M + R + N - 2 + kWriteback);
  CHECK(cycles_of(program) == hidden);
  CHECK(cycles_of(program, "--set core.mxu.weight_double_buffer=false") == serial);
  CHECK(serial - hidden == (tiles - 1) * (R + R + N - 2 + kWriteback));
}

TEST_CASE("exec: independent DMA and MXU work overlap, a semaphore serialises it",
          "[exec][overlap]") {
  const std::uint64_t M = 512, N = 16;
  const std::uint64_t dma = load_cycles(kDispatch, kLoadBytes);
  // The MXU's lw is dispatched one cycle after the load.
  const std::uint64_t mxu_alone = R + M + R + N - 2 + kWriteback;
  REQUIRE(dma > kDispatch + 1 + mxu_alone / 2);  // comparable lengths, so overlap matters
  const std::uint64_t overlapped = cycles_of(kHeader + kLoad + tile(M) + "halt\n");
  CHECK(overlapped == std::max(dma, kDispatch + 1 + mxu_alone));
  // The signal fires when the load completes; the waiting MXU starts in the same cycle.
  const std::string chained =
      kHeader + kLoad + "sem.signal dma0 s0\nsem.wait mxu0 s0\n" + tile(M) + "halt\n";
  CHECK(cycles_of(chained) == dma + mxu_alone);
}

TEST_CASE("exec: an operator's span starts with its first instruction's work, not its dispatch",
          "[exec][report]") {
  // The matmul's instructions are dispatched right after the load's, then wait for its signal:
  // the operator starts when the array does, as docs/report.md defines a span.
  const std::uint64_t M = 64, N = 16;
  const std::uint64_t dma = load_cycles(kDispatch, kLoadBytes);
  const std::uint64_t mxu_alone = R + M + R + N - 2 + kWriteback;
  const std::string program = ".op 0 load \"ld\"\n.op 1 matmul \"mm\"\n.core 0\n.op 0\n" + kLoad +
                              "sem.signal dma0 s0\n.op 1\nsem.wait mxu0 s0\n" + tile(M) + "halt\n";
  const Run r = exec(program);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json& ops = r.report["ops"];
  CHECK(ops[0]["start_cycle"] == kDispatch);
  CHECK(ops[0]["end_cycle"] == dma);
  CHECK(ops[1]["start_cycle"] == dma);
  CHECK(ops[1]["end_cycle"] == dma + mxu_alone);
}

TEST_CASE("exec: a reads signal fires once the matmul's rows have entered, before it drains",
          "[exec][sync]") {
  const std::uint64_t M = 64, N = 16;
  // The lw shifts R cycles from dispatch; the matmul then streams its M rows: its last source
  // read. Its results come out R + N - 2 cycles later and are written back after that.
  const std::uint64_t rows_in = kDispatch + R + M;
  const std::uint64_t done = rows_in + R + N - 2 + kWriteback;
  // A one-chunk load waits on the signal, so it starts when the signal fires.
  const std::string load = "sem.wait dma0 s0\nload dma0 dst=vmem:65536 src=hbm:0 elem=512\nhalt\n";
  REQUIRE(load_cycles(rows_in, kChunk) > done);  // the load ends the program either way
  CHECK(cycles_of(kHeader + tile(M) + "sem.signal mxu0 s0 reads\n" + load) ==
        load_cycles(rows_in, kChunk));
  CHECK(cycles_of(kHeader + tile(M) + "sem.signal mxu0 s0\n" + load) ==
        load_cycles(done, kChunk));
}

TEST_CASE("exec: a store beside a load shares the channel with it, whatever each booked ahead",
          "[exec][dma]") {
  // dma0 loads 64 KiB while dma1 stores 64 KiB. A load books the vector-memory port for when its
  // data will arrive, a latency ahead; a store then reads its data and books the channel for
  // when that data arrives. Served in the gaps of what is booked, the one channel carries both
  // streams back to back: 2 x 64 KiB at 64 B/cycle after the first chunk issues, then one
  // latency and the last chunk's port time. The store is dispatched a cycle after the load.
  const std::string program = kHeader + kLoad +
                              "store dma1 dst=hbm:1048576 src=vmem:0 elem=65536\n"
                              "halt\n";
  const std::uint64_t both = load_cycles(kDispatch, 2 * kLoadBytes);
  const std::uint64_t took = cycles_of(program);
  CHECK(took >= both - kChunk / kPort);
  CHECK(took <= both + kChunk / kBytesPerCycle);
}

TEST_CASE("exec: consecutive descriptors on one engine keep their chunks in flight together",
          "[exec][dma]") {
  // Two one-chunk loads on dma0. The engine takes the second as soon as it has issued the
  // first's chunk (setup after its own start), so the second chunk follows the first through the
  // channel and both wait out one latency: the second finishes kSetup after the first.
  const std::string program = kHeader +
                              "load dma0 dst=vmem:65536 src=hbm:0 elem=512\n"
                              "load dma0 dst=vmem:131072 src=hbm:4096 elem=512\n"
                              "halt\n";
  const std::uint64_t first = load_cycles(kDispatch, kChunk);
  const Run r = exec(program);
  REQUIRE(r.exit_code == 0);
  CHECK(r.report["cycles"] == first + kSetup);
  // Were the second chunk to wait for the first's slot to free, it would start a latency later.
  CHECK(first + kSetup < 2 * (first - kDispatch));
  // The engine was busy from the first's dispatch to the second's end, each cycle once (the
  // two descriptors overlap for all but the first's setup).
  CHECK(unit_stats(r.report, "chip.core0.dma0")["busy_cycles"] == first + kSetup - kDispatch);
}

TEST_CASE("exec: two cores streaming through one memory channel take twice as long",
          "[exec][contention]") {
  const std::string one = kHeader + kLoad + "halt\n";
  const std::string two = one + ".core 1\n" + kLoad + "halt\n";
  const std::uint64_t alone = cycles_of(one);
  CHECK(alone == load_cycles(kDispatch, kLoadBytes));
  // The channel alternates between the cores' chunks: twice the bytes through the same channel.
  CHECK(cycles_of(two) == load_cycles(kDispatch, 2 * kLoadBytes));
  const std::uint64_t fixed = kDispatch + kSetup + kLatency + kChunk / kPort;
  CHECK(cycles_of(two) - fixed == 2 * (alone - fixed));
}

TEST_CASE("exec: report.json has every documented key and reruns are identical", "[exec][report]") {
  const std::string program = kHeader + kLoad + "sem.signal dma0 s0\nsem.wait mxu0 s0\n" +
                              tile(64) +
                              "sem.signal mxu0 s1\nsem.wait dma1 s1\n"
                              "store dma1 dst=hbm:1048576 src=accmem:0 elem=4096\nhalt\n";
  TempDir dir;
  const Run a = exec_in(dir, program, ""), b = exec_in(dir, program, "");
  REQUIRE(a.exit_code == 0);
  for (const char* key : {"schema", "chip", "workload", "cycles", "seconds", "clock_hz", "macs",
                          "utilization", "traffic_bytes", "energy_pj", "ops", "sim", "config"})
    CHECK(a.report.contains(key));
  CHECK(a.report["schema"] == "tpusim.report/1");
  for (const char* key : {"mxu", "vpu", "memory_bandwidth"})
    CHECK(a.report["utilization"].contains(key));
  for (const char* key : {"hbm_read", "hbm_write", "vmem_read", "vmem_write", "noc"})
    CHECK(a.report["traffic_bytes"].contains(key));
  for (const char* key : {"total", "mxu", "vpu", "sram", "hbm", "noc", "static"})
    CHECK(a.report["energy_pj"].contains(key));
  for (const char* key :
       {"name", "kind", "start_cycle", "end_cycle", "cycles", "mxu_cycles", "macs",
        "hbm_read_bytes", "hbm_write_bytes", "energy_pj", "mxu_utilization"})
    CHECK(a.report["ops"][0].contains(key));
  CHECK(a.report["sim"].contains("wall_seconds"));
  CHECK(a.report["sim"].contains("peak_rss_bytes"));
  // The roofline's peaks: 2 cores x one R x C int8 array at 1 GHz; 64 B/cycle at 1 GHz.
  CHECK(a.report["peak"]["macs_per_s"]["int8"].get<double>() == Approx(2.0 * R * C * 1e9));
  CHECK(a.report["peak"]["memory_bandwidth_bytes_per_s"].get<double>() ==
        Approx(double(kBytesPerCycle) * 1e9));
  // Counted traffic is what the program moves: 64 KiB in, 64 x 16 int32 results out.
  CHECK(a.report["traffic_bytes"]["hbm_read"] == kLoadBytes);
  CHECK(a.report["traffic_bytes"]["hbm_write"] == 4096);
  CHECK(a.report["macs"] == 64 * 16 * 16);
  json ra = a.report, rb = b.report;
  ra.erase("sim");
  rb.erase("sim");
  CHECK(ra.dump() == rb.dump());
  CHECK(a.trace.dump() == b.trace.dump());
}

TEST_CASE("exec: trace.json has a named track per unit and events on them", "[exec][trace]") {
  const Run r = exec(kHeader + kLoad + tile(64) + "halt\n");
  REQUIRE(r.exit_code == 0);
  std::set<std::string> tracks;
  std::set<int> busy;
  for (const json& e : r.trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name")
      tracks.insert(e["args"]["name"].get<std::string>());
    if (e["ph"] == "X") busy.insert(e["tid"].get<int>());
  }
  for (const char* unit : {"chip.core0.seq", "chip.core0.dma0", "chip.core0.dma1",
                           "chip.core0.mxu0", "chip.core0.vpu", "chip.core1.mxu0", "chip.memory"})
    CHECK(tracks.count(unit) == 1);
  CHECK(busy.size() >= 3);  // dma0, mxu0 and the memory were active
}

TEST_CASE("exec: overlapping instructions of one unit go to lanes, never overlapping in one",
          "[exec][trace]") {
  // Short matmuls on one set of weights: each streams 4 rows, then its results drain for
  // longer than the next takes to start, so several are in flight on mxu0 at once.
  std::string program = kHeader + "mxu.lw mxu0 src=vmem:0 k=16 n=16 dtype=int8\n";
  for (int i = 0; i < 8; ++i)
    program += "mxu.mm mxu0 src=vmem:4096 dst=accmem:" + std::to_string(i * 1024) +
               " m=4 k=16 n=16 dtype=int8\n";
  const Run r = exec(program + "halt\n");
  REQUIRE(r.exit_code == 0);
  auto names = thread_names(r.trace);
  std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> spans;
  for (const json& e : r.trace["traceEvents"])
    if (e["ph"] == "X") {
      const double ts = e["ts"].get<double>();
      spans[{e["pid"].get<int>(), e["tid"].get<int>()}].emplace_back(ts,
                                                                     ts + e["dur"].get<double>());
    }
  std::vector<std::pair<double, int>> edges;  // mxu0's starts (+1) and ends (-1)
  std::size_t lanes = 0, events = 0;
  for (auto& [key, list] : spans) {
    REQUIRE(names.count(key) == 1);
    std::sort(list.begin(), list.end());
    for (std::size_t i = 1; i < list.size(); ++i)
      CHECK(list[i].first >= list[i - 1].second - 1e-9);  // no overlap within a thread
    if (names[key] != "chip.core0.mxu0") continue;
    ++lanes;
    events += list.size();
    for (const auto& [start, end] : list) {
      edges.emplace_back(start + 1e-9, 1);  // an end and a start at one time do not overlap
      edges.emplace_back(end, -1);
    }
  }
  CHECK(events == 9);
  // Dealing each event to the lowest free lane uses as many lanes as the most events in flight
  // at once (an interval graph is coloured optimally in start order).
  std::sort(edges.begin(), edges.end());
  int depth = 0, deepest = 0;
  for (const auto& [at, step] : edges) deepest = std::max(deepest, depth += step);
  CHECK(deepest >= 2);
  CHECK(lanes == std::size_t(deepest));
}

TEST_CASE("exec: a program that deadlocks is rejected before it runs", "[exec][errors]") {
  // Every semaphore is signalled as often as it is waited for, but in a cycle: dma0 waits for s0,
  // which mxu0 signals only after s1, which dma0 signals only after s0. The checker's abstract
  // run stops at the cycle's first wait, line 3 (after the two header lines).
  const std::string program = kHeader +
                              "sem.wait dma0 s0\nsem.signal dma0 s1\n"
                              "sem.wait mxu0 s1\nsem.signal mxu0 s0\n"
                              "sem.wait vpu s2\nsem.signal mxu0 s2\nhalt\n";
  const Run r = exec(program);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err,
             Catch::StartsWith("error: ") &&
                 Catch::EndsWith(":3:1: sem.wait: deadlock: this wait never completes (core 0 "
                                 "s0 holds 0 of the 1 it needs when every unit has stopped)\n"));
}

TEST_CASE("exec: waits on one semaphore take its counts in program order, not arrival order",
          "[exec][sync]") {
  // dma0 signals s0 at once. mxu0's wait on it comes first in program order but is reached only
  // after a long matmul; the vpu reaches its later wait at once. The vpu must leave the count to
  // mxu0, whose signal on s1 lets dma0 signal s0 again, for the vpu. Taking counts in arrival
  // order, the vpu took it and the run deadlocked although the checker accepted the program.
  const std::uint64_t M = 512, N = 16;
  const std::uint64_t matmul_done = kDispatch + R + M + R + N - 2 + kWriteback;
  const std::string program = kHeader + tile(M) +
                              "sem.signal dma0 s0\nsem.wait mxu0 s0\nsem.signal mxu0 s1\n"
                              "sem.wait vpu s0\nsem.wait dma0 s1\nsem.signal dma0 s0\nhalt\n";
  // Every signal and wait after the matmul takes no time: the run ends with it.
  CHECK(cycles_of(program) == matmul_done);
}

TEST_CASE("exec: a barrier holds every core until all have drained their earlier work",
          "[exec][barrier]") {
  // Core 0 loads, then reaches the barrier once its load is complete; core 1 waits there, and
  // only then dispatches its own load (one dispatch cycle later).
  const std::string program =
      kHeader + kLoad + "barrier\nhalt\n.core 1\nbarrier\n" + kLoad + "halt\n";
  const std::uint64_t first = load_cycles(kDispatch, kLoadBytes);
  CHECK(cycles_of(program) == load_cycles(first + kDispatch, kLoadBytes));
}
