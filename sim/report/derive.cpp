// Derived figures and energy: the only place that turns counters into utilization, traffic and
// picojoules (STYLE rule 12). Energy = counted events x configs/energy table + static power x time.

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "models/common/histogram.h"
#include "sim/report/report.h"

namespace tpusim::sim {

std::uint64_t UnitStats::get(const std::string& field) const {
  for (const StatField& f : total)
    if (f.name == field) return f.value;
  return 0;
}

std::uint64_t UnitStats::get(std::uint32_t op, const std::string& field) const {
  if (op >= per_op.size()) return 0;
  for (std::size_t i = 0; i < total.size(); ++i)  // collect_stats keeps the two aligned
    if (total[i].name == field) return per_op[op][i];
  return 0;
}

namespace {

class Collector : public models::StatsVisitor {
 public:
  explicit Collector(std::vector<StatField>& out) : out_(out) {}
  void field(std::string_view name, std::uint64_t value, std::string_view unit,
             std::string_view description) override {
    out_.push_back({std::string(name), value, std::string(unit), std::string(description)});
  }

 private:
  std::vector<StatField>& out_;
};

// An operator's values only: the source visits the same fields in the same order for every
// operator as for the total.
class ValueCollector : public models::StatsVisitor {
 public:
  explicit ValueCollector(std::vector<std::uint64_t>& out) : out_(out) {}
  void field(std::string_view, std::uint64_t value, std::string_view, std::string_view) override {
    out_.push_back(value);
  }

