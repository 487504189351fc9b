#pragma once
// Units live in types so that a size cannot be passed where a cycle count is expected.
// Quantities are thin wrappers: no conversions happen implicitly, and the raw value is reached
// only through value(), whose call site then names the unit it assumes.

#include <cmath>
#include <cstdint>
#include <functional>

namespace tpusim {

template <typename Tag, typename Rep>
class Quantity {
 public:
  using rep = Rep;
  constexpr Quantity() = default;
  constexpr explicit Quantity(Rep value) : value_(value) {}
  constexpr Rep value() const { return value_; }

  constexpr Quantity& operator+=(Quantity o) {
    value_ += o.value_;
    return *this;
  }
  constexpr Quantity& operator-=(Quantity o) {
    value_ -= o.value_;
    return *this;
  }
  friend constexpr Quantity operator+(Quantity a, Quantity b) { return Quantity(a.value_ + b.value_); }
  friend constexpr Quantity operator-(Quantity a, Quantity b) { return Quantity(a.value_ - b.value_); }
  friend constexpr Quantity operator*(Quantity a, Rep k) { return Quantity(a.value_ * k); }
  friend constexpr Quantity operator*(Rep k, Quantity a) { return Quantity(a.value_ * k); }
  friend constexpr bool operator==(Quantity a, Quantity b) { return a.value_ == b.value_; }
  friend constexpr bool operator!=(Quantity a, Quantity b) { return a.value_ != b.value_; }
  friend constexpr bool operator<(Quantity a, Quantity b) { return a.value_ < b.value_; }
  friend constexpr bool operator<=(Quantity a, Quantity b) { return a.value_ <= b.value_; }
  friend constexpr bool operator>(Quantity a, Quantity b) { return a.value_ > b.value_; }
  friend constexpr bool operator>=(Quantity a, Quantity b) { return a.value_ >= b.value_; }

 private:
  Rep value_{};
};

struct BytesTag {};
struct CyclesTag {};
struct HertzTag {};
struct SecondsTag {};
struct BytesPerSecondTag {};
struct PicojoulesTag {};
struct WattsTag {};

using Bytes = Quantity<BytesTag, std::uint64_t>;
using Cycles = Quantity<CyclesTag, std::uint64_t>;
using Hertz = Quantity<HertzTag, double>;
using Seconds = Quantity<SecondsTag, double>;
using BytesPerSecond = Quantity<BytesPerSecondTag, double>;
using Picojoules = Quantity<PicojoulesTag, double>;
using Watts = Quantity<WattsTag, double>;

// Whole cycles of `clock` needed to cover `t`; a partial cycle costs a whole one, as in hardware.
inline Cycles cycles_covering(Seconds t, Hertz clock) {
  // The epsilon absorbs binary rounding in decimal inputs (e.g. 14 ns at 1 GHz is 14, not 15).
  return Cycles(static_cast<std::uint64_t>(std::ceil(t.value() * clock.value() - 1e-9)));
}

// A duration as the config wrote it: absolute time or cycles of the clock of the unit it belongs to.
// Which clock is meant is decided by the owner (core clock for core units, tCK for DRAM timing).
class Duration {
 public:
  static Duration of_cycles(std::uint64_t n) { return Duration(true, static_cast<double>(n), 0); }
  static Duration of_seconds(double s) { return Duration(false, 0, s); }
  Duration() = default;

  bool in_cycles() const { return in_cycles_; }
  Cycles cycles(Hertz clock) const {
    return in_cycles_ ? Cycles(static_cast<std::uint64_t>(cycles_))
                      : cycles_covering(Seconds(seconds_), clock);
  }
  Seconds seconds(Hertz clock) const {
    return in_cycles_ ? Seconds(cycles_ / clock.value()) : Seconds(seconds_);
  }
  friend bool operator==(const Duration& a, const Duration& b) {
    return a.in_cycles_ == b.in_cycles_ && a.cycles_ == b.cycles_ && a.seconds_ == b.seconds_;
  }

 private:
  Duration(bool in_cycles, double cycles, double seconds)
      : in_cycles_(in_cycles), cycles_(cycles), seconds_(seconds) {}
  bool in_cycles_ = true;
  double cycles_ = 0;
  double seconds_ = 0;
};

// A bandwidth as the config wrote it: bytes per second, or bytes per cycle of the owner's clock.
class Bandwidth {
 public:
  static Bandwidth of_bytes_per_second(double v) { return Bandwidth(false, v); }
  static Bandwidth of_bytes_per_cycle(double v) { return Bandwidth(true, v); }
  Bandwidth() = default;

  bool per_cycle() const { return per_cycle_; }
  BytesPerSecond bytes_per_second(Hertz clock) const {
    return BytesPerSecond(per_cycle_ ? value_ * clock.value() : value_);
  }
  double bytes_per_cycle(Hertz clock) const {
    return per_cycle_ ? value_ : value_ / clock.value();
  }
  friend bool operator==(const Bandwidth& a, const Bandwidth& b) {
    return a.per_cycle_ == b.per_cycle_ && a.value_ == b.value_;
  }

 private:
  Bandwidth(bool per_cycle, double v) : per_cycle_(per_cycle), value_(v) {}
  bool per_cycle_ = false;
  double value_ = 0;
};

inline constexpr std::uint64_t kKiB = 1024;
inline constexpr std::uint64_t kMiB = 1024 * kKiB;
inline constexpr std::uint64_t kGiB = 1024 * kMiB;

}  // namespace tpusim
