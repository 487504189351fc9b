#include "models/mxu/array_vcd.h"

#include <string>

namespace tpusim::models {

ArrayVcd::ArrayVcd(std::ostream& out, std::uint64_t period_ps, std::uint32_t operand_bits)
    : vcd_(out, "1 ps"), period_ps_(period_ps), operand_bits_(operand_bits) {}

ArrayVcd::~ArrayVcd() {
  if (begun_) vcd_.close(next_ * period_ps_);
}

void ArrayVcd::begin(Dataflow, std::uint32_t rows, std::uint32_t cols) {
  vcd_.push_scope("mxu");
  clk_ = vcd_.add("clk", 1);
  cycle_ = vcd_.add("cycle", 32);
  in_valid_ = vcd_.add("in_valid", 1);
  in_tag_ = vcd_.add("in_tag", 1);
  wl_valid_ = vcd_.add("wl_valid", 1);
  cap_ = vcd_.add("cap", 1);
  shift_ = vcd_.add("shift", 1);
  for (std::uint32_t r = 0; r < rows; ++r)
    for (std::uint32_t c = 0; c < cols; ++c) {
      vcd_.push_scope("pe_" + std::to_string(r) + "_" + std::to_string(c));
      PeSignals s;
      s.a_valid = vcd_.add("a_valid", 1);
      s.a = vcd_.add("a", operand_bits_);
      s.w = vcd_.add("w", operand_bits_);
      s.psum_valid = vcd_.add("psum_valid", 1);
      s.psum = vcd_.add("psum", 32);
      pes_.push_back(s);
      vcd_.pop_scope();
    }
  vcd_.pop_scope();
  vcd_.end_definitions();
  begun_ = true;
}

void ArrayVcd::end(std::uint64_t cycles) {
  if (!begun_) return;
  for (std::uint64_t t = next_; t < cycles; ++t) {
    vcd_.time(t * period_ps_);
    vcd_.change(clk_, 1);
    vcd_.change(cycle_, t);
    vcd_.time(t * period_ps_ + period_ps_ / 2);
    vcd_.change(clk_, 0);
  }
  next_ = std::max(next_, cycles);
}

void ArrayVcd::cycle(std::uint64_t t, const ArrayInputs& in, const std::vector<PeView>& pes) {
  // Two's complement in the declared width: GTKWave shows it signed when asked to.
  const auto bits = [](std::int32_t v) {
    return static_cast<std::uint64_t>(static_cast<std::uint32_t>(v));
  };
  vcd_.time(t * period_ps_);
  vcd_.change(clk_, 1);
  vcd_.change(cycle_, t);
  vcd_.change(in_valid_, in.in_valid);
  vcd_.change(in_tag_, in.in_tag);
  vcd_.change(wl_valid_, in.wl_valid);
  vcd_.change(cap_, in.cap);
  vcd_.change(shift_, in.shift);
  for (std::size_t i = 0; i < pes_.size() && i < pes.size(); ++i) {
    vcd_.change(pes_[i].a_valid, pes[i].a_valid);
    vcd_.change(pes_[i].a, bits(pes[i].a));
    vcd_.change(pes_[i].w, bits(pes[i].w));
    vcd_.change(pes_[i].psum_valid, pes[i].ps_valid);
    vcd_.change(pes_[i].psum, bits(pes[i].ps));
  }
  vcd_.time(t * period_ps_ + period_ps_ / 2);
  vcd_.change(clk_, 0);
  next_ = t + 1;
}

}  // namespace tpusim::models
