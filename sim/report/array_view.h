#pragma once
// The teaching view of the cycle-level MXU (`--show`): every cycle of core 0's first array as a
// grid of PEs (which input and weight each multiplies, the sum it latches), with the
// instruction events (load, first row in, each output row ready), as text or as a
// self-contained HTML page that steps through the cycles.

#include <cstdint>
#include <string>
#include <vector>

#include "models/mxu/mxu_cycle.h"

namespace tpusim::sim {

class ArrayRecording : public models::ArrayObserver {
 public:
  // One cycle, or a span of idle cycles t..last alike in every PE: a run that waits long on
  // memory keeps one frame for the wait, not one per cycle.
  struct Frame {
    std::uint64_t t = 0;
    std::uint64_t last = 0;
    models::ArrayInputs in;
    std::vector<models::PeView> pes;
    bool active() const;  // anything enters the edges or any PE works
  };
  struct Event {
    std::uint64_t cycle = 0;
    std::string text;
  };

  void begin(Dataflow dataflow, std::uint32_t rows, std::uint32_t cols) override;
  void cycle(std::uint64_t t, const models::ArrayInputs& in,
             const std::vector<models::PeView>& pes) override;
  void load(const isa::MxuLoadWeights& lw, const models::MxuLoadTiming& t) override;
  void matmul(const isa::MxuMatmul& mm, const models::CycleMatmulResult& r) override;
  void end(std::uint64_t cycles) override { end_ = cycles; }

  Dataflow dataflow() const { return dataflow_; }
  // The run's length in cycles (0 before end()): the array is idle after its last frame.
  std::uint64_t end_cycle() const { return end_; }
  std::uint32_t rows() const { return rows_; }
  std::uint32_t cols() const { return cols_; }
  const std::vector<Frame>& frames() const { return frames_; }
  // Sorted by cycle, in the order they happened within a cycle.
  std::vector<Event> events() const;

 private:
  Dataflow dataflow_ = Dataflow::kWeightStationary;
  std::uint32_t rows_ = 0, cols_ = 0;
  std::vector<Frame> frames_;
  std::vector<Event> events_;
  std::uint32_t loads_ = 0, matmuls_ = 0;  // numbered from 1 in event texts
  std::uint64_t end_ = 0;
};

// Passes every call on to each observer (--vcd and --show together).
class ObserverFanout : public models::ArrayObserver {
 public:
  void add(models::ArrayObserver* o) { observers_.push_back(o); }
  bool empty() const { return observers_.empty(); }
  void begin(Dataflow d, std::uint32_t r, std::uint32_t c) override;
  void cycle(std::uint64_t t, const models::ArrayInputs& in,
             const std::vector<models::PeView>& pes) override;
  void load(const isa::MxuLoadWeights& lw, const models::MxuLoadTiming& t) override;
  void matmul(const isa::MxuMatmul& mm, const models::CycleMatmulResult& r) override;
  void end(std::uint64_t cycles) override;

 private:
  std::vector<models::ArrayObserver*> observers_;
};

// The legend of a cell, by dataflow: what a busy PE's a and w are (the operand it holds stays
// in w: W[r][c] under ws, X[c][r] under is), and what an idle PE shows.
struct CellLegend {
  const char* product;  // completes "a*w=s: it multiplies ..."
  const char* symbol;   // an idle cell: "(w)" or "[s]"
  const char* idle;     // what that means
};
CellLegend cell_legend(Dataflow d);

// `unit` names the watched array as the report does ("chip.core0.mxu0").
std::string render_show_text(const ArrayRecording& rec, const std::string& unit);
std::string render_show_html(const ArrayRecording& rec, const std::string& title);

}  // namespace tpusim::sim
