#pragma once
// The cycle-level MXU (`mxu.model: cycle`): a controller that feeds a SystolicArray cycle by
// cycle, as a hardware sequencer would, and reports the same timings as MxuTiming (the fast
// model) by observing when results actually leave the array.
//
// What is simulated and what is scheduled:
//   - The controller decides when each instruction's rows, weight rows, tiles and result
//     shift-outs enter the array, from the resource rules of models/mxu/README.md sections 1-5
//     (input port free, staged tile ready, shadow plane free, shift path free, array drained).
//   - The array computes every PE every cycle. When a result row is ready comes from the
//     simulation: the cycle its last element leaves the array, plus the write-back latency.
//     `end` is the latest of those; a wrong skew, drain or shift-out would show in it.
//   - Staging W for `is`/`os` (mxu.lw) writes a buffer beside the array, not the PEs: it takes
//     K cycles of the load path and holds the values the matmul then feeds.
//
// Results are known when the instruction is issued: after scheduling it, the controller runs a
// copy of the array ahead until the instruction's last result has left. The real array only
// advances ("commits") to a cycle once no later instruction can still feed it earlier; every
// instruction starts no earlier than the one before it, so that cycle is the new start.
//
// Limits (checked by the config, see sim/config/chip_validate.cpp): integer operands at rate 1 and
// a vector-memory port that delivers a whole array row per cycle, so every stream runs at one
// row per cycle; arrays up to kMaxCycleMxuPes PEs (sim/base/spec/core_spec.h).

#include <cstdint>
#include <deque>
#include <map>
#include <vector>

#include "isa/program.h"
#include "models/mxu/mxu_timing.h"
#include "models/mxu/systolic_array.h"
#include "sim/base/spec/core_spec.h"

namespace tpusim::models {

struct CycleMatmulResult {
  MxuMatmulTiming timing;
  std::vector<std::int32_t> y;           // M x N, row-major
  std::vector<std::uint64_t> row_ready;  // cycle each output row is in accumulator memory
};

// Receives every committed cycle: the edge inputs (the stimulus the RTL replays) and what each
// PE did. `begin` is called once, before the first cycle. The instruction events arrive when an
// instruction is scheduled, before the cycles they describe.
class ArrayObserver {
 public:
  virtual ~ArrayObserver() = default;
  virtual void begin(Dataflow dataflow, std::uint32_t rows, std::uint32_t cols) = 0;
  virtual void cycle(std::uint64_t t, const ArrayInputs& in, const std::vector<PeView>& pes) = 0;
  virtual void load(const isa::MxuLoadWeights&, const MxuLoadTiming&) {}
  virtual void matmul(const isa::MxuMatmul&, const CycleMatmulResult&) {}
  // The run ended after `cycles` core cycles: a watcher shows the array idle until then.
  virtual void end(std::uint64_t /*cycles*/) {}
};

class CycleMxu {
 public:
  // `port_bytes`: vector-memory bytes per cycle that stage a weight row (0: unbounded). The
  // config keeps a whole array row within one port cycle; an is tile wider than the array
  // (its N weight columns stream) may take several.
  CycleMxu(const MxuSpec& spec, Hertz clock, std::uint64_t port_bytes = 0);

  // `w` is K x N, row-major (the values of the tile; zeros in timing-only runs).
  MxuLoadTiming load_weights(const isa::MxuLoadWeights& lw, std::uint64_t now,
                             const std::vector<std::int32_t>& w);
  // `x` is M x K, row-major.
  CycleMatmulResult matmul(const isa::MxuMatmul& mm, std::uint64_t now,
                           const std::vector<std::int32_t>& x);
  // Runs the array until everything scheduled has left it (for waveforms and the teaching view).
  void finish();

  std::uint64_t input_free_at() const { return input_free_at_; }
  // As MxuTiming's: the earliest next load and matmul start the array's state allows.
  std::uint64_t load_ready_at() const;
  std::uint64_t matmul_ready_at(bool keep) const;
  std::uint64_t drained_at() const { return drained_at_; }
  // What the array has latched so far (everything scheduled, after finish()).
  const SystolicArray::Latches& latches() const { return committed_.array.latches(); }
  void set_observer(ArrayObserver* observer);

 private:
  struct Tag {
    std::uint32_t instr = 0, fold = 0, item = 0;
  };
  // One cycle's schedule: the edge inputs and the results whose order they fix.
  struct Slot {
    ArrayInputs in;
    std::vector<Tag> enter;  // tags of results this cycle sends into the array, in leaving order
  };
  // The array plus the queues that tell which result leaves each column next.
  struct Pipeline {
    SystolicArray array;
    std::vector<std::deque<Tag>> queues;  // per column (stationary) or one (output)
    std::uint64_t cycle = 0;              // the next cycle to compute
    std::uint64_t idle = 0;               // cycles computed in a row with no scheduled input
  };
  struct Leaving {
    Tag tag;
    std::uint32_t col;  // stationary: the column; output: unused (whole row)
  };

  Slot& slot(std::uint64_t cycle) { return schedule_[cycle]; }
  const Slot empty_slot_{};
  // Computes one cycle of `p`; appends the results that became ready (at p.cycle + 1).
  void advance(Pipeline& p, std::vector<Leaving>& leaving, std::vector<PeView>* view) const;
  void commit_until(std::uint64_t cycle);
  void schedule_tile(std::uint64_t first_cycle, const std::vector<std::int32_t>& tile,
                     std::uint32_t rows, std::uint32_t cols);
  void schedule_ws(const isa::MxuMatmul& mm, const std::vector<std::int32_t>& x, bool swap,
                   MxuMatmulTiming& t);
  void schedule_is(const isa::MxuMatmul& mm, const std::vector<std::int32_t>& x,
                   MxuMatmulTiming& t);
  void schedule_os(const isa::MxuMatmul& mm, const std::vector<std::int32_t>& x,
                   MxuMatmulTiming& t);
  // Runs a copy of the array until instruction `instr` has produced `expected` results.
  void run_ahead(const isa::MxuMatmul& mm, std::uint64_t expected, CycleMatmulResult& out) const;

  const MxuSpec spec_;
  const std::uint64_t port_bytes_;
  const std::uint64_t wb_;
  // Idle cycles after which nothing is left moving in the array: every later idle cycle leaves
  // it as it is (the skew lines, R + C hops and the results' way out, with room to spare).
  const std::uint64_t settle_cycles_;
  Pipeline committed_;
  std::map<std::uint64_t, Slot> schedule_;
  ArrayObserver* observer_ = nullptr;
  std::vector<PeView> view_;
  std::uint32_t next_instr_ = 0;

  // Controller state, the same resources as MxuTiming's (models/mxu/README.md section 4).
  std::uint64_t input_free_at_ = 0;
  std::uint64_t drained_at_ = 0;
  std::uint64_t load_path_free_at_ = 0;
  std::uint64_t staged_ready_at_ = 0;
  bool staged_pending_ = false;
  std::uint64_t shadow_free_at_ = 0;
  std::uint64_t active_ready_at_ = 0;
  std::uint64_t shift_free_at_ = 0;  // os: the result shift path
  std::uint64_t last_start_ = 0;
  std::vector<std::int32_t> staged_w_, active_w_;  // is/os: the staged and the in-use W (K x N)
  std::uint32_t staged_k_ = 0, staged_n_ = 0, active_k_ = 0, active_n_ = 0;
};

}  // namespace tpusim::models
