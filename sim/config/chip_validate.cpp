// Cross-field rules of a chip: what a per-key range check cannot see. Each rule names the key
// a user would change to fix it.

#include <algorithm>
#include <set>
#include <sstream>

#include "sim/config/chip_config.h"
#include "sim/config/units_parse.h"

namespace tpusim::config {
namespace {

void check(bool ok, const std::string& key_path, const std::string& message) {
  if (!ok) throw SpecError(key_path, message);
}

void validate_sram(const SramSpec& s, const std::string& key) {
  check(s.capacity.value() % s.banks == 0, key + ".banks",
        format_size(s.capacity) + " does not divide into " + std::to_string(s.banks) +
            " equal banks");
}

void validate_address_mapping(const std::string& mapping) {
  const std::string key = "memory.hbm.address_mapping";
  const std::set<std::string> fields = {"ro", "ba", "bg", "ch", "co"};
  std::set<std::string> seen;
  std::stringstream split(mapping);
  for (std::string field; std::getline(split, field, '-');) {
    check(fields.count(field) == 1, key,
          "unknown field '" + field + "' in \"" + mapping + "\" (fields: ro ba bg ch co)");
    check(seen.insert(field).second, key,
          "field '" + field + "' appears twice in \"" + mapping + "\"");
  }
  check(seen == fields, key,
        "\"" + mapping + "\" must name each of ro ba bg ch co exactly once");
}

void validate_dram(const DramSpec& d, const MemorySpec& memory) {
  check((d.bus_width_bits * d.burst_length) % 8 == 0, "memory.hbm.burst_length",
        "bus_width_bits x burst_length must be a whole number of bytes");
  // A burst holds the bus for whole DRAM cycles; a fraction left over would make the peak
  // (transfers_per_clock x clock x bus width) unreachable.
  check(d.transfers_per_clock > 0 && d.burst_length % d.transfers_per_clock == 0,
        "memory.hbm.transfers_per_clock",
        "burst_length (" + std::to_string(d.burst_length) +
            ") must be a multiple of transfers_per_clock (" +
            std::to_string(d.transfers_per_clock) + "): a burst takes whole DRAM cycles");
  const DramTiming& t = d.timing;
  const auto ck = [&](const Duration& x) { return x.cycles(d.clock).value(); };
  // Timings are written in ns, so a rule broken in cycles may be the clock's doing: name it.
  const std::string tck_at_clock = " tCK at memory.hbm.clock " + format_frequency(d.clock);
  check(ck(t.tRAS) >= ck(t.tRCD), "memory.hbm.timing.tRAS",
        "tRAS (" + std::to_string(ck(t.tRAS)) + tck_at_clock + ") must be at least tRCD (" +
            std::to_string(ck(t.tRCD)) + " tCK): a row stays open until its first column access");
  check(ck(t.tRC) >= ck(t.tRAS) + ck(t.tRP), "memory.hbm.timing.tRC",
        "tRC (" + std::to_string(ck(t.tRC)) + tck_at_clock + ") must be at least tRAS + tRP (" +
            std::to_string(ck(t.tRAS) + ck(t.tRP)) + " tCK)");
  // A refresh due at cycle d waits for the rows open at d to close: a command issued just before
  // d keeps its row open up to max(tRAS, tRTP, tWL + burst + tWR) longer, then tRP. The banks
  // are free tRFC after that; a row opened then must reach its column command (tRCD) before the
  // next refresh falls due, or no request is ever served and the run never ends.
  const std::uint64_t burst = (d.burst_length + d.transfers_per_clock - 1) / d.transfers_per_clock;
  const std::uint64_t least_refi =
      ck(t.tRFC) + ck(t.tRP) + std::max({ck(t.tRAS), ck(t.tRTP), ck(t.tWL) + burst + ck(t.tWR)}) +
      ck(t.tRCD) + 1;
  check(ck(t.tREFI) >= least_refi, "memory.hbm.timing.tREFI",
        "tREFI (" + std::to_string(ck(t.tREFI)) + tck_at_clock +
            ") must be at least tRFC + tRP + max(tRAS, tRTP, tWL + burst + tWR) + tRCD + 1 (" +
            std::to_string(least_refi) +
            " tCK), or a refresh could leave no time to open a row and read it");
  check(ck(t.tCCD_L) >= ck(t.tCCD_S), "memory.hbm.timing.tCCD_L", "tCCD_L must be >= tCCD_S");
  check(ck(t.tRRD_L) >= ck(t.tRRD_S), "memory.hbm.timing.tRRD_L", "tRRD_L must be >= tRRD_S");
  check(ck(t.tWTR_L) >= ck(t.tWTR_S), "memory.hbm.timing.tWTR_L", "tWTR_L must be >= tWTR_S");
  validate_address_mapping(d.address_mapping);
  check(memory.capacity <= d.capacity(), "memory.capacity",
        format_size(memory.capacity) + " exceeds the " + format_size(d.capacity()) +
            " that the memory.hbm organisation holds");
}

// The cycle-level MXU (models/mxu/mxu_cycle.h) streams one row per cycle and carries integer
// values; it refuses what it would otherwise model wrongly, and arrays too big to be useful.
void validate_cycle_mxu(const CoreSpec& core) {
  const MxuSpec& mxu = core.mxu;
  const std::uint64_t pes = std::uint64_t{mxu.rows} * mxu.cols;
  check(pes <= kMaxCycleMxuPes, "core.mxu.model",
        "cycle simulates every PE; a " + std::to_string(mxu.rows) + "x" +
            std::to_string(mxu.cols) + " array (" + std::to_string(pes) +
            " PEs) is above its limit of " + std::to_string(kMaxCycleMxuPes) +
            " PEs; use model: fast");
  std::uint32_t widest = 0;
  for (const auto& [dtype, rate] : mxu.precisions) {
    std::ostringstream rate_text;
    rate_text << rate;
    check(dtype_is_integer(dtype) && rate == 1.0, "core.mxu.precisions",
          "model: cycle carries integer operands at rate 1; " + std::string(dtype_name(dtype)) +
              " at rate " + rate_text.str() + " needs model: fast");
    widest = std::max(widest, dtype_bytes(dtype));
  }
  check(mxu.rounding.empty(), "core.mxu.rounding",
        "model: cycle runs its precisions only; rounding other operand types needs model: fast");
  check(mxu.skew == MxuSkew::kTile, "core.mxu.skew",
        "model: cycle moves real values through the PEs, so its skew is the tile's; skew: array "
        "needs model: fast");
  const std::uint64_t row_bytes = std::uint64_t{std::max(mxu.rows, mxu.cols)} * widest;
  check(core.vmem.port_width.value() >= row_bytes, "core.vmem.port_width",
        "model: cycle streams a whole array row per cycle, " + std::to_string(row_bytes) +
            " B, but the port moves " + format_size(core.vmem.port_width) + " per cycle");
}

}  // namespace

void validate_chip(const ChipSpec& chip) {
  const CoreSpec& core = chip.core;
  validate_sram(core.vmem, "core.vmem");
  validate_sram(core.accmem, "core.accmem");
  if (core.cmem.present()) validate_sram(core.cmem, "core.cmem");

  std::uint32_t widest_operand = 0;
  for (const auto& [dtype, rate] : core.mxu.precisions)
    widest_operand = std::max(widest_operand, dtype_bytes(dtype));
  for (const auto& [from, to] : core.mxu.rounding) {
    const std::string key = "core.mxu.rounding." + std::string(dtype_name(from));
    check(!core.mxu.precisions.count(from), key,
          std::string(dtype_name(from)) +
              " is a precision of the array (core.mxu.precisions), "
              "so it is not rounded");
    check(core.mxu.precisions.count(to) == 1, key,
          "rounds to " + std::string(dtype_name(to)) +
              ", which is not in core.mxu.precisions (core.mxu.rounding={} rounds nothing)");
    check(dtype_is_integer(from) == dtype_is_integer(to), key,
          "rounds " + std::string(dtype_name(from)) + " to " + std::string(dtype_name(to)) +
              ": one is an integer type, the other a floating one");
    widest_operand = std::max(widest_operand, dtype_bytes(from));
  }
  const std::uint64_t weight_tile = std::uint64_t{core.mxu.rows} * core.mxu.cols * widest_operand;
  check(core.vmem.capacity.value() >= weight_tile, "core.vmem.capacity",
        format_size(core.vmem.capacity) + " cannot hold one " + std::to_string(core.mxu.rows) +
            "x" + std::to_string(core.mxu.cols) + " weight tile (" +
            format_size(Bytes(weight_tile)) + ")");
  const std::uint64_t output_tile = std::uint64_t{core.mxu.rows} * core.mxu.cols * 4;
  check(core.accmem.capacity.value() >= output_tile, "core.accmem.capacity",
        format_size(core.accmem.capacity) + " cannot hold one " + std::to_string(core.mxu.rows) +
            "x" + std::to_string(core.mxu.cols) + " tile of 32-bit accumulators (" +
            format_size(Bytes(output_tile)) + ")");
  if (core.mxu.model == MxuModel::kCycle) validate_cycle_mxu(core);
  check(core.dma.chunk <= core.vmem.capacity, "core.dma.chunk",
        "a DMA chunk larger than vector memory can never be placed");

  validate_dram(chip.memory.hbm, chip.memory);
  check(chip.compiler.activations != ActivationHome::kVmem || chip.cores == 1,
        "compiler.activations",
        "vmem needs cores: 1 (each core has its own vector memory; cores exchange activations "
        "through HBM)");

  const EnergyTable& table = chip.energy.table;
  for (const auto& [dtype, rate] : core.mxu.precisions)
    check(table.mac.count(dtype) == 1, "energy.table",
          "energy table '" + table.name + "' has no mac energy for " +
              std::string(dtype_name(dtype)) + ", which core.mxu.precisions lists");
  check(table.dram_per_bit.count(chip.memory.hbm.standard) == 1, "memory.hbm.standard",
        "energy table '" + table.name + "' has no dram_per_bit entry for '" +
            chip.memory.hbm.standard + "'");

  if (chip.noc.topology == NocTopology::kMesh) {
    const std::uint32_t nodes = chip.cores + (chip.memory.model == MemoryModel::kHbm
                                                  ? chip.memory.hbm.total_channels()
                                                  : chip.memory.channels);
    check(chip.noc.mesh_columns <= nodes, "noc.mesh_columns",
          std::to_string(chip.noc.mesh_columns) + " columns for a mesh of only " +
              std::to_string(nodes) + " nodes (cores + memory channels)");
  }
}

}  // namespace tpusim::config
