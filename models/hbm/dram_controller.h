#pragma once
// The controller of one DRAM channel (an HBM pseudo-channel or a DDR channel): a request queue
// of `queue_depth` bursts, scheduled at command level by FR-FCFS (the earliest-issuable command
// first; at equal times a row hit's column command first, then the oldest request) or FCFS (only
// the oldest request may issue), with an open- or close-page policy. No SystemC: the memory
// model hands it a batch of bursts and it answers when each one's data has crossed the bus.
// models/hbm/README.md explains how batches follow from the loosely-timed TLM socket.

#include <cstdint>
#include <vector>

#include "models/common/histogram.h"
#include "models/hbm/dram_channel.h"

namespace tpusim::models {

enum class RowOutcome : std::uint8_t { kHit, kMiss, kConflict };

// One burst request to this channel.
struct DramRequest {
  DramAddress address;
  bool write = false;
  std::uint64_t arrival = 0;  // DRAM cycle it reaches the controller
  // Set by schedule():
  std::uint64_t done = 0;  // cycle its data has crossed the bus
  RowOutcome outcome = RowOutcome::kHit;
};

// Per-channel statistics: request outcomes counted by the controller, commands by the channel.
struct DramControllerStats {
  std::uint64_t reads = 0, writes = 0;  // bursts
  std::uint64_t read_bytes = 0, write_bytes = 0;
  std::uint64_t row_hits = 0, row_misses = 0, row_conflicts = 0;
  std::uint64_t activates = 0, precharges = 0;
  std::uint64_t refreshes = 0, refresh_cycles = 0;
  std::uint64_t data_bus_cycles = 0;
  std::uint64_t latency_cycles = 0;  // summed arrival-to-data over bursts
  std::uint64_t last_done_cycle = 0;
  LatencyHistogram latency;  // per burst, DRAM cycles; not a scalar field, read by the report

  template <class V>
  void visit(V& v) {
    v("reads", reads, "", "read bursts served");
    v("writes", writes, "", "write bursts served");
    v("read_bytes", read_bytes, "B", "bytes read");
    v("write_bytes", write_bytes, "B", "bytes written");
    v("row_hits", row_hits, "", "bursts whose row was already open");
    v("row_misses", row_misses, "", "bursts that found their bank closed (ACT)");
    v("row_conflicts", row_conflicts, "", "bursts that found another row open (PRE + ACT)");
    v("activates", activates, "", "ACT commands (each with its PRE, charged activate_energy)");
    v("precharges", precharges, "", "PRE commands, refresh precharge-all excluded");
    v("refreshes", refreshes, "", "all-bank refreshes");
    v("refresh_cycles", refresh_cycles, "tCK", "DRAM cycles the banks were held by refresh");
    v("data_bus_cycles", data_bus_cycles, "tCK", "DRAM cycles the data bus carried bursts");
    v("latency_cycles", latency_cycles, "tCK", "sum over bursts of arrival to last data beat");
    v("last_done_cycle", last_done_cycle, "tCK", "when the last burst's data crossed the bus");
  }
};

class DramController {
 public:
  explicit DramController(const DramSpec& spec);

  // Schedules `batch` (bursts for this channel, oldest first, visible to the scheduler
  // together) after every command issued for earlier batches, and fills in each burst's `done`
  // and `outcome`. Returns the latest `done`.
  std::uint64_t schedule(std::vector<DramRequest>& batch);

  const DramChannel& channel() const { return channel_; }
  // Request counts plus the channel's command counts, assembled for the report.
  DramControllerStats stats() const;

 private:
  // The next command request `r` needs given its bank's state, or false while it must wait for
  // other queued requests that hit the bank's open row.
  bool next_command(const std::vector<DramRequest>& batch, std::size_t r, DramCommand& cmd) const;
  bool others_hit(const std::vector<DramRequest>& batch, std::size_t except,
                  const DramAddress& a) const;

  DramChannel channel_;
  const std::uint32_t queue_depth_;
  const bool fcfs_;
  const bool close_page_;
  const std::uint64_t burst_bytes_;
  // When each of the last queue_depth requests left the queue (its column command), in leaving
  // order: a new request enters only once the request queue_depth places ahead of it has left.
  std::vector<std::uint64_t> left_at_;
  std::uint64_t entered_ = 0;
  std::uint32_t enter_slot_ = 0, leave_slot_ = 0;
  // Per-batch scratch, kept to avoid allocation per call.
  std::vector<std::size_t> window_;
  std::vector<std::uint64_t> entry_;
  std::vector<std::uint8_t> started_;
  DramControllerStats stats_;
};

}  // namespace tpusim::models
