#pragma once
// Off-chip memory (simple bandwidth/latency model, detailed HBM/DDR model, or ideal) and the
// on-chip interconnect between cores and memory channels.

#include <cstdint>
#include <string>
#include <string_view>

#include "sim/base/units.h"

namespace tpusim {

// simple: bandwidth + latency per channel. hbm: bank-level DRAM timing (also drives DDR
// organisations such as TPUv1's DDR3). ideal: no latency, unlimited bandwidth (SCALE-Sim's view).
enum class MemoryModel : std::uint8_t { kSimple, kHbm, kIdeal };

enum class DramScheduler : std::uint8_t { kFrFcfs, kFcfs };
enum class PagePolicy : std::uint8_t { kOpen, kClose };
// How the controller is simulated: every command by FR-FCFS over the queue (`command`), or one
// decision per transaction's bursts in a channel on bank and bus timelines (`timeline`).
enum class DramEngine : std::uint8_t { kCommand, kTimeline };

// Every timing in DRAM clock cycles (tCK) once resolved; the config may write ns.
struct DramTiming {
  Duration tRCD, tRP, tRAS, tRC, tCL, tWL, tCCD_S, tCCD_L, tRRD_S, tRRD_L, tFAW, tWR, tWTR_S,
      tWTR_L, tRTP, tRFC, tREFI;
  // Read command to write command on the same channel: the bus turnaround beyond the read's own
  // burst. Optional; 0 leaves only the data-bus occupancy between the two.
  Duration tRTW = Duration::of_cycles(0);
};

struct DramSpec {
  std::string standard = "hbm2";  // names the row of the energy table's dram section
  std::uint32_t stacks = 1;
  std::uint32_t channels = 8;         // per stack
  std::uint32_t pseudo_channels = 2;  // per channel (1 for DDR)
  std::uint32_t bank_groups = 4;
  std::uint32_t banks_per_group = 4;
  std::uint32_t rows = 16384;
  std::uint32_t columns = 64;       // column addresses per row, in bursts
  std::uint32_t burst_length = 4;   // beats per burst
  std::uint32_t bus_width_bits = 64;  // data pins per pseudo-channel
  Hertz clock{1e9};                 // CK: the clock the timing parameters count
  std::uint32_t transfers_per_clock = 2;  // data beats per CK: 2 (DDR) for HBM2/DDR3, 4 for HBM3
  DramTiming timing;
  std::uint32_t queue_depth = 32;   // requests per channel controller
  DramScheduler scheduler = DramScheduler::kFrFcfs;
  PagePolicy page_policy = PagePolicy::kOpen;
  DramEngine engine = DramEngine::kCommand;
  std::string address_mapping = "ro-ba-bg-ch-co";  // most to least significant field
  // The channel digit plus the base-channels digits of every field above it, modulo the
  // channels: a power-of-two stride then spreads over the channels instead of returning to the
  // same few (memory controllers hash upper address bits into the channel; the simple model
  // does the same with its 256 B blocks).
  bool channel_hash = false;
  Picojoules activate_energy{0};  // one ACT+PRE pair

  std::uint32_t total_channels() const { return stacks * channels * pseudo_channels; }
  Bytes burst_bytes() const { return Bytes(std::uint64_t{bus_width_bits} * burst_length / 8); }
  Bytes capacity() const {
    return Bytes(std::uint64_t{total_channels()} * bank_groups * banks_per_group * rows *
                 columns * burst_bytes().value());
  }
  BytesPerSecond peak_bandwidth() const {
    return BytesPerSecond(transfers_per_clock * clock.value() * bus_width_bits / 8.0 *
                          total_channels());
  }
};

struct MemorySpec {
  MemoryModel model = MemoryModel::kSimple;
  Bytes capacity{8 * kGiB};
  std::uint32_t channels = 16;          // simple model: independent channels sharing `bandwidth`
  Bandwidth bandwidth = Bandwidth::of_bytes_per_second(614e9);  // simple model: total peak
  Duration latency = Duration::of_seconds(100e-9);  // simple model: request to first byte
  DramSpec hbm;  // the bank-level model's organisation and timing (model: hbm)
};

enum class NocTopology : std::uint8_t { kCrossbar, kMesh };

struct NocSpec {
  NocTopology topology = NocTopology::kCrossbar;
  std::uint32_t mesh_columns = 1;  // mesh: nodes per row; rows follow from the node count
  Bytes link_width{64};            // bytes per cycle per link and direction
  Duration hop_latency = Duration::of_cycles(1);
};

}  // namespace tpusim
