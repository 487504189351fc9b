#pragma once
// The whole chip: N identical cores sharing off-chip memory through the interconnect.

#include <cstdint>
#include <string>

#include "sim/base/spec/core_spec.h"
#include "sim/base/spec/energy_spec.h"
#include "sim/base/spec/memory_spec.h"
#include "sim/base/units.h"

namespace tpusim {

// Where the lowering keeps an operator's output that only later operators read.
enum class ActivationHome : std::uint8_t {
  kHbm,   // stored to off-chip memory and loaded back, as XLA does between fused kernels
  kVmem,  // kept in vector memory while it fits (TPUv1: activations live in the Unified Buffer)
};

// Policies of the compiler that lowers workloads for this chip (not hardware).
struct CompilerSpec {
  ActivationHome activations = ActivationHome::kHbm;
};

struct ChipSpec {
  std::string name;
  std::string description;
  Hertz clock{1e9};
  std::uint32_t cores = 1;
  CoreSpec core;
  MemorySpec memory;
  NocSpec noc;
  CompilerSpec compiler;
  EnergySpec energy;

  // Peak MACs per second of the whole chip for operands of type t (0 when unsupported).
  double peak_macs_per_second(DType t) const {
    auto it = core.mxu.precisions.find(t);
    if (it == core.mxu.precisions.end()) return 0;
    return clock.value() * cores * core.mxu.count * double(core.mxu.rows) * core.mxu.cols *
           it->second;
  }
};

}  // namespace tpusim
