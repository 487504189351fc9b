#include "models/mxu/systolic_array.h"

#include <cassert>

namespace tpusim::models {
namespace {

// int32 accumulation wraps, as the RTL's 32-bit adders do; so does the product (in unsigned
// arithmetic: a signed int32 product of wide operands would overflow, which C++ leaves undefined).
std::int32_t mac(std::int32_t acc, std::int32_t a, std::int32_t w) {
  return static_cast<std::int32_t>(static_cast<std::uint32_t>(acc) +
                                   static_cast<std::uint32_t>(a) * static_cast<std::uint32_t>(w));
}

std::int32_t at(const std::vector<std::int32_t>& v, std::uint32_t i) {
  return v.empty() ? 0 : v[i];
}

}  // namespace

SystolicArray::SystolicArray(ArrayKind kind, std::uint32_t rows, std::uint32_t cols)
    : kind_(kind),
      rows_(rows),
      cols_(cols),
      pe_(std::size_t{rows} * cols),
      next_(pe_),
      in_skew_(std::size_t{rows} * (rows - 1) / 2),
      w_skew_(std::size_t{cols} * (cols - 1) / 2),
      out_(cols, 0) {}

SystolicArray::Lane SystolicArray::skew(std::vector<Lane>& lines, std::uint32_t i,
                                        const Lane& item) {
  if (i == 0) return item;
  Lane* line = &lines[std::size_t{i} * (i - 1) / 2];
  const Lane leaving = line[i - 1];
  for (std::uint32_t d = i - 1; d > 0; --d) line[d] = line[d - 1];
  line[0] = item;
  return leaving;
}

bool SystolicArray::out_valid(std::uint32_t c) const {
  if (kind_ == ArrayKind::kOutput) return out_valid_;
  return pe_[std::size_t{rows_ - 1} * cols_ + c].ps_valid;
}

std::int32_t SystolicArray::out(std::uint32_t c) const {
  if (kind_ == ArrayKind::kOutput) return out_[c];
  return pe_[std::size_t{rows_ - 1} * cols_ + c].ps;
}

void SystolicArray::step(const ArrayInputs& in, std::vector<PeView>* view) {
  assert(in.in.empty() || in.in.size() == rows_);
  if (view) view->assign(pe_.size(), PeView{});
  if (kind_ == ArrayKind::kStationary)
    step_stationary(in, view);
  else
    step_output(in, view);
  pe_.swap(next_);
}

void SystolicArray::step_stationary(const ArrayInputs& in, std::vector<PeView>* view) {
  const std::uint32_t R = rows_, C = cols_;
  // The skewed edges this cycle: what enters column 0 of each row and row 0 of each column.
  std::vector<Lane> left(R), top(C);
  for (std::uint32_t r = 0; r < R; ++r)
    left[r] = skew(in_skew_, r, Lane{in.in_valid, in.in_tag, 0, at(in.in, r)});
  for (std::uint32_t c = 0; c < C; ++c)
    top[c] = skew(w_skew_, c, Lane{in.wl_valid, false, in.wl_row, at(in.wl, c)});

  for (std::uint32_t r = 0; r < R; ++r) {
    for (std::uint32_t c = 0; c < C; ++c) {
      const std::size_t i = std::size_t{r} * C + c;
      const Pe& p = pe_[i];
      Pe& n = next_[i];
      // Combinational inputs: from the left and upper neighbours' registers, or the edge.
      const Pe* west = c > 0 ? &pe_[i - 1] : nullptr;
      const Pe* north = r > 0 ? &pe_[i - C] : nullptr;
      const bool a_valid = west ? west->a_valid : left[r].valid;
      const bool a_swap = west ? west->a_tag : left[r].tag;
      const std::int32_t a = west ? west->a : left[r].value;
      const std::int32_t ps_in = north ? north->ps : 0;
      const bool wl_valid = north ? north->wl_valid : top[c].valid;
      const std::uint32_t wl_row = north ? north->wl_row : top[c].row;
      const std::int32_t wl = north ? north->wl : top[c].value;

      const bool use_sel = (a_valid && a_swap) ? !p.sel : p.sel;
      const std::int32_t w = p.plane[use_sel];
      n.a_valid = a_valid;
      n.a_tag = a_swap;
      n.a = a;
      n.ps_valid = a_valid;
      n.ps = mac(ps_in, a, w);
      n.wl_valid = wl_valid;
      n.wl_row = wl_row;
      n.wl = wl;
      n.sel = use_sel;
      n.plane[0] = p.plane[0];
      n.plane[1] = p.plane[1];
      if (wl_valid && wl_row == r) n.plane[!use_sel] = wl;
      latches_.a += n.a != 0;
      latches_.w += n.wl != 0;
      latches_.sums += n.ps != 0;
      if (view) (*view)[i] = PeView{a_valid, a, w, n.ps_valid, n.ps};
    }
  }
}

void SystolicArray::step_output(const ArrayInputs& in, std::vector<PeView>* view) {
  const std::uint32_t R = rows_, C = cols_;
  std::vector<Lane> left(R), top(C);
  for (std::uint32_t r = 0; r < R; ++r)
    left[r] = skew(in_skew_, r, Lane{in.in_valid, in.in_tag, 0, at(in.in, r)});
  for (std::uint32_t c = 0; c < C; ++c)
    top[c] = skew(w_skew_, c, Lane{true, false, 0, at(in.w, c)});

  const bool moving = in.cap || in.shift;
  for (std::uint32_t r = 0; r < R; ++r) {
    for (std::uint32_t c = 0; c < C; ++c) {
      const std::size_t i = std::size_t{r} * C + c;
      const Pe& p = pe_[i];
      Pe& n = next_[i];
      const Pe* west = c > 0 ? &pe_[i - 1] : nullptr;
      const Pe* north = r > 0 ? &pe_[i - C] : nullptr;
      const bool a_valid = west ? west->a_valid : left[r].valid;
      const bool first = west ? west->a_tag : left[r].tag;
      const std::int32_t a = west ? west->a : left[r].value;
      const std::int32_t b = north ? north->b : top[c].value;
      // The PE below hands up its sum on capture, its result register while shifting.
      std::int32_t up_in = 0;
      if (r + 1 < R) up_in = in.cap ? pe_[i + C].ps : pe_[i + C].res;

      n.a_valid = a_valid;
      n.a_tag = first;
      n.a = a;
      n.b = b;
      n.ps_valid = a_valid;
      n.ps = a_valid ? mac(first ? 0 : p.ps, a, b) : p.ps;
      n.res = moving ? up_in : p.res;
      latches_.a += n.a != 0;
      latches_.w += n.b != 0;
      latches_.sums += (a_valid && n.ps != 0) + (moving && up_in != 0);
      if (view) (*view)[i] = PeView{a_valid, a, b, n.ps_valid, n.ps};
    }
  }
  out_valid_ = moving;
  for (std::uint32_t c = 0; c < C; ++c) {
    out_[c] = in.cap ? pe_[c].ps : pe_[c].res;
    latches_.sums += moving && out_[c] != 0;
  }
}

}  // namespace tpusim::models
