#pragma once
// Operator overlap on one core (README "Operator overlap"): an operator may start while its
// predecessor runs when its buffers and semaphores sit beside the predecessor's and it does not
// touch what the predecessor writes until that one has finished.

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "isa/lower/lower_impl.h"

namespace tpusim::isa::lower_detail {

// Semaphores kept for the fences between operators: consecutive operators alternate two, so an
// operator's fence is taken before the next-but-one signals the same semaphore.
inline constexpr std::uint32_t kOperatorFences = 2;

// Byte ranges [first, second) an operator's DMA reads and writes in memories operators share
// (HBM, CMEM, vmem; vmem addresses tagged, overlap.cpp).
struct SharedSpans {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> reads, writes;
};

// The spans of instructions [from, to) of a program.
SharedSpans shared_spans(const Program& program, std::size_t from, std::size_t to);

// The first instruction in [from, to) that reads what `earlier` writes or writes what it reads
// or writes; none when the range is independent of it.
std::optional<std::size_t> first_dependent(const Program& program, std::size_t from, std::size_t to,
                                           const SharedSpans& earlier);

// Capacities an operator window must stay inside.
struct WindowLimits {
  std::uint64_t vmem = 0, accmem = 0;
  std::uint32_t sems = 0;
};

// Where an operator that needs `need` (from base 0) fits beside one occupying `busy_base` +
// `busy_used`: in each resource, below it when there is room, else above it; none when a
// resource has room on neither side.
std::optional<OpContext::Window> window_beside(const OpContext::Window& busy_base,
                                               const OpContext::Window& busy_used,
                                               const OpContext::Window& need,
                                               const WindowLimits& limits);

}  // namespace tpusim::isa::lower_detail
