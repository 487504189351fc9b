#pragma once
// Parameters of one TensorCore: sequencer, MXUs, vector unit, on-chip memories, DMA.
// Plain validated structs (STYLE rule 4): no YAML, no SystemC. They sit in the header-only base
// rather than beside each model because the lowering in isa/ sizes its tiles from them and isa/
// must not depend on models/. Defaults live in the member initialisers; sim/config fills them.

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "sim/base/dtype.h"
#include "sim/base/units.h"

namespace tpusim {

enum class Dataflow : std::uint8_t { kWeightStationary, kOutputStationary, kInputStationary };

inline constexpr std::string_view dataflow_name(Dataflow d) {
  switch (d) {
    case Dataflow::kWeightStationary: return "ws";
    case Dataflow::kOutputStationary: return "os";
    case Dataflow::kInputStationary: return "is";
  }
  return "?";
}

// Fast: one analytic occupancy per instruction. Cycle: every PE evaluated each clock (teaching).
enum class MxuModel : std::uint8_t { kFast, kCycle };

// How far a fold's wavefront travels before its results are out. `tile`: only across the rows
// and columns the tile uses (a ragged fold drains sooner). `array`: across the whole array, as
// with fixed-length skew and de-skew registers at the edges; SCALE-Sim counts cycles this way.
enum class MxuSkew : std::uint8_t { kTile, kArray };
// The largest array `model: cycle` accepts (64 x 64). It simulates tens of millions of
// PE-cycles per second (docs/performance.md): a 64 x 64 matmul of 4096 rows takes about a
// second; larger arrays belong to the fast model.
inline constexpr std::uint64_t kMaxCycleMxuPes = 4096;

struct SequencerSpec {
  std::uint32_t queue_depth = 16;       // entries in each unit's in-order instruction queue
  Duration dispatch_latency = Duration::of_cycles(1);  // decode + dispatch of one instruction
  std::uint32_t semaphores = 32;        // semaphore registers per core
};

struct MxuSpec {
  std::uint32_t count = 1;  // systolic arrays per core
  std::uint32_t rows = 128;
  std::uint32_t cols = 128;
  Dataflow dataflow = Dataflow::kWeightStationary;
  MxuModel model = MxuModel::kFast;
  // Operand type -> MACs per PE per cycle. 1 is full rate; TPUv1 ran 16-bit operands at 1/4
  // (both 16-bit) and v5e runs int8 at 2x its bf16 rate. A type absent here is unsupported.
  std::map<DType, double> precisions = {{DType::kBf16, 1.0}};
  // Operand types the array accepts and rounds, at its input, to one of its precisions, whose
  // rate and MAC energy they then take: TPUs multiply fp32 operands as bf16 by default (XLA's
  // DEFAULT precision, one pass), fp32 in memory, fp32 accumulation.
  std::map<DType, DType> rounding;
  bool weight_double_buffer = true;     // a shadow weight tile loads while the active one computes
  Duration writeback_latency = Duration::of_cycles(1);  // array output -> accumulator memory
  MxuSkew skew = MxuSkew::kTile;
};

// The precision an operand type runs at on `mxu` (itself, or what `rounding` rounds it to), or
// nothing when the array cannot take it.
inline std::optional<DType> mxu_precision(const MxuSpec& mxu, DType t) {
  if (mxu.precisions.count(t)) return t;
  const auto it = mxu.rounding.find(t);
  if (it != mxu.rounding.end()) return it->second;
  return std::nullopt;
}

// Input rows per cycle `mxu` streams operands of type `t` at (its precision's rate).
inline double mxu_rate(const MxuSpec& mxu, DType t) {
  const std::optional<DType> precision = mxu_precision(mxu, t);
  return precision ? mxu.precisions.at(*precision) : 1.0;
}

// Cycles one input row of `elements` operands takes into the array, fed through a vector-memory
// port of `port_bytes` a cycle (0: never the limit). A rate below 1 (TPUv1's 16-bit operands)
// repeats each row's pass; above 1 (v5e int8) packs floor(rate) rows into one pass, which then
// reads that many rows through the port. The MXU's timing and the GEMM planner both use it.
inline double mxu_cycles_per_row(const MxuSpec& mxu, DType t, std::uint64_t elements,
                                 std::uint64_t port_bytes) {
  const double rate = mxu_rate(mxu, t);
  double cycles = 1.0 / rate;
  if (port_bytes > 0) {
    const double rows_per_pass = rate > 1.0 ? double(static_cast<std::uint64_t>(rate)) : 1.0;
    const double pass_bytes = rows_per_pass * double(elements) * double(dtype_bytes(t));
    const double port_cycles =
        double((static_cast<std::uint64_t>(pass_bytes) + port_bytes - 1) / port_bytes);
    cycles = std::max(cycles, port_cycles / rows_per_pass);
  }
  return cycles;
}

// Cycles to shift `rows` rows of `row_bytes` each from vector memory into the array or its
// staging buffer: a row a cycle, unless a port of `port_bytes` a cycle (0: never the limit) needs
// more. The MXU's timing models, its port booking and the GEMM planner all use it.
inline std::uint64_t mxu_shift_cycles(std::uint64_t rows, std::uint64_t row_bytes,
                                      std::uint64_t port_bytes) {
  if (port_bytes == 0) return rows;
  return rows * std::max<std::uint64_t>(1, (row_bytes + port_bytes - 1) / port_bytes);
}

enum class VectorOp : std::uint8_t {
  kAdd, kSub, kMul, kMax, kMin, kRelu, kGelu, kExp, kRsqrt, kReciprocal, kCast, kRequantize,
  kReduceSum, kReduceMax, kBroadcast, kMove,
  kMac,  // dst += a * b: a depthwise convolution's taps, counted as MACs
};
inline constexpr std::size_t kNumVectorOps = 17;

inline constexpr std::string_view vector_op_name(VectorOp op) {
  constexpr std::string_view kNames[kNumVectorOps] = {
      "add", "sub", "mul", "max", "min", "relu", "gelu", "exp", "rsqrt", "reciprocal", "cast",
      "requantize", "reduce_sum", "reduce_max", "broadcast", "move", "mac"};
  return kNames[static_cast<std::size_t>(op)];
}

struct VectorOpTiming {
  Duration latency = Duration::of_cycles(2);  // pipeline depth of one op
  double throughput = 1.0;  // results per ALU slot per cycle (0.25 = one every 4 cycles)
};

struct VpuSpec {
  std::uint32_t lanes = 128;
  std::uint32_t sublanes = 8;
  std::array<VectorOpTiming, kNumVectorOps> ops{};
};

// One on-chip SRAM: vector memory, accumulator memory or common memory.
struct SramSpec {
  Bytes capacity{0};
  std::uint32_t banks = 1;
  Bytes port_width{64};        // bytes per cycle through one port
  std::uint32_t ports = 1;     // independent ports shared by DMA, MXU and VPU
  Duration latency = Duration::of_cycles(1);
  bool present() const { return capacity.value() > 0; }
  Bytes bank_capacity() const { return Bytes(capacity.value() / banks); }
};

struct DmaSpec {
  std::uint32_t engines = 1;
  std::uint32_t max_outstanding = 16;  // chunks in flight per engine
  Bytes chunk{512};                    // bytes per memory transaction
  Duration setup_latency = Duration::of_cycles(8);  // descriptor decode before the first chunk
};

struct CoreSpec {
  SequencerSpec sequencer;
  MxuSpec mxu;
  VpuSpec vpu;
  SramSpec vmem;    // vector memory / unified buffer: MXU inputs, VPU operands
  SramSpec accmem;  // accumulator memory: MXU outputs
  SramSpec cmem;    // optional common memory (TPUv4i CMEM); capacity 0 when absent
  DmaSpec dma;
};

}  // namespace tpusim
