#pragma once
// Lowering: a workload graph becomes a program for one chip (isa/lower/README.md explains the
// schedule). Plain C++: no SystemC, no YAML.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "isa/program.h"
#include "sim/base/spec/chip_spec.h"
#include "workloads/graph.h"

namespace tpusim::isa {

// What the memory of a tensor holds before the program runs.
enum class TensorInit : std::uint8_t {
  kNone,        // written by the program (activations, outputs)
  kData,        // a graph input or weight: read from --inputs or generated from the seed
  kConstant,    // a constant the lowering needs (1/D, epsilon, 6 for relu6): every element = fill
  kCausalMask,  // [rows, cols] with 0 where col <= row % cols_period, fill (a large negative) above
};

// Where one tensor lives: in HBM, or (compiler.activations: vmem) an operator output that only
// later operators read, in a region at the top of vector memory. Image tensors consumed by padded
// convolutions or pools are stored with a halo: `storage` is the padded shape, `origin` the index
// of element [0,0,...] inside it, and the halo holds `fill`.
struct TensorPlacement {
  std::string name;
  DType dtype = DType::kBf16;
  workloads::Shape shape;
  workloads::TensorRole role = workloads::TensorRole::kActivation;
  TensorInit init = TensorInit::kNone;
  Space space = Space::kHbm;
  std::uint64_t base = 0;  // byte address of the storage in `space`
  workloads::Shape storage;
  workloads::Shape origin;
  double fill = 0.0;
  std::string alias_of;  // a reshape shares its input's bytes; empty otherwise

  std::uint64_t storage_bytes() const;
  // Byte strides of `storage`, outermost first.
  std::vector<std::uint64_t> strides() const;
  // Address of logical element `index` (one entry per dimension of `shape`).
  std::uint64_t address_of(const std::vector<std::int64_t>& index) const;
};

// The tiling decision of one operator, as `tpusim compile --explain` prints it.
struct OpPlan {
  std::string name;
  std::string kind;
  std::string tile;        // e.g. "M 512 x N 512 x K 1024 (im2col rows of 3 kernel rows)"
  std::string loop_order;  // e.g. "m, n, k (k innermost; A and B tiles double-buffered)"
  std::string placement;   // e.g. "2 cores x 4 MXUs: output tiles round-robin over cores"
  std::uint64_t vmem_bytes = 0;
  std::uint64_t accmem_bytes = 0;
  std::uint64_t hbm_bytes = 0;  // bytes the schedule moves to and from HBM
  std::uint64_t macs = 0;
  double compute_cycles = 0;  // lower bound from the MXU (or VPU) alone
  double memory_cycles = 0;   // lower bound from HBM bandwidth alone
  std::string bound() const { return compute_cycles >= memory_cycles ? "compute" : "memory"; }
  std::string notes;  // fused operators, dtype substitutions
};

struct LowerOptions {
  // Embedding lookups: the ISA has no indirect DMA, so the rows are resolved when compiling
  // (as a host-side gather would be). Indices by tensor name; absent ones spread over the table.
  std::map<std::string, std::vector<std::int64_t>> index_values;
  // Fuse bias / activation into the accumulator read-out of the producing matmul or conv.
  bool fuse_epilogues = true;
  // On one core, start each operator beside the one before it (buffers and semaphores apart)
  // and wait for it only before touching what it writes (README "Operator overlap"); otherwise
  // a barrier separates every two operators.
  bool overlap_operators = true;
};

struct Lowered {
  Program program;
  std::vector<TensorPlacement> tensors;  // graph tensors first (in graph order), then constants
  std::vector<OpPlan> plans;             // one per emitted operator, in program order
  DType mxu_dtype = DType::kBf16;        // the MXU operand type the program uses
  std::string dtype_note;                // set when the graph's float types were substituted
  std::uint64_t hbm_bytes = 0;           // highest hbm address used
  // compiler.activations: vmem: the region at the top of vmem that holds activations.
  std::uint64_t vmem_activation_bytes = 0;
  const TensorPlacement* find(const std::string& name) const;
};

// Throws WorkloadError when the graph cannot run on the chip (a tensor larger than HBM, a row
// that does not fit the vector memory), naming the operator.
Lowered lower(const workloads::Graph& graph, const ChipSpec& chip,
              const LowerOptions& options = {});

// The per-operator tiling table of `tpusim compile --explain`.
std::string explain(const Lowered& lowered, const ChipSpec& chip);

}  // namespace tpusim::isa
