#pragma once
// An energy table: energy per counted event, kept outside the models (Accelergy's ERT idea).
// Loaded from configs/energy/*.yaml; every number there carries its source.

#include <array>
#include <map>
#include <string>
#include <vector>

#include "sim/base/dtype.h"
#include "sim/base/spec/core_spec.h"
#include "sim/base/units.h"

namespace tpusim {

// SRAM access energy per byte for a macro of a given size; sizes in between are interpolated
// in log(size), since access energy grows roughly with the square root of macro capacity.
struct SramEnergyPoint {
  Bytes macro{0};
  Picojoules read_per_byte{0};
  Picojoules write_per_byte{0};
};

struct EnergyTable {
  std::string name;
  std::uint32_t node_nm = 45;
  std::map<DType, Picojoules> mac;  // one multiply-accumulate with operands of that type
  std::array<Picojoules, kNumVectorOps> vector_op{};  // one element through the VPU
  std::vector<SramEnergyPoint> sram;  // sorted by macro size
  Picojoules register_per_byte{0};    // a byte latched by a PE register: operand hop or sum
  Picojoules noc_per_bit_hop{0};
  std::map<std::string, Picojoules> dram_per_bit;  // by DRAM standard
};

struct EnergySpec {
  std::string table_path;  // as resolved, for the report
  EnergyTable table;
  Watts static_power{0};  // leakage and always-on logic, charged for the whole run
};

}  // namespace tpusim
