#pragma once
// Waveforms of the cycle-level array (`tpusim exec --vcd FILE`), and of the RTL, which the
// co-simulation test writes through the same class so both files have the same signal names:
//   mxu.clk, mxu.cycle, mxu.in_valid, mxu.in_tag, mxu.wl_valid, mxu.cap, mxu.shift
//   mxu.pe_<r>_<c>.{a_valid, a, w, psum_valid, psum}   one scope per PE
// PE signals at cycle t: a and w are what the PE multiplies in cycle t; psum is the sum it
// latches at the end of cycle t. A cycle spans [t * period, (t + 1) * period); clk is high in the
// first half.

#include <algorithm>
#include <cstdint>
#include <ostream>
#include <vector>

#include "models/mxu/mxu_cycle.h"
#include "models/mxu/vcd_writer.h"

namespace tpusim::models {

class ArrayVcd : public ArrayObserver {
 public:
  // `period_ps`: one clock cycle in picoseconds (the VCD time unit). `operand_bits`: the width
  // of a and w, the array's widest integer operand (8 in the RTL).
  ArrayVcd(std::ostream& out, std::uint64_t period_ps, std::uint32_t operand_bits = 8);
  ~ArrayVcd() override;

  void begin(Dataflow dataflow, std::uint32_t rows, std::uint32_t cols) override;
  void cycle(std::uint64_t t, const ArrayInputs& in, const std::vector<PeView>& pes) override;
  // The clock and the cycle counter run on to the end of the run; the array holds its state.
  void end(std::uint64_t cycles) override;

 private:
  struct PeSignals {
    std::size_t a_valid, a, w, psum_valid, psum;
  };
  VcdWriter vcd_;
  std::uint64_t period_ps_;
  std::uint32_t operand_bits_;
  std::size_t clk_ = 0, cycle_ = 0, in_valid_ = 0, in_tag_ = 0, wl_valid_ = 0, cap_ = 0, shift_ = 0;
  std::vector<PeSignals> pes_;
  std::uint64_t next_ = 0;  // the cycle after the last one written
  bool begun_ = false;
};

}  // namespace tpusim::models
