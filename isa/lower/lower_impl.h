#pragma once
// Shared state of the lowering of one operator, and the per-family entry points.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "isa/lower/emitter.h"
#include "isa/lower/layout.h"
#include "isa/lower/lower.h"

namespace tpusim::isa::lower_detail {

// Everything an operator's lowering reads and writes.
struct OpContext {
  Emitter& e;
  const ChipSpec& chip;
  const workloads::Graph& graph;
  const workloads::Op& op;
  std::vector<const TensorPlacement*> inputs;  // placements of op.inputs, in order
  const TensorPlacement* output = nullptr;     // where the (possibly fused) result goes
  // Operators folded into this one's read-out (bias, relu, relu6, gelu, requantize), in order.
  std::vector<workloads::OpKind> epilogue;
  const TensorPlacement* epilogue_bias = nullptr;
  DType mxu_dtype = DType::kBf16;
  OpPlan& plan;
  // Adds a constant tensor in HBM (every element = value) and returns it.
  std::function<const TensorPlacement*(const std::string& name, workloads::Shape shape,
                                       TensorInit init, double value)>
      constant;
  // A requantize ending the epilogue: the scale the read-out multiplies by before narrowing.
  float epilogue_scale = 1.0f;
  // Row pipelines this operator emitted so far (several reuse one set of buffers).
  std::uint32_t row_pipelines = 0;

  // Where this operator's vmem and accmem buffers and its semaphores start, and how much of each
  // it used (README "Operator overlap"). The planners see the whole memories and
  // `semaphores` semaphores wherever the window sits.
  struct Window {
    std::uint64_t vmem = 0, accmem = 0;
    std::uint32_t sems = 0;
    friend bool operator==(const Window& a, const Window& b) {
      return a.vmem == b.vmem && a.accmem == b.accmem && a.sems == b.sems;
    }
  };
  Window base{};
  Window used{};
  std::uint32_t semaphores = 0;  // per core, the operator fences excluded
  // The MXU that takes a step's first weight tile, and the one after the last tile of the last
  // step: an operator running beside its predecessor starts where that one's work ends, so two
  // unbalanced operators (6 column slices on 4 MXUs) even out.
  std::uint32_t first_mxu = 0;
  std::uint32_t next_mxu = 0;

  OnChip vmem();
  OnChip accmem();
  SemaphorePool semaphore_pool();
  std::uint32_t engines() const;  // DMA engines this operator uses
  std::uint16_t cores() const { return static_cast<std::uint16_t>(chip.cores); }
  double hbm_bytes_per_cycle() const;
  [[noreturn]] void fail(const std::string& message) const;
  // A valid graph the lowering cannot handle yet (exit 3, not a bad input).
  [[noreturn]] void unsupported(const std::string& message) const;
  // A valid graph the tool cannot lower, a missing feature or a limit (exit 3): `message` says
  // which.
  [[noreturn]] void not_yet(const std::string& message) const;
};

// A convolution whose A operand is read from a band of input rows in vector memory, not
// gathered as im2col rows through HBM: each step loads the stored input rows (halo included) its
// output rows need, once, and the MXUs read shifted, strided views of them, one matmul per output
// row and kernel tap. Rows of the GEMM are whole output rows (M = images x OH x OW).
struct ConvBand {
  std::uint64_t oh = 0, ow = 0;                // output rows and columns per image
  std::uint64_t kh = 0, kw = 0, channels = 0;  // K = kh x kw x channels, in that order
  std::uint64_t sh = 1, sw = 1, dh = 1, dw = 1;
  std::int64_t pt = 0, pl = 0;
  std::uint64_t row_bytes = 0, pixel_bytes = 0, elem = 0;  // one stored input row, pixel, element
  // Address in `space` of the start of stored input row `ih` (logical row, negative in the top
  // halo).
  Space space = Space::kHbm;
  std::function<std::uint64_t(std::uint64_t n, std::int64_t ih)> row_start;
  // Bytes from a stored row's start to logical column `iw` (negative in the left halo).
  std::function<std::uint64_t(std::int64_t iw)> col_offset;
  std::string description;  // replaces GemmProblem::a_description when the band is used
};

// The matrix product C[b] = A[b] x B[b] for b in [0, batch), with loaders for each operand.
struct GemmProblem {
  std::uint64_t batch = 1, m = 0, n = 0, k = 0;
  DType in_dtype = DType::kBf16;
  DType out_dtype = DType::kBf16;
  bool b_transposed = false;  // the B tile sits in vmem as [n, k] (mxu.lw transpose)
  // Rows [m0, m0+mc) x columns [k0, k0+kc) of A[b] into a tile with rows `pitch` bytes apart.
  std::function<std::vector<Transfer>(std::uint64_t b, std::uint64_t m0, std::uint64_t mc,
                                      std::uint64_t k0, std::uint64_t kc, Address tile,
                                      std::uint64_t pitch)>
      load_a;
  // B[b] rows [k0, k0+kc) x columns [n0, n0+nc) (transposed: rows n, columns k).
  std::function<std::vector<Transfer>(std::uint64_t b, std::uint64_t k0, std::uint64_t kc,
                                      std::uint64_t n0, std::uint64_t nc, Address tile,
                                      std::uint64_t pitch)>
      load_b;
  std::function<std::vector<Transfer>(std::uint64_t b, std::uint64_t m0, std::uint64_t mc,
                                      std::uint64_t n0, std::uint64_t nc, Address tile,
                                      std::uint64_t pitch)>
      store_c;
  // Column of the bias vector that output column 0 of batch b reads (grouped convolutions).
  std::function<std::uint64_t(std::uint64_t b)> bias_column = [](std::uint64_t) { return 0; };
  std::uint64_t resident_bytes = 0;  // vmem held for the whole operator (the bias)
  std::string a_description;         // "dense rows" or "im2col gather of ..."
  // An im2col gather's A rows are runs of at most this many contiguous elements, each its own
  // DMA chunk at least (0: A rows are contiguous).
  std::uint64_t a_run_elements = 0;
  std::optional<ConvBand> band;      // A from an input band (load_a unused)
};

void lower_matmul(OpContext& ctx);
void lower_conv2d(OpContext& ctx);
void emit_gemm(OpContext& ctx, const GemmProblem& problem);

void lower_elementwise(OpContext& ctx);  // add, mul, bias, relu, relu6, gelu
void lower_softmax(OpContext& ctx);
void lower_layernorm(OpContext& ctx);
void lower_window(OpContext& ctx);  // depthwise conv2d, max_pool, avg_pool
void lower_global_avg_pool(OpContext& ctx);
void lower_copy(OpContext& ctx);  // reshape (when not an alias), transpose, concat
void lower_embedding(OpContext& ctx, const std::vector<std::int64_t>* indices);

}  // namespace tpusim::isa::lower_detail
