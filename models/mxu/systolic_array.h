#pragma once
// The cycle-level systolic array: every register of the Verilog RTL (models/rtl/) has a twin
// here, and step() is one clock edge. Two array kinds, as in the RTL:
//   kStationary  PE(r,c) keeps an operand (two planes, double buffered); activations move right,
//                partial sums move down, weights reach their PE through a tagged load chain.
//                Serves `ws` (X streams past W) and `is` (W streams past X^T).
//   kOutput      PE(r,c) accumulates one output; X moves right, W moves down; finished sums
//                shift up and out through the top edge. Serves `os`.
// Edge inputs are given unskewed; the array applies the skew (lane i delayed by i cycles).
//
// Timing convention (models/mxu/README.md): step() computes cycle t. What a PE multiplies in cycle
// t is read from the registers latched at the end of cycle t - 1; what step() latches is the
// state visible in cycle t + 1, which the fast model calls "ready at t + 1".
//
// Pure C++ (no SystemC): one step() is a tight loop over the PEs, with the state double
// buffered exactly like non-blocking assignments.

#include <cstdint>
#include <vector>

namespace tpusim::models {

enum class ArrayKind : std::uint8_t { kStationary, kOutput };

// One cycle's edge inputs, as the RTL ports of the same names.
struct ArrayInputs {
  bool in_valid = false;
  bool in_tag = false;  // kStationary: `swap` (first item of a matmul); kOutput: `first` (k = 0)
  std::vector<std::int32_t> in;  // R operands; empty means zeros
  bool wl_valid = false;         // kStationary: a tagged weight row for the load chain
  std::uint32_t wl_row = 0;
  std::vector<std::int32_t> wl;  // C operands; empty means zeros
  std::vector<std::int32_t> w;   // kOutput: this step's C weights; empty means zeros
  bool cap = false;              // kOutput: capture finished sums, send row 0
  bool shift = false;            // kOutput: send the next row
};

// What one PE does in one cycle, for waveforms and the teaching view (the RTL's pe_* ports).
struct PeView {
  bool a_valid = false;
  std::int32_t a = 0;  // the activation it multiplies this cycle
  std::int32_t w = 0;  // the weight it multiplies this cycle
  bool ps_valid = false;
  std::int32_t ps = 0;  // the sum it latches at the end of the cycle
};

class SystolicArray {
 public:
  SystolicArray(ArrayKind kind, std::uint32_t rows, std::uint32_t cols);

  // Computes one cycle. `view`, when given, receives R*C entries (PE(r,c) at r*C + c).
  void step(const ArrayInputs& in, std::vector<PeView>* view = nullptr);

  std::uint32_t rows() const { return rows_; }
  std::uint32_t cols() const { return cols_; }
  ArrayKind kind() const { return kind_; }
  // Registered outputs, valid in the cycle after the step() that latched them.
  // kStationary: column c's bottom sum. kOutput: out_valid(0) and a whole row in out(0..C-1).
  bool out_valid(std::uint32_t c) const;
  std::int32_t out(std::uint32_t c) const;
  // Nonzero values latched since construction, by register: the moving operand (a), the weight
  // path (the load chain; kOutput: b) and the sums (partial sums; kOutput: accumulators as a MAC
  // writes them, and results shifting up and out). Empty lanes carry zeros, so with nonzero
  // operands these are the data's latches, which models/mxu/array_latches.h counts without
  // simulating.
  struct Latches {
    std::uint64_t a = 0, w = 0, sums = 0;
  };
  const Latches& latches() const { return latches_; }

 private:
  struct Pe {
    bool a_valid = false, a_tag = false;
    std::int32_t a = 0;
    bool ps_valid = false;
    std::int32_t ps = 0;
    bool wl_valid = false;
    std::uint32_t wl_row = 0;
    std::int32_t wl = 0;
    std::int32_t plane[2] = {0, 0};
    bool sel = false;
    std::int32_t b = 0;    // kOutput: weight passed down
    std::int32_t res = 0;  // kOutput: finished sum on its way out
  };
  // One skewed lane: `depth` registers, oldest last.
  struct Lane {
    bool valid = false, tag = false;
    std::uint32_t row = 0;
    std::int32_t value = 0;
  };

  void step_stationary(const ArrayInputs& in, std::vector<PeView>* view);
  void step_output(const ArrayInputs& in, std::vector<PeView>* view);
  // Pushes `item` into lane `i`'s delay line and returns what leaves it this cycle (the item
  // itself for lane 0). `lines` holds lane i at offset i*(i-1)/2, i registers long.
  static Lane skew(std::vector<Lane>& lines, std::uint32_t i, const Lane& item);

  ArrayKind kind_;
  std::uint32_t rows_, cols_;
  std::vector<Pe> pe_, next_;
  std::vector<Lane> in_skew_, w_skew_;
  bool out_valid_ = false;
  std::vector<std::int32_t> out_;
  Latches latches_;
};

}  // namespace tpusim::models
