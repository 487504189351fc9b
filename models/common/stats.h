#pragma once
// Statistics are plain uint64_t counters in a per-unit struct, counted where the event happens
// (STYLE rule 10). Each struct lists its fields once, in
//   template <class V> void visit(V& v) { v("macs", macs, "MAC", "multiply-accumulates"); ... }
// and everything else (per-operator sums, JSON, CSV, the terminal table, energy) is written once
// against that list. Counters are kept per operator (STYLE rule 11): totals are sums over ops.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace tpusim::models {

// A read-only view of one field, for writers that do not know the struct's type.
class StatsVisitor {
 public:
  virtual ~StatsVisitor() = default;
  virtual void field(std::string_view name, std::uint64_t value, std::string_view unit,
                     std::string_view description) = 0;
};

namespace detail {
struct FieldPointers {
  std::vector<std::uint64_t*> fields;
  void operator()(const std::string&, std::uint64_t& value, const char*, const char*) {
    fields.push_back(&value);
  }
};
template <class Visitor>
struct Forward {
  Visitor& out;
  void operator()(const std::string& name, std::uint64_t& value, const char* unit,
                  const char* description) {
    out.field(name, value, unit, description);
  }
};
}  // namespace detail

// into += from, field by field.
template <class S>
void accumulate(S& into, const S& from) {
  detail::FieldPointers a, b;
  into.visit(a);
  const_cast<S&>(from).visit(b);
  for (std::size_t i = 0; i < a.fields.size(); ++i) *a.fields[i] += *b.fields[i];
}

template <class S>
void visit_readonly(const S& stats, StatsVisitor& out) {
  detail::Forward<StatsVisitor> forward{out};
  const_cast<S&>(stats).visit(forward);
}

// Counters of one unit, one struct per operator id (dense: ids are 0..n-1).
template <class S>
class PerOpStats {
 public:
  void resize(std::size_t ops) { per_op_.resize(ops); }
  S& operator[](std::uint32_t op) {
    if (op >= per_op_.size()) per_op_.resize(op + 1);
    return per_op_[op];
  }
  std::size_t ops() const { return per_op_.size(); }
  const S& of(std::uint32_t op) const {
    static const S kZero{};
    return op < per_op_.size() ? per_op_[op] : kZero;
  }
  S total() const {
    S sum{};
    for (const S& s : per_op_) accumulate(sum, s);
    return sum;
  }

 private:
  std::vector<S> per_op_;
};

// A unit's stats as the report sees them: its name and kind, and a view per operator.
struct StatsSource {
  std::string path;  // sc_object name, e.g. "chip.core0.mxu1"
  std::string kind;  // "mxu", "vpu", "dma", "sram", "memory", "sequencer", "dram_channel", ...
  std::function<void(std::uint32_t op, StatsVisitor&)> visit_op;
  std::function<void(StatsVisitor&)> visit_total;
  bool per_op = true;  // false: counters of the whole run only (channels, links)
  // Optional latency histogram (LatencyHistogram bucket counts), read once at report time.
  std::function<std::vector<std::uint64_t>()> histogram;

  template <class S>
  static StatsSource of(std::string path, std::string kind, const PerOpStats<S>& stats) {
    const PerOpStats<S>* p = &stats;
    return StatsSource{std::move(path), std::move(kind),
                       [p](std::uint32_t op, StatsVisitor& v) { visit_readonly(p->of(op), v); },
                       [p](StatsVisitor& v) { visit_readonly(p->total(), v); }, true, {}};
  }
  // Whole-run counters, produced by `snapshot()` when the report reads them.
  template <class F>
  static StatsSource of_total(std::string path, std::string kind, F snapshot) {
    using S = decltype(snapshot());
    return StatsSource{std::move(path), std::move(kind),
                       [](std::uint32_t, StatsVisitor& v) { visit_readonly(S{}, v); },
                       [snapshot](StatsVisitor& v) { visit_readonly(snapshot(), v); }, false, {}};
  }
};

}  // namespace tpusim::models
