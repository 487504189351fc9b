#pragma once
// What the Mxu module asks of an MXU model: when an instruction starts and ends, and (in
// functional mode) its values. Two implementations, chosen by `core.mxu.model`:
//   fast   MxuTiming's formulas plus MxuDatapath's arithmetic;
//   cycle  CycleMxu: every PE simulated each cycle, values and timing from the array.
// The Mxu module holds the ports, counts stats and waits; it is the same for both.

#include <cstdint>
#include <memory>

#include "isa/program.h"
#include "models/mxu/mxu_cycle.h"
#include "models/mxu/mxu_timing.h"
#include "sim/base/spec/core_spec.h"

namespace tpusim::models {

class MxuEngine {
 public:
  virtual ~MxuEngine() = default;
  // `vmem` is vector memory in functional mode, null otherwise (the values are then zeros).
  virtual MxuLoadTiming load_weights(const isa::MxuLoadWeights& lw, std::uint64_t now,
                                     const std::uint8_t* vmem) = 0;
  virtual MxuMatmulTiming matmul(const isa::MxuMatmul& mm, std::uint64_t now,
                                 const std::uint8_t* vmem) = 0;
  // Functional mode, called at the instruction's start: take the tile; write the results.
  virtual void start_load(const isa::MxuLoadWeights& lw, const std::uint8_t* vmem) = 0;
  virtual void start_matmul(const isa::MxuMatmul& mm, const std::uint8_t* vmem,
                            std::uint8_t* accmem) = 0;
  // When the array can take the next instruction's input rows.
  virtual std::uint64_t input_free_at() const = 0;
  // The earliest start of the next weight load or matmul as far as the array allows: the unit
  // finds a vector-memory port free from there before it commits the instruction.
  virtual std::uint64_t load_ready_at() const = 0;
  virtual std::uint64_t matmul_ready_at(bool keep) const = 0;
  // After the run: lets the cycle-level array drain into its observer.
  virtual void finish() {}
};

// `observer` (cycle model only) receives every simulated cycle of the array.
std::unique_ptr<MxuEngine> make_mxu_engine(const MxuSpec& spec, Hertz clock,
                                           std::uint64_t vmem_port_bytes_per_cycle,
                                           ArrayObserver* observer);

}  // namespace tpusim::models
