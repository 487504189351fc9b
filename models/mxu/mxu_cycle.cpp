#include "models/mxu/mxu_cycle.h"

#include <algorithm>
#include <cassert>

namespace tpusim::models {
namespace {

ArrayKind kind_of(Dataflow d) {
  return d == Dataflow::kOutputStationary ? ArrayKind::kOutput : ArrayKind::kStationary;
}

}  // namespace

CycleMxu::CycleMxu(const MxuSpec& spec, Hertz clock, std::uint64_t port_bytes)
    : spec_(spec),
      port_bytes_(port_bytes),
      wb_(spec.writeback_latency.cycles(clock).value()),
      settle_cycles_(2 * (std::uint64_t{spec.rows} + spec.cols) + 4),
      committed_{SystolicArray(kind_of(spec.dataflow), spec.rows, spec.cols),
                 std::vector<std::deque<Tag>>(
                     kind_of(spec.dataflow) == ArrayKind::kStationary ? spec.cols : 1),
                 0, 0} {}

void CycleMxu::set_observer(ArrayObserver* observer) {
  observer_ = observer;
  if (observer_) observer_->begin(spec_.dataflow, spec_.rows, spec_.cols);
}

void CycleMxu::advance(Pipeline& p, std::vector<Leaving>& leaving,
                       std::vector<PeView>* view) const {
  const auto it = schedule_.find(p.cycle);
  const Slot& s = it == schedule_.end() ? empty_slot_ : it->second;
  p.idle = it == schedule_.end() ? p.idle + 1 : 0;
  p.array.step(s.in, view);
  // Tags enter before results are collected: no result leaves in the cycle its item enters.
  for (const Tag& tag : s.enter)
    for (auto& q : p.queues) q.push_back(tag);
  for (std::uint32_t c = 0; c < p.queues.size(); ++c) {
    if (!p.array.out_valid(c)) continue;
    assert(!p.queues[c].empty());
    leaving.push_back(Leaving{p.queues[c].front(), c});
    p.queues[c].pop_front();
  }
  ++p.cycle;
}

void CycleMxu::commit_until(std::uint64_t cycle) {
  std::vector<Leaving> leaving;
  while (committed_.cycle < cycle) {
    // A settled array stays as it is until its next input: the idle cycles are skipped, not
    // computed one by one (a run may wait seconds of simulated time for a slow memory). An
    // observer sees every cycle.
    const auto results_due = [&] {
      return std::any_of(committed_.queues.begin(), committed_.queues.end(),
                         [](const std::deque<Tag>& q) { return !q.empty(); });
    };
    if (!observer_ && committed_.idle >= settle_cycles_ && !results_due()) {
      const std::uint64_t next =
          schedule_.empty() ? cycle : std::min(cycle, schedule_.begin()->first);
      if (next > committed_.cycle) {
        committed_.cycle = next;
        continue;
      }
    }
    const std::uint64_t t = committed_.cycle;
    leaving.clear();
    advance(committed_, leaving, observer_ ? &view_ : nullptr);
    const auto it = schedule_.find(t);
    if (observer_)
      observer_->cycle(t, it == schedule_.end() ? empty_slot_.in : it->second.in, view_);
    if (it != schedule_.end()) schedule_.erase(it);
  }
}

void CycleMxu::finish() {
  const auto busy = [&] {
    if (!schedule_.empty()) return true;
    for (const auto& q : committed_.queues)
      if (!q.empty()) return true;
    return false;
  };
  while (busy()) commit_until(committed_.cycle + 1);
  // The last result left in the cycle just committed; one more shows the array idle again.
  commit_until(committed_.cycle + 1);
}

void CycleMxu::schedule_tile(std::uint64_t first_cycle, const std::vector<std::int32_t>& tile,
                             std::uint32_t rows, std::uint32_t cols) {
  // Bottom row first: row r then needs R - 1 - r more steps down the chain, so every row of a
  // column lands in the same cycle, R cycles after the feed began (README section 4).
  const std::uint32_t R = spec_.rows, C = spec_.cols;
  for (std::uint32_t s = 0; s < R; ++s) {
    const std::uint32_t row = R - 1 - s;
    ArrayInputs& in = slot(first_cycle + s).in;
    assert(!in.wl_valid);  // the controller never overlaps two feeds of the load chain
    in.wl_valid = true;
    in.wl_row = row;
    in.wl.assign(C, 0);
    if (row < rows)
      for (std::uint32_t c = 0; c < cols; ++c) in.wl[c] = tile[std::size_t{row} * cols + c];
  }
}

std::uint64_t CycleMxu::load_ready_at() const {
  if (spec_.weight_double_buffer) return std::max(load_path_free_at_, shadow_free_at_);
  // One plane: in ws the array itself (wait until drained); else the staging buffer.
  const bool ws = spec_.dataflow == Dataflow::kWeightStationary;
  return std::max(load_path_free_at_, ws ? drained_at_ : input_free_at_);
}

std::uint64_t CycleMxu::matmul_ready_at(bool keep) const {
  return std::max(input_free_at_, staged_pending_ && !keep ? staged_ready_at_ : active_ready_at_);
}

MxuLoadTiming CycleMxu::load_weights(const isa::MxuLoadWeights& lw, std::uint64_t now,
                                     const std::vector<std::int32_t>& w) {
  const bool ws = spec_.dataflow == Dataflow::kWeightStationary;
  MxuLoadTiming t;
  t.start = std::max(now, load_ready_at());
  // ws shifts the tile down all R rows; is/os write K rows of the staging buffer, each as many
  // port cycles as its N weights need (as the fast model's shift_cycles).
  t.end = t.start +
          (ws ? spec_.rows
              : mxu_shift_cycles(lw.k, std::uint64_t{lw.n} * dtype_bytes(lw.dtype), port_bytes_));
  assert(t.start >= last_start_);
  last_start_ = t.start;
  commit_until(t.start);
  if (ws) schedule_tile(t.start, w, lw.k, lw.n);
  staged_w_ = w;
  staged_k_ = lw.k;
  staged_n_ = lw.n;
  staged_pending_ = true;
  staged_ready_at_ = t.end;
  // Until a matmul switches to this tile, another load would overwrite it.
  if (spec_.weight_double_buffer) shadow_free_at_ = ~std::uint64_t{0};
  load_path_free_at_ = t.end;
  if (observer_) observer_->load(lw, t);
  return t;
}

void CycleMxu::schedule_ws(const isa::MxuMatmul& mm, const std::vector<std::int32_t>& x, bool swap,
                           MxuMatmulTiming& t) {
  const std::uint32_t instr = next_instr_ - 1;
  for (std::uint32_t i = 0; i < mm.m; ++i) {
    Slot& s = slot(t.start + i);
    s.in.in_valid = true;
    s.in.in_tag = swap && i == 0;
    s.in.in.assign(spec_.rows, 0);
    for (std::uint32_t r = 0; r < mm.k; ++r) s.in.in[r] = x[std::size_t{i} * mm.k + r];
    s.enter.push_back(Tag{instr, 0, i});
  }
  t.stream_cycles = mm.m;
  t.input_end = t.start + mm.m;
}

void CycleMxu::schedule_is(const isa::MxuMatmul& mm, const std::vector<std::int32_t>& x,
                           MxuMatmulTiming& t) {
  const std::uint32_t instr = next_instr_ - 1;
  const std::uint32_t R = spec_.rows, C = spec_.cols;
  const std::uint32_t folds = (mm.m + C - 1) / C;
  // Fold f's tile: PE(r,c) holds X[f*C + c][r].
  const auto tile = [&](std::uint32_t f, std::uint32_t mf) {
    std::vector<std::int32_t> tl(std::size_t{mm.k} * mf);
    for (std::uint32_t r = 0; r < mm.k; ++r)
      for (std::uint32_t c = 0; c < mf; ++c)
        tl[std::size_t{r} * mf + c] = x[(std::size_t{f} * C + c) * mm.k + r];
    return tl;
  };
  const bool db = spec_.weight_double_buffer;
  std::uint64_t fold_start = t.start, tile_ready = 0;
  for (std::uint32_t f = 0; f < folds; ++f) {
    const std::uint32_t mf = std::min(C, mm.m - f * C);
    std::uint64_t stream_begin;
    if (db && f > 0) {
      stream_begin = std::max(fold_start, tile_ready);  // the tile went into the shadow plane
    } else {
      schedule_tile(fold_start, tile(f, mf), mm.k, mf);
      stream_begin = fold_start + R;
    }
    // The staged weight columns stream past the tile; column j's first element swaps planes.
    for (std::uint32_t j = 0; j < mm.n; ++j) {
      Slot& s = slot(stream_begin + j);
      s.in.in_valid = true;
      s.in.in_tag = j == 0;
      s.in.in.assign(R, 0);
      for (std::uint32_t r = 0; r < mm.k; ++r)
        s.in.in[r] = active_w_[std::size_t{r} * active_n_ + j];
      s.enter.push_back(Tag{instr, f, j});
    }
    const std::uint64_t stream_end = stream_begin + mm.n;
    t.stream_cycles += stream_end - fold_start;
    if (db) {
      // The next tile shifts into the shadow plane from the moment this one is active.
      if (f + 1 < folds) {
        const std::uint32_t next_mf = std::min(C, mm.m - (f + 1) * C);
        schedule_tile(stream_begin, tile(f + 1, next_mf), mm.k, next_mf);
        tile_ready = stream_begin + R;
      }
      fold_start = stream_end;
    } else {
      fold_start = stream_end + R + mf - 2;  // one plane: the next tile waits for the drain
    }
  }
  t.input_end = fold_start;
}

void CycleMxu::schedule_os(const isa::MxuMatmul& mm, const std::vector<std::int32_t>& x,
                           MxuMatmulTiming& t) {
  const std::uint32_t instr = next_instr_ - 1;
  const std::uint32_t R = spec_.rows, C = spec_.cols;
  const std::uint32_t folds = (mm.m + R - 1) / R;
  std::uint64_t fold_start = t.start;
  for (std::uint32_t f = 0; f < folds; ++f) {
    const std::uint32_t rf = std::min(R, mm.m - f * R);
    for (std::uint32_t k = 0; k < mm.k; ++k) {
      ArrayInputs& in = slot(fold_start + k).in;
      in.in_valid = true;
      in.in_tag = k == 0;
      in.in.assign(R, 0);
      for (std::uint32_t r = 0; r < rf; ++r) in.in[r] = x[(std::size_t{f} * R + r) * mm.k + k];
      in.w.assign(C, 0);
      for (std::uint32_t c = 0; c < mm.n; ++c) in.w[c] = active_w_[std::size_t{k} * active_n_ + c];
    }
    // The controller counts the wavefront: PE(rf-1, N-1) holds its final sum from
    // fold_start + K + rf + N - 2 on. Capturing earlier would send wrong values out.
    const std::uint64_t compute_end = fold_start + mm.k + rf + mm.n - 2;
    const std::uint64_t shift_start = std::max(compute_end, shift_free_at_);
    Slot& cap = slot(shift_start);
    cap.in.cap = true;
    for (std::uint32_t q = 0; q < rf; ++q) cap.enter.push_back(Tag{instr, f, q});
    for (std::uint32_t q = 1; q < rf; ++q) slot(shift_start + q).in.shift = true;
    shift_free_at_ = shift_start + rf;
    t.stream_cycles += mm.k + rf + mm.n - 2;
    // Double-buffered result registers: the next fold computes while this one shifts out.
    fold_start = spec_.weight_double_buffer ? shift_start : shift_start + rf;
  }
  t.input_end = fold_start;
}

CycleMatmulResult CycleMxu::matmul(const isa::MxuMatmul& mm, std::uint64_t now,
                                   const std::vector<std::int32_t>& x) {
  CycleMatmulResult out;
  MxuMatmulTiming& t = out.timing;
  t.macs = std::uint64_t{mm.m} * mm.k * mm.n;
  t.start = std::max(now, matmul_ready_at(mm.keep));
  const bool swap = staged_pending_ && !mm.keep;
  if (swap) {
    active_ready_at_ = staged_ready_at_;
    active_w_ = staged_w_;
    active_k_ = staged_k_;
    active_n_ = staged_n_;
    staged_pending_ = false;
  }
  assert(t.start >= last_start_);
  last_start_ = t.start;
  commit_until(t.start);
  ++next_instr_;
  std::uint64_t expected = 0;  // results of this instruction that will leave the array
  switch (spec_.dataflow) {
    case Dataflow::kWeightStationary:
      schedule_ws(mm, x, swap, t);
      expected = std::uint64_t{mm.m} * spec_.cols;
      break;
    case Dataflow::kInputStationary:
      schedule_is(mm, x, t);
      expected = std::uint64_t{(mm.m + spec_.cols - 1) / spec_.cols} * mm.n * spec_.cols;
      break;
    case Dataflow::kOutputStationary:
      schedule_os(mm, x, t);
      expected = mm.m;
      break;
  }
  input_free_at_ = t.input_end;
  if (!staged_pending_) shadow_free_at_ = t.start;  // a `keep` matmul leaves a staged tile alone
  run_ahead(mm, expected, out);
  t.end = *std::max_element(out.row_ready.begin(), out.row_ready.end());
  t.array_end = t.end - wb_;
  drained_at_ = std::max(drained_at_, t.end);
  if (observer_) observer_->matmul(mm, out);
  return out;
}

void CycleMxu::run_ahead(const isa::MxuMatmul& mm, std::uint64_t expected,
                         CycleMatmulResult& out) const {
  const std::uint32_t instr = next_instr_ - 1;
  const std::uint32_t R = spec_.rows, C = spec_.cols, N = mm.n;
  out.y.assign(std::size_t{mm.m} * N, 0);
  out.row_ready.assign(mm.m, 0);
  Pipeline p = committed_;
  std::vector<Leaving> leaving;
  std::uint64_t seen = 0;
  while (seen < expected) {
    // Results still to come must be in flight or scheduled; otherwise the schedule lost them.
    const bool in_flight = std::any_of(p.queues.begin(), p.queues.end(),
                                       [](const std::deque<Tag>& q) { return !q.empty(); });
    assert(in_flight || (!schedule_.empty() && schedule_.rbegin()->first >= p.cycle));
    (void)in_flight;
    leaving.clear();
    advance(p, leaving, nullptr);
    // Latched at the end of cycle p.cycle - 1: at the array's edge from p.cycle, in
    // accumulator memory wb cycles later.
    const std::uint64_t ready = p.cycle + wb_;
    for (const Leaving& l : leaving) {
      if (l.tag.instr != instr) continue;
      ++seen;
      std::uint32_t row = 0;
      switch (spec_.dataflow) {
        case Dataflow::kWeightStationary:  // item i is input row i; column c is output column c
          if (l.col >= N) continue;
          row = l.tag.item;
          out.y[std::size_t{row} * N + l.col] = p.array.out(l.col);
          break;
        case Dataflow::kInputStationary:  // item j is weight column j; column c is input row c
          row = l.tag.fold * C + l.col;
          if (l.col >= C || row >= mm.m) continue;
          out.y[std::size_t{row} * N + l.tag.item] = p.array.out(l.col);
          break;
        case Dataflow::kOutputStationary:  // a whole output row leaves at once
          row = l.tag.fold * R + l.tag.item;
          for (std::uint32_t c = 0; c < N; ++c) out.y[std::size_t{row} * N + c] = p.array.out(c);
          break;
      }
      out.row_ready[row] = std::max(out.row_ready[row], ready);
    }
  }
}

}  // namespace tpusim::models
