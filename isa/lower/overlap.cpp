#include "isa/lower/overlap.h"

#include <algorithm>
#include <variant>

namespace tpusim::isa::lower_detail {

namespace {

// Operators hand data to each other through HBM and CMEM, and (compiler.activations: vmem)
// through vector memory. Two operators' own vmem buffers never meet (their windows are apart), so
// any vmem bytes both touch are such data. Vmem addresses are tagged to keep them apart from HBM's.
bool shared(Space s) { return s == Space::kHbm || s == Space::kCmem || s == Space::kVmem; }
std::uint64_t space_tag(Space s) { return s == Space::kVmem ? std::uint64_t{1} << 62 : 0; }

// The bytes a strided DMA operand can touch: its first byte to the end of its last run.
std::pair<std::uint64_t, std::uint64_t> extent(
    const DmaInstr& d, const Address& a, const std::array<std::uint32_t, kMaxDmaDims>& stride) {
  std::uint64_t last = 0;
  for (std::uint8_t i = 0; i < d.dims; ++i)
    if (d.count[i] > 0) last += std::uint64_t{d.count[i] - 1} * stride[i];
  const std::uint64_t first = space_tag(a.space) + a.addr;
  return {first, first + last + d.elem_bytes};
}

bool overlaps(const std::vector<std::pair<std::uint64_t, std::uint64_t>>& spans,
              const std::pair<std::uint64_t, std::uint64_t>& x) {
  for (const auto& s : spans)
    if (x.first < s.second && s.first < x.second) return true;
  return false;
}

// Keeps the list short: sorted, with touching or overlapping spans merged.
void merge(std::vector<std::pair<std::uint64_t, std::uint64_t>>& spans) {
  std::sort(spans.begin(), spans.end());
  std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
  for (const auto& s : spans) {
    if (!out.empty() && s.first <= out.back().second)
      out.back().second = std::max(out.back().second, s.second);
    else
      out.push_back(s);
  }
  spans = std::move(out);
}

}  // namespace

SharedSpans shared_spans(const Program& program, std::size_t from, std::size_t to) {
  SharedSpans spans;
  for (std::size_t i = from; i < to; ++i) {
    const auto* d = std::get_if<DmaInstr>(&program.instructions[i].body);
    if (!d) continue;
    if (shared(d->src.space)) spans.reads.push_back(extent(*d, d->src, d->src_stride));
    if (shared(d->dst.space)) spans.writes.push_back(extent(*d, d->dst, d->dst_stride));
  }
  merge(spans.reads);
  merge(spans.writes);
  return spans;
}

std::optional<std::size_t> first_dependent(const Program& program, std::size_t from, std::size_t to,
                                           const SharedSpans& earlier) {
  for (std::size_t i = from; i < to; ++i) {
    const auto* d = std::get_if<DmaInstr>(&program.instructions[i].body);
    if (!d) continue;
    if (shared(d->src.space) && overlaps(earlier.writes, extent(*d, d->src, d->src_stride)))
      return i;
    if (shared(d->dst.space)) {
      const auto w = extent(*d, d->dst, d->dst_stride);
      if (overlaps(earlier.writes, w) || overlaps(earlier.reads, w)) return i;
    }
  }
  return std::nullopt;
}

std::optional<OpContext::Window> window_beside(const OpContext::Window& busy_base,
                                               const OpContext::Window& busy_used,
                                               const OpContext::Window& need,
                                               const WindowLimits& limits) {
  // Windows start on 4 KiB boundaries, as a fresh operator's buffers do at 0.
  const auto place = [](std::uint64_t lo, std::uint64_t used, std::uint64_t want,
                        std::uint64_t limit, std::uint64_t align) -> std::optional<std::uint64_t> {
    if (want == 0) return 0;
    if (used == 0 || want <= lo) return 0;
    const std::uint64_t above = (lo + used + align - 1) / align * align;
    if (above + want <= limit) return above;
    return std::nullopt;
  };
  const auto vmem = place(busy_base.vmem, busy_used.vmem, need.vmem, limits.vmem, 4096);
  const auto accmem = place(busy_base.accmem, busy_used.accmem, need.accmem, limits.accmem, 4096);
  const auto sems = place(busy_base.sems, busy_used.sems, need.sems, limits.sems, 1);
  if (!vmem || !accmem || !sems) return std::nullopt;
  return OpContext::Window{*vmem, *accmem, static_cast<std::uint32_t>(*sems)};
}

}  // namespace tpusim::isa::lower_detail
