#include "sim/report/array_view.h"

#include <algorithm>
#include <sstream>

namespace tpusim::sim {
namespace {

std::string dims(std::uint32_t m, std::uint32_t k, std::uint32_t n) {
  return "m=" + std::to_string(m) + " k=" + std::to_string(k) + " n=" + std::to_string(n);
}

// One PE in one cycle. An idle stationary PE shows the operand it holds, in parentheses (the
// sum it passes on means nothing then); an idle output-stationary PE shows its accumulator in
// brackets.
std::string cell(const models::PeView& p, bool keeps_sum) {
  if (p.a_valid)
    return std::to_string(p.a) + "*" + std::to_string(p.w) + "=" + std::to_string(p.ps);
  if (keeps_sum) return "[" + std::to_string(p.ps) + "]";
  return "(" + std::to_string(p.w) + ")";
}

std::string edge(const ArrayRecording& rec, const models::ArrayInputs& in) {
  std::vector<std::string> parts;
  const bool os = rec.dataflow() == Dataflow::kOutputStationary;
  const bool is = rec.dataflow() == Dataflow::kInputStationary;
  if (in.in_valid) {
    std::string what = os   ? "step k of X and W enters"
                       : is ? "a W column enters"
                            : "an X row enters";
    if (in.in_tag)
      what += os ? " (k = 0: sums restart)" : " (first of its tile: PEs switch planes)";
    parts.push_back(what);
  }
  if (in.wl_valid)
    parts.push_back(std::string(is ? "input tile" : "weight") + " row " +
                    std::to_string(in.wl_row) + " enters the load chain");
  if (in.cap) parts.push_back("capture: sums move to the result registers, row 0 leaves");
  if (in.shift) parts.push_back("shift: the next result row leaves");
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : "; ") + p;
  return out;
}

const char* flow_sentence(Dataflow d) {
  switch (d) {
    case Dataflow::kWeightStationary:
      return "ws: PE(r,c) holds W[r][c]; X row i enters row r at cycle start + i + r and moves "
             "right; partial sums move down; Y[i][c] leaves the bottom of column c.";
    case Dataflow::kInputStationary:
      return "is: PE(r,c) holds X[c][r]; W column j enters row r at stream start + j + r and "
             "moves right; partial sums move down; column c produces Y row c.";
    case Dataflow::kOutputStationary:
      return "os: PE(r,c) accumulates Y[r][c]; X[r][k] moves right, W[k][c] moves down, both "
             "skewed; finished rows shift up and out of the top edge.";
  }
  return "";
}

}  // namespace

void ArrayRecording::begin(Dataflow dataflow, std::uint32_t rows, std::uint32_t cols) {
  dataflow_ = dataflow;
  rows_ = rows;
  cols_ = cols;
}

void ArrayRecording::cycle(std::uint64_t t, const models::ArrayInputs& in,
                           const std::vector<models::PeView>& pes) {
  Frame f{t, t, in, pes};
  if (!frames_.empty() && !f.active()) {
    Frame& prev = frames_.back();
    const auto same = [](const models::PeView& a, const models::PeView& b) {
      return a.a == b.a && a.w == b.w && a.ps == b.ps;  // neither works: valid bits are clear
    };
    if (!prev.active() && prev.last + 1 == t &&
        std::equal(pes.begin(), pes.end(), prev.pes.begin(), prev.pes.end(), same)) {
      prev.last = t;
      return;
    }
  }
  frames_.push_back(std::move(f));
}

void ArrayRecording::load(const isa::MxuLoadWeights& lw, const models::MxuLoadTiming& t) {
  // Numbered, so that the events of two instructions of the same shape can be told apart.
  const std::string what = "mxu.lw #" + std::to_string(++loads_) + " k=" + std::to_string(lw.k) +
                           " n=" + std::to_string(lw.n);
  events_.push_back(Event{t.start, what + ": load starts"});
  events_.push_back(Event{t.end, what + ": weights ready"});
}

void ArrayRecording::matmul(const isa::MxuMatmul& mm, const models::CycleMatmulResult& r) {
  const std::string what = "mxu.mm #" + std::to_string(++matmuls_) + " " + dims(mm.m, mm.k, mm.n);
  events_.push_back(Event{r.timing.start, what + ": starts"});
  events_.push_back(Event{r.timing.input_end, what + ": array takes the next instruction's input"});
  for (std::size_t i = 0; i < r.row_ready.size(); ++i)
    events_.push_back(Event{r.row_ready[i], what + ": Y row " + std::to_string(i) + " ready"});
  events_.push_back(Event{r.timing.end, what + ": done"});
}

bool ArrayRecording::Frame::active() const {
  if (in.in_valid || in.wl_valid || in.cap || in.shift) return true;
  for (const auto& p : pes)
    if (p.a_valid || p.ps_valid) return true;
  return false;
}

std::vector<ArrayRecording::Event> ArrayRecording::events() const {
  std::vector<Event> e = events_;
  std::stable_sort(e.begin(), e.end(),
                   [](const Event& a, const Event& b) { return a.cycle < b.cycle; });
  return e;
}

