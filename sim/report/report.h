#pragma once
// Everything a run reports, as plain data: raw counters per unit (copied out of the models
// through their stats visitors), and the figures derived from them in one place (derive.cpp):
// utilization, traffic per memory level, energy, per-operator rows. Writers (terminal, JSON,
// CSV, trace) only format this struct. docs/report.md documents every figure.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "isa/program.h"
#include "models/common/stats.h"
#include "models/common/trace.h"
#include "sim/base/spec/chip_spec.h"
#include "sim/config/config_tree.h"

namespace tpusim::sim {

struct StatField {
  std::string name;
  std::uint64_t value = 0;
  std::string unit;
  std::string description;
};

struct UnitStats {
  std::string path;  // "chip.core0.mxu1"
  std::string kind;  // "mxu", "vpu", "dma", "sequencer", "vmem", "accmem", "cmem", "memory"
  std::vector<StatField> total;
  // [op][field]: the values of total's fields, in its order, per operator (names and units are
  // total's: a program of 100,000 operators keeps only numbers); empty for whole-run sources
  // (channels, links).
  std::vector<std::vector<std::uint64_t>> per_op;
  std::vector<std::uint64_t> histogram;         // LatencyHistogram bucket counts, if any

  std::uint64_t get(const std::string& field) const;
  std::uint64_t get(std::uint32_t op, const std::string& field) const;
};

struct EnergyBreakdown {
  double mxu = 0, vpu = 0, sram = 0, hbm = 0, noc = 0, static_energy = 0;
  double dynamic() const { return mxu + vpu + sram + hbm + noc; }
  double total() const { return dynamic() + static_energy; }
};

struct OpReport {
  std::uint32_t id = 0;
  std::string name;
  std::string kind;
  std::uint64_t start_cycle = 0;
  std::uint64_t end_cycle = 0;
  std::uint64_t cycles = 0;
  std::uint64_t mxu_cycles = 0;         // the busiest MXU's active cycles on this operator
  std::uint64_t mxu_stream_cycles = 0;  // input-row cycles, summed over MXUs
  std::uint64_t macs = 0;
  std::uint64_t hbm_read_bytes = 0;
  std::uint64_t hbm_write_bytes = 0;
  double energy_pj = 0;  // dynamic energy; static energy is reported for the run only
  double mxu_utilization = 0;
  EnergyBreakdown energy;
};

// One DRAM channel (memory.model hbm), derived from its counters.
struct ChannelReport {
  std::string path;
  std::uint64_t read_bytes = 0, write_bytes = 0;
  std::uint64_t row_hits = 0, row_misses = 0, row_conflicts = 0, activates = 0;
  double bandwidth = 0;        // B/s over the whole run
  double bus_utilization = 0;  // data-bus busy / run time
  double avg_latency_s = 0;    // per burst, controller arrival to last data beat
  double p99_latency_s = 0;    // upper edge of the histogram bucket holding the 99th percentile
  double refresh_s = 0;        // time the banks were held by refresh
};

// One interconnect link that carried traffic.
struct LinkReport {
  std::string path;
  std::uint64_t bytes = 0;
  double utilization = 0;  // reserved time / run time
};

struct Report {
  std::string chip;
  std::string workload;
  std::uint64_t cycles = 0;
  double seconds = 0;
  double clock_hz = 0;
  std::uint64_t macs = 0;
  double mxu_utilization = 0;
  double vpu_utilization = 0;
  double memory_bandwidth_utilization = 0;
  // The chip's peaks, so a roofline can be drawn from the report alone: MACs per second by
  // operand type (ChipSpec::peak_macs_per_second, in precision order), and the off-chip
  // bandwidth that memory_bandwidth_utilization divides by (0 for memory.model ideal).
  std::vector<std::pair<std::string, double>> peak_macs_per_second;
  double peak_memory_bandwidth = 0;  // B/s
  std::uint64_t hbm_read_bytes = 0, hbm_write_bytes = 0;
  std::uint64_t vmem_read_bytes = 0, vmem_write_bytes = 0;
  std::uint64_t noc_bytes = 0;
  EnergyBreakdown energy;
  std::vector<OpReport> ops;
  std::vector<ChannelReport> channels;
  std::vector<LinkReport> links;
  std::vector<UnitStats> units;
  double wall_seconds = 0;
  std::uint64_t peak_rss_bytes = 0;
  config::ConfigNode config;  // the resolved chip config
};

// Copies every counter out of the live models.
std::vector<UnitStats> collect_stats(const std::vector<models::StatsSource>& sources,
                                     std::size_t ops);

// Derives every figure of the report from the raw counters.
Report derive_report(const ChipSpec& chip, const isa::Program& program,
                     std::vector<UnitStats> units, const std::vector<models::OpSpan>& spans,
                     std::uint64_t cycles);

// SRAM access energy per byte for a macro of `macro_bytes`, interpolated in log(size) between
// the table's points and held constant beyond its ends.
double sram_pj_per_byte(const EnergyTable& table, std::uint64_t macro_bytes, bool write);

}  // namespace tpusim::sim
