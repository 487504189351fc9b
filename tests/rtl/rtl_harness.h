#pragma once
// Drives a verilated array (models/rtl/) with the cycle-level model's stimulus, one clock per
// call, and reads its ports back in the model's terms.
//
// Cycle convention: cycle(t, in) applies the edge inputs of cycle t, settles the logic and reads
// what each PE multiplies in cycle t (pe_a, pe_w); then it raises the clock, the edge that ends
// cycle t, and reads the registers latched by it (pe_ps, out_*), which are visible in cycle
// t + 1. SystolicArray::step() reports the same two things for cycle t.

#include <cstdint>
#include <type_traits>
#include <vector>

#include <verilated.h>

#include "models/mxu/systolic_array.h"

namespace tpusim::test {

// Bits [lsb, lsb + width) of a port, for ports up to 64 bits (integers) or wider (VlWide).
template <class T>
std::uint64_t get_bits(const T& port, std::uint32_t lsb, std::uint32_t width) {
  if constexpr (std::is_integral_v<T>) {
    const std::uint64_t v = static_cast<std::uint64_t>(port) >> lsb;
    return width >= 64 ? v : v & ((std::uint64_t{1} << width) - 1);
  } else {
    std::uint64_t v = 0;
    for (std::uint32_t b = 0; b < width; ++b)
      v |= std::uint64_t{(port[(lsb + b) / 32] >> ((lsb + b) % 32)) & 1u} << b;
    return v;
  }
}

template <class T>
void set_bits(T& port, std::uint32_t lsb, std::uint32_t width, std::uint64_t value) {
  if constexpr (std::is_integral_v<T>) {
    const std::uint64_t mask = (width >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << width) - 1)
                               << lsb;
    port = static_cast<T>((static_cast<std::uint64_t>(port) & ~mask) | ((value << lsb) & mask));
  } else {
    for (std::uint32_t b = 0; b < width; ++b) {
      const std::uint32_t bit = lsb + b, word = bit / 32, shift = bit % 32;
      port[word] =
          (port[word] & ~(1u << shift)) | (static_cast<std::uint32_t>((value >> b) & 1) << shift);
    }
  }
}

inline std::int32_t sign_extend(std::uint64_t v, std::uint32_t width) {
  const std::uint64_t sign = std::uint64_t{1} << (width - 1);
  return static_cast<std::int32_t>(static_cast<std::int64_t>((v ^ sign) - sign));
}

inline std::int32_t value_at(const std::vector<std::int32_t>& v, std::size_t i) {
  return v.empty() ? 0 : v[i];
}

// V is a verilated array_stationary (kStationary) or array_os.
template <class V, bool kStationary>
class RtlArray {
 public:
  RtlArray(std::uint32_t rows, std::uint32_t cols) : rows_(rows), cols_(cols), top_(&context_) {
    top_.clk = 0;
    top_.rst = 1;
    for (int i = 0; i < 2; ++i) tick();
    top_.rst = 0;
    top_.eval();
  }
  ~RtlArray() { top_.final(); }

  // One cycle. `view` (optional) gets the pe_* ports; `out` the outputs latched at its end.
  void cycle(const models::ArrayInputs& in, std::vector<models::PeView>* view,
             std::vector<std::int32_t>* out, std::vector<bool>* out_valid) {
    drive(in);
    top_.eval();
    if (view) {
      view->assign(std::size_t{rows_} * cols_, models::PeView{});
      for (std::uint32_t i = 0; i < rows_ * cols_; ++i) {
        (*view)[i].a_valid = get_bits(top_.pe_a_valid, i, 1);
        (*view)[i].a = sign_extend(get_bits(top_.pe_a, i * 8, 8), 8);
        (*view)[i].w = sign_extend(get_bits(top_.pe_w, i * 8, 8), 8);
      }
    }
    tick_high();
    if (view)
      for (std::uint32_t i = 0; i < rows_ * cols_; ++i) {
        (*view)[i].ps_valid = get_bits(top_.pe_ps_valid, i, 1);
        (*view)[i].ps = sign_extend(get_bits(top_.pe_ps, i * 32, 32), 32);
      }
    if (out) {
      out->assign(cols_, 0);
      out_valid->assign(cols_, false);
      for (std::uint32_t c = 0; c < cols_; ++c) {
        (*out)[c] = sign_extend(get_bits(top_.out_data, c * 32, 32), 32);
        (*out_valid)[c] = get_bits(top_.out_valid, kStationary ? c : 0, 1);
      }
    }
    tick_low();
  }

 private:
  void drive(const models::ArrayInputs& in) {
    top_.in_valid = in.in_valid;
    for (std::uint32_t r = 0; r < rows_; ++r)
      set_bits(top_.in_data, r * 8, 8, static_cast<std::uint32_t>(value_at(in.in, r)));
    if constexpr (kStationary) {
      top_.in_swap = in.in_tag;
      top_.wl_valid = in.wl_valid;
      top_.wl_row = in.wl_row;
      for (std::uint32_t c = 0; c < cols_; ++c)
        set_bits(top_.wl_data, c * 8, 8, static_cast<std::uint32_t>(value_at(in.wl, c)));
    } else {
      top_.in_first = in.in_tag;
      top_.cap = in.cap;
      top_.shift = in.shift;
      for (std::uint32_t c = 0; c < cols_; ++c)
        set_bits(top_.w_data, c * 8, 8, static_cast<std::uint32_t>(value_at(in.w, c)));
    }
  }
  void tick_high() {
    top_.clk = 1;
    top_.eval();
  }
  void tick_low() {
    top_.clk = 0;
    top_.eval();
  }
  void tick() {
    tick_high();
    tick_low();
  }

  std::uint32_t rows_, cols_;
  VerilatedContext context_;
  V top_;
};

}  // namespace tpusim::test