void ObserverFanout::begin(Dataflow d, std::uint32_t r, std::uint32_t c) {
  for (auto* o : observers_) o->begin(d, r, c);
}
void ObserverFanout::cycle(std::uint64_t t, const models::ArrayInputs& in,
                           const std::vector<models::PeView>& pes) {
  for (auto* o : observers_) o->cycle(t, in, pes);
}
void ObserverFanout::load(const isa::MxuLoadWeights& lw, const models::MxuLoadTiming& t) {
  for (auto* o : observers_) o->load(lw, t);
}
void ObserverFanout::matmul(const isa::MxuMatmul& mm, const models::CycleMatmulResult& r) {
  for (auto* o : observers_) o->matmul(mm, r);
}
void ObserverFanout::end(std::uint64_t cycles) {
  for (auto* o : observers_) o->end(cycles);
}

CellLegend cell_legend(Dataflow d) {
  switch (d) {
    case Dataflow::kWeightStationary:
      return {"input a (an element of X) by its weight w = W[r][c]", "(w)",
              "idle, holding its weight W[r][c] in its active plane"};
    case Dataflow::kInputStationary:
      return {"weight a (an element of W) by its input w = X[c][r]", "(w)",
              "idle, holding its input X[c][r] in its active plane"};
    case Dataflow::kOutputStationary:
      return {"input a = X[r][k] by weight w = W[k][c]", "[s]", "idle, holding its accumulator s"};
  }
  return {"", "", ""};
}

std::string render_show_text(const ArrayRecording& rec, const std::string& unit) {
  const bool keeps = rec.dataflow() == Dataflow::kOutputStationary;
  const CellLegend legend = cell_legend(rec.dataflow());
  std::size_t width = 3;
  for (const auto& f : rec.frames())
    for (const auto& p : f.pes) width = std::max(width, cell(p, keeps).size());
  width += 2;
  const auto pad = [&](const std::string& s) {
    return std::string(width > s.size() ? width - s.size() : 0, ' ') + s;
  };

  std::ostringstream o;
  o << "MXU " << rec.rows() << "x" << rec.cols() << " " << dataflow_name(rec.dataflow())
    << ", cycle by cycle (" << unit << ")\n"
    << "  " << flow_sentence(rec.dataflow()) << "\n"
    << "legend: each cell is PE(r,c) during that cycle\n"
    << "  a*w=s  it multiplies " << legend.product
    << "; s is the sum it latches at the end of the cycle"
    << (keeps ? " (its accumulator)" : " (passed down)") << "\n"
    << "  " << legend.symbol << "    " << legend.idle << "\n"
    << "  edge   what enters the array's edges (lane i reaches the array i cycles later)\n"
    << "  ready  a cycle number t means: usable from cycle t on (end-of-cycle convention)\n";

  const std::vector<ArrayRecording::Event> events = rec.events();
  std::size_t next_event = 0;
  const auto print_events = [&](std::uint64_t upto) {  // events at cycles <= upto
    for (; next_event < events.size() && events[next_event].cycle <= upto; ++next_event)
      o << "  cycle " << events[next_event].cycle << ": " << events[next_event].text << "\n";
  };
  const auto& frames = rec.frames();
  // The idle span from `first` to `last`, then what happened during it, in time order.
  const auto idle = [&](std::uint64_t first, std::uint64_t last) {
    if (first > 0) print_events(first - 1);
    o << "cycles " << first << ".." << last << ": array idle\n";
    print_events(last);
  };
  std::size_t i = 0;
  while (i < frames.size()) {
    if (!frames[i].active()) {
      std::size_t j = i;
      while (j + 1 < frames.size() && !frames[j + 1].active()) ++j;
      // Idle to the end of the run when nothing follows.
      const std::uint64_t last = j + 1 == frames.size() && rec.end_cycle() > frames[j].last + 1
                                     ? rec.end_cycle() - 1
                                     : frames[j].last;
      idle(frames[i].t, last);
      i = j + 1;
      continue;
    }
    const auto& f = frames[i];
    if (f.t > 0) print_events(f.t - 1);  // any from cycles the array was not stepped
    o << "\ncycle " << f.t << "\n";
    const std::string e = edge(rec, f.in);
    if (!e.empty()) o << "  edge: " << e << "\n";
    o << "     ";
    for (std::uint32_t c = 0; c < rec.cols(); ++c) o << pad("c" + std::to_string(c));
    o << "\n";
    for (std::uint32_t r = 0; r < rec.rows(); ++r) {
      o << "  r" << r << (r < 10 ? " " : "");
      for (std::uint32_t c = 0; c < rec.cols(); ++c)
        o << pad(cell(f.pes[std::size_t{r} * rec.cols() + c], keeps));
      o << "\n";
    }
    print_events(f.t);
    ++i;
  }
  const std::uint64_t after = frames.empty() ? 0 : frames.back().last + 1;
  if ((frames.empty() || frames.back().active()) && rec.end_cycle() > after)
    idle(after, rec.end_cycle() - 1);
  print_events(~std::uint64_t{0});
  return o.str();
}

}  // namespace tpusim::sim