 private:
  std::vector<std::uint64_t>& out_;
};

}  // namespace

std::vector<UnitStats> collect_stats(const std::vector<models::StatsSource>& sources,
                                     std::size_t ops) {
  std::vector<UnitStats> units;
  for (const models::StatsSource& source : sources) {
    UnitStats u;
    u.path = source.path;
    u.kind = source.kind;
    Collector total(u.total);
    source.visit_total(total);
    if (source.per_op) {
      u.per_op.resize(ops);
      for (std::uint32_t op = 0; op < ops; ++op) {
        u.per_op[op].reserve(u.total.size());
        ValueCollector per_op(u.per_op[op]);
        source.visit_op(op, per_op);
        // get(op, field) reads a value at its field's place in the total.
        if (u.per_op[op].size() != u.total.size())
          throw std::logic_error(u.path + ": an operator's stats have other fields than the total");
      }
    }
    if (source.histogram) u.histogram = source.histogram();
    units.push_back(std::move(u));
  }
  return units;
}

double sram_pj_per_byte(const EnergyTable& table, std::uint64_t macro_bytes, bool write) {
  const auto& points = table.sram;
  const auto value = [write](const SramEnergyPoint& p) {
    return (write ? p.write_per_byte : p.read_per_byte).value();
  };
  if (points.empty()) return 0;
  if (macro_bytes <= points.front().macro.value()) return value(points.front());
  if (macro_bytes >= points.back().macro.value()) return value(points.back());
  for (std::size_t i = 1; i < points.size(); ++i) {
    const double hi = double(points[i].macro.value());
    if (double(macro_bytes) > hi) continue;
    const double lo = double(points[i - 1].macro.value());
    const double f = std::log(double(macro_bytes) / lo) / std::log(hi / lo);
    return value(points[i - 1]) + f * (value(points[i]) - value(points[i - 1]));
  }
  return value(points.back());
}

namespace {

const SramSpec& sram_spec(const ChipSpec& chip, const std::string& kind) {
  if (kind == "vmem") return chip.core.vmem;
  if (kind == "accmem") return chip.core.accmem;
  return chip.core.cmem;
}

// Dynamic energy of one operator (or, with op = kAll, of the whole run).
constexpr std::uint32_t kAll = ~0u;

EnergyBreakdown dynamic_energy(const ChipSpec& chip, const std::vector<UnitStats>& units,
                               std::uint32_t op) {
  const EnergyTable& table = chip.energy.table;
  const auto get = [op](const UnitStats& u, const std::string& f) {
    return op == kAll ? u.get(f) : u.get(op, f);
  };
  EnergyBreakdown e;
  for (const UnitStats& u : units) {
    if (u.kind == "mxu") {
      for (DType t : kAllDTypes) {
        const auto macs = get(u, "macs_" + std::string(dtype_name(t)));
        // An operand type the array rounds costs a MAC of the precision it is rounded to.
        const auto it = table.mac.find(mxu_precision(chip.core.mxu, t).value_or(t));
        if (macs > 0 && it != table.mac.end()) e.mxu += double(macs) * it->second.value();
      }
      // Every byte a PE register latches: operands as the dataflow moves them, sums where they
      // pass or accumulate (models/mxu/array_latches.h).
      e.mxu += table.register_per_byte.value() * double(get(u, "register_write_bytes"));
    } else if (u.kind == "vpu") {
      for (std::size_t i = 0; i < kNumVectorOps; ++i)
        e.vpu += double(get(u, "elements_" + std::string(vector_op_name(static_cast<VectorOp>(i))))) *
                 table.vector_op[i].value();
    } else if (u.kind == "vmem" || u.kind == "accmem" || u.kind == "cmem") {
      const std::uint64_t macro = sram_spec(chip, u.kind).bank_capacity().value();
      e.sram += double(get(u, "read_bytes")) * sram_pj_per_byte(table, macro, false) +
                double(get(u, "write_bytes")) * sram_pj_per_byte(table, macro, true);
    } else if (u.kind == "memory") {
      const auto it = table.dram_per_bit.find(chip.memory.hbm.standard);
      const double per_bit = it != table.dram_per_bit.end() ? it->second.value() : 0;
      if (chip.memory.model == MemoryModel::kHbm) {
        // dram_per_bit is read as the cost of a stream that uses each activated page whole
        // (configs/README.md): its activation share, one activate_energy per page, is
        // replaced by the ACT commands the bank model issued, so nothing is charged twice.
        // The bits are those the data bus moved: a burst toggles all of its pins however
        // few of its bytes were asked for.
        const DramSpec& d = chip.memory.hbm;
        const double act = d.activate_energy.value();
        const double page_bits = 8.0 * double(d.columns) * double(d.burst_bytes().value());
        const double bits = 8.0 * double(get(u, "burst_bytes"));
        e.hbm +=
            bits * std::max(0.0, per_bit - act / page_bits) + double(get(u, "activates")) * act;
      } else {
        e.hbm += 8.0 * double(get(u, "read_bytes") + get(u, "write_bytes")) * per_bit;
      }
      e.noc += 8.0 * double(get(u, "noc_byte_hops")) * table.noc_per_bit_hop.value();
    }
  }
  return e;
}

// PE-cycles the MACs of `u` (for `op`) occupied: a MAC at rate r costs 1/r PE-cycles.
double pe_cycles(const ChipSpec& chip, const UnitStats& u, std::uint32_t op) {
  double total = 0;
  const auto add = [&](DType operand, double rate) {
    const std::string field = "macs_" + std::string(dtype_name(operand));
    total += double(op == kAll ? u.get(field) : u.get(op, field)) / rate;
  };
  for (const auto& [dtype, rate] : chip.core.mxu.precisions) add(dtype, rate);
  for (const auto& [from, to] : chip.core.mxu.rounding) add(from, chip.core.mxu.precisions.at(to));
  return total;
}

// Per-channel and per-link figures over the whole run.
void derive_memory_system(const ChipSpec& chip, const std::vector<UnitStats>& units, Report& r) {
  const double ck = chip.memory.hbm.clock.value();
  const double run_ps = r.seconds * 1e12;
  for (const UnitStats& u : units) {
    if (u.kind == "dram_channel") {
      ChannelReport c;
      c.path = u.path;
      c.read_bytes = u.get("read_bytes");
      c.write_bytes = u.get("write_bytes");
      c.row_hits = u.get("row_hits");
      c.row_misses = u.get("row_misses");
      c.row_conflicts = u.get("row_conflicts");
      c.activates = u.get("activates");
      const double bursts = double(u.get("reads") + u.get("writes"));
      if (r.seconds > 0) {
        c.bandwidth = double(c.read_bytes + c.write_bytes) / r.seconds;
        c.bus_utilization = double(u.get("data_bus_cycles")) / ck / r.seconds;
      }
      if (bursts > 0) c.avg_latency_s = double(u.get("latency_cycles")) / bursts / ck;
      std::uint64_t total = 0, seen = 0;
      for (std::uint64_t n : u.histogram) total += n;
      for (std::size_t i = 0; i < u.histogram.size() && total > 0; ++i) {
        seen += u.histogram[i];
        if (double(seen) >= 0.99 * double(total)) {
          c.p99_latency_s = double(models::LatencyHistogram::upper_bound(i)) / ck;
          break;
        }
      }
      c.refresh_s = double(u.get("refresh_cycles")) / ck;
      r.channels.push_back(std::move(c));
    } else if (u.kind == "noc_link" && u.get("bytes") > 0) {
      r.links.push_back({u.path, u.get("bytes"),
                         run_ps > 0 ? double(u.get("busy_ps")) / run_ps : 0.0});
    }
  }
}

}  // namespace

Report derive_report(const ChipSpec& chip, const isa::Program& program,
                     std::vector<UnitStats> units, const std::vector<models::OpSpan>& spans,
                     std::uint64_t cycles) {
  Report r;
  r.chip = chip.name;
  r.workload = program.file_name;
  r.cycles = cycles;
  r.clock_hz = chip.clock.value();
  // From the cycles, not SystemC's end time: its period is a whole number of femtoseconds, so
  // over millions of cycles the two drift apart by a few cycles.
  r.seconds = double(cycles) / r.clock_hz;
  const double array_pes = double(chip.core.mxu.rows) * chip.core.mxu.cols;
  const double all_pes = array_pes * chip.core.mxu.count * chip.cores;

  double used_pe_cycles = 0, vpu_busy = 0;
  for (const UnitStats& u : units) {
    if (u.kind == "mxu") {
      for (DType t : kAllDTypes) r.macs += u.get("macs_" + std::string(dtype_name(t)));
      used_pe_cycles += pe_cycles(chip, u, kAll);
    } else if (u.kind == "vpu") {
      vpu_busy += double(u.get("busy_cycles"));
      r.macs += u.get("elements_mac");  // depthwise convolutions run on the vector unit
    } else if (u.kind == "memory") {
      r.hbm_read_bytes += u.get("read_bytes");
      r.hbm_write_bytes += u.get("write_bytes");
    } else if (u.kind == "vmem") {
      r.vmem_read_bytes += u.get("read_bytes");
      r.vmem_write_bytes += u.get("write_bytes");
    }
  }
  // Ideal memory is reached without crossing the interconnect.
  if (chip.memory.model != MemoryModel::kIdeal) r.noc_bytes = r.hbm_read_bytes + r.hbm_write_bytes;
  if (cycles > 0) {
    r.mxu_utilization = used_pe_cycles / (all_pes * double(cycles));
    r.vpu_utilization = vpu_busy / (double(chip.cores) * double(cycles));
  }
  const double peak_bw = chip.memory.model == MemoryModel::kHbm
                             ? chip.memory.hbm.peak_bandwidth().value()
                             : chip.memory.bandwidth.bytes_per_second(chip.clock).value();
  if (r.seconds > 0 && chip.memory.model != MemoryModel::kIdeal)
    r.memory_bandwidth_utilization =
        double(r.hbm_read_bytes + r.hbm_write_bytes) / (peak_bw * r.seconds);
  for (const auto& precision : chip.core.mxu.precisions)
    r.peak_macs_per_second.emplace_back(dtype_name(precision.first),
                                        chip.peak_macs_per_second(precision.first));
  if (chip.memory.model != MemoryModel::kIdeal) r.peak_memory_bandwidth = peak_bw;

  r.energy = dynamic_energy(chip, units, kAll);
  r.energy.static_energy = chip.energy.static_power.value() * r.seconds * 1e12;

  const double period_ps = 1e12 / chip.clock.value();
  for (std::uint32_t id = 0; id < program.ops.size(); ++id) {
    OpReport o;
    o.id = id;
    o.name = program.ops[id].name;
    o.kind = program.ops[id].kind;
    if (id < spans.size() && spans[id].seen()) {
      // Spans are whole picoseconds, so a time on a cycle edge may be off by half a picosecond
      // (1e-3 of a cycle at GHz clocks); no operator runs past the end of the run.
      o.start_cycle = static_cast<std::uint64_t>(std::floor(double(spans[id].start_ps) / period_ps + 1e-3));
      o.end_cycle = std::min<std::uint64_t>(
          cycles, static_cast<std::uint64_t>(std::ceil(double(spans[id].end_ps) / period_ps - 1e-3)));
      o.start_cycle = std::min(o.start_cycle, o.end_cycle);
    }
    o.cycles = o.end_cycle - o.start_cycle;
    double op_pe_cycles = 0;
    for (const UnitStats& u : units) {
      if (u.kind == "mxu") {
        o.mxu_cycles = std::max(o.mxu_cycles, u.get(id, "active_cycles"));
        o.mxu_stream_cycles += u.get(id, "stream_cycles");
        for (DType t : kAllDTypes) o.macs += u.get(id, "macs_" + std::string(dtype_name(t)));
        op_pe_cycles += pe_cycles(chip, u, id);
      } else if (u.kind == "vpu") {
        o.macs += u.get(id, "elements_mac");
      } else if (u.kind == "memory") {
        o.hbm_read_bytes += u.get(id, "read_bytes");
        o.hbm_write_bytes += u.get(id, "write_bytes");
      }
    }
    o.energy = dynamic_energy(chip, units, id);
    o.energy_pj = o.energy.dynamic();
    if (o.cycles > 0) o.mxu_utilization = op_pe_cycles / (all_pes * double(o.cycles));
    r.ops.push_back(std::move(o));
  }
  derive_memory_system(chip, units, r);
  r.units = std::move(units);
  return r;
}

}  // namespace tpusim::sim
