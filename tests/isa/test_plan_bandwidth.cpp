// The off-chip bandwidth the lowering plans with (hbm_bytes_per_cycle): the memory's peak, unless
// the cores cannot take that much in over their interconnect links or keep enough DMA chunks in
// flight to cover a read's round trip (Little's law); and the time a load's DMA chunks take
// (dma_chunk_cycles), which bounds loads of short runs. Each expected figure is worked out here
// from the chip's parameters.

#include <catch2/catch.hpp>

#include "isa/lower/emitter.h"
#include "tests/isa/isa_test_support.h"

using namespace tpusim;
using tpusim::isa::lower_detail::hbm_bytes_per_cycle;

namespace {

// 1 GHz, so bytes per cycle are GB/s. Memory 512 B/cycle with a 100-cycle latency, one 1 KiB
// link into the core, and 2 engines x 64 chunks x 512 B = 64 KiB in flight.
ChipSpec chip() {
  ChipSpec c = isa::test::chip_128();
  c.clock = Hertz(1e9);
  c.memory.model = MemoryModel::kSimple;
  c.memory.bandwidth = Bandwidth::of_bytes_per_second(512e9);
  c.memory.latency = Duration::of_cycles(100);
  c.noc.topology = NocTopology::kCrossbar;
  c.noc.link_width = Bytes(1024);
  c.noc.hop_latency = Duration::of_cycles(1);
  c.core.dma.engines = 2;
  c.core.dma.max_outstanding = 64;
  c.core.dma.chunk = Bytes(512);
  return c;
}

// The round trip of a read: the memory's latency and a hop each way.
constexpr double kRoundTrip = 100 + 2 * 1;
constexpr double kInFlight = 2 * 64 * 512;

}  // namespace

TEST_CASE("plan bandwidth: the memory's peak while links and DMA can carry it",
          "[isa][lower][bandwidth]") {
  CHECK(hbm_bytes_per_cycle(chip()) == Approx(512));
}

TEST_CASE("plan bandwidth: a memory faster than the core's link gives the link's rate",
          "[isa][lower][bandwidth]") {
  ChipSpec c = chip();
  c.memory.bandwidth = Bandwidth::of_bytes_per_second(100e12);
  // Enough in flight to keep 2 KiB a cycle coming: 256 KiB over the 102-cycle round trip.
  c.core.dma.max_outstanding = 256;
  REQUIRE(4 * kInFlight / kRoundTrip > 2048);
  CHECK(hbm_bytes_per_cycle(c) == Approx(1024));
  // Two cores take their shares over two links.
  c.cores = 2;
  CHECK(hbm_bytes_per_cycle(c) == Approx(2048));
  // On a mesh of one column, core 0 (at the top) receives over its one southward link; with two
  // columns over two.
  c.cores = 1;
  c.noc.topology = NocTopology::kMesh;
  c.memory.channels = 4;
  c.noc.mesh_columns = 1;
  CHECK(hbm_bytes_per_cycle(c) == Approx(1024));
  c.noc.mesh_columns = 2;
  CHECK(hbm_bytes_per_cycle(c) == Approx(2048));
}

TEST_CASE("plan bandwidth: too few chunks in flight cap it by Little's law",
          "[isa][lower][bandwidth]") {
  ChipSpec c = chip();
  c.memory.bandwidth = Bandwidth::of_bytes_per_second(100e12);
  c.noc.link_width = Bytes(1 << 20);
  CHECK(hbm_bytes_per_cycle(c) == Approx(kInFlight / kRoundTrip));
  c.core.dma.max_outstanding = 4;
  CHECK(hbm_bytes_per_cycle(c) == Approx(kInFlight / 16 / kRoundTrip));
  // Ideal memory answers at once: what is left is the engines' issue rate, one chunk a cycle
  // each (2 x 512 B), whatever the links and chunks in flight.
  c.memory.model = MemoryModel::kIdeal;
  CHECK(hbm_bytes_per_cycle(c) == Approx(2 * 512));
}

TEST_CASE("plan bandwidth: a transfer issues a chunk per contiguous run at least",
          "[isa][lower][bandwidth]") {
  using tpusim::isa::lower_detail::dma_chunks;
  using tpusim::isa::lower_detail::Transfer;
  // 64 rows cut from a wider matrix: 2050 B apart in HBM, back to back in vmem.
  const auto rows = [](std::uint64_t bytes, std::uint64_t src_stride) {
    return Transfer{
        false, {isa::Space::kHbm, 0}, {isa::Space::kVmem, 0}, bytes, {64}, {src_stride}, {bytes}};
  };
  CHECK(dma_chunks(rows(256, 2050), 512) == 64);       // a run shorter than a chunk: one
  CHECK(dma_chunks(rows(1024, 2050), 512) == 64 * 2);  // two chunks a run
  CHECK(dma_chunks(rows(1000, 2050), 512) == 64 * 2);  // the last one short
  // Rows back to back on both sides are one run of 16 KiB.
  CHECK(dma_chunks(rows(256, 256), 512) == 16 * 1024 / 512);
}

TEST_CASE("plan bandwidth: chunks take the longer of their issue and their round trips in flight",
          "[isa][lower][bandwidth]") {
  using tpusim::isa::lower_detail::dma_chunk_cycles;
  ChipSpec c = chip();
  // 2 engines keep 2 x 64 chunks in flight, each for the 102-cycle round trip: 12,800 chunks
  // take 12,800 x 102 / 128 cycles, more than their 12,800 / 2 issue cycles.
  CHECK(dma_chunk_cycles(c, 2, 12800) == Approx(12800 * kRoundTrip / 128));
  // One engine of the two.
  CHECK(dma_chunk_cycles(c, 1, 12800) == Approx(12800 * kRoundTrip / 64));
  // Enough in flight to hide the round trip: one chunk a cycle an engine is the limit.
  c.core.dma.max_outstanding = 1024;
  REQUIRE(2 * 1024 / kRoundTrip > 2);
  CHECK(dma_chunk_cycles(c, 2, 12800) == Approx(12800.0 / 2));
  // Two cores share the chunks.
  c.core.dma.max_outstanding = 64;
  c.cores = 2;
  CHECK(dma_chunk_cycles(c, 2, 12800) == Approx(12800 * kRoundTrip / 256));
  // Memory that answers at once leaves the issue.
  c.cores = 1;
  c.memory.model = MemoryModel::kIdeal;
  CHECK(dma_chunk_cycles(c, 2, 12800) == Approx(12800.0 / 2));
}
