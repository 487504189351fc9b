#pragma once
// Tile choice for the GEMM schedule (gemm.cpp) and the geometry of band convolutions
// (conv_band.cpp): what a step holds, what it costs, and where its operands sit.

#include <cstdint>
#include <optional>
#include <vector>

#include "isa/lower/lower_impl.h"

namespace tpusim::isa::lower_detail {

// One tiling of a GEMM and its estimate (README "GEMM").
struct Tiles {
  std::uint64_t m = 0, n = 0, k = 0;
  double compute_cycles = 0, memory_cycles = 0, estimate = 0;
  std::uint64_t hbm_bytes = 0, vmem = 0, accmem = 0;
  std::uint64_t in_buffers = 2;  // A and B buffers in flight
  std::uint64_t kparts = 1;      // MXUs that share one item's K slices (partial sums)
  // Batch items that share one step, so their weight slices spread over the MXUs.
  std::uint64_t group = 1;
};

// The input rows of one image that a run of its output rows reads, and where they sit in the
// step's A buffer.
struct BandSegment {
  std::uint64_t n = 0, oh0 = 0, oh1 = 0;  // output rows [oh0, oh1) of image n
  std::int64_t ih0 = 0;                   // first stored input row loaded
  std::uint64_t rows = 0, offset = 0;     // input rows loaded; bytes into the A buffer
};

// One vector operation of a tile's read-out from the accumulators, in program order. The
// schedule emits these (gemm.cpp) and the planner prices them, so the two cannot drift apart.
struct ReadOutOp {
  enum class Role : std::uint8_t {
    kPartialSum,  // adds the next K part's partial sums
    kWiden,       // to the epilogue's type (fp32 for gelu)
    kBias,
    kActivation,  // relu, gelu: in place
    kCapAtSix,    // relu6's min against a row of sixes
    kResult,      // to the output tile in the output type (move, cast or requantize)
  };
  Role role;
  VectorOp op;
  DType dst, src;
};
// The type a GEMM's fused epilogue computes in: the accumulator's, or fp32 for gelu (integer
// sums stay integers through relu and relu6: a cast to fp32 would lose int32 bits above 2^24).
DType epilogue_dtype(const OpContext& ctx, DType in_dtype);
std::vector<ReadOutOp> read_out_ops(const OpContext& ctx, const GemmProblem& p,
                                    std::uint64_t kparts);
// Vector-unit cycles per output element of those operations.
double read_out_cycles_per_element(const OpContext& ctx, const GemmProblem& p,
                                   std::uint64_t kparts);
// Tiles that fit the on-chip memories, best by the README's estimate; none when nothing fits.
std::optional<Tiles> choose_tiles(const OpContext& ctx, const GemmProblem& p);
inline constexpr std::uint64_t kMaxInputBuffers = 3;
// Input buffers the schedule keeps (kMaxInputBuffers when the semaphores allow, else 2).
std::uint64_t input_buffers(const OpContext& ctx);
// The K granule one weight tile covers over the whole operator.
std::uint64_t k_unit(const MxuSpec& mxu, std::uint64_t tk);
// The largest K and N slices one weight tile covers.
std::uint64_t k_slice(const MxuSpec& mxu, std::uint64_t kc);
std::uint64_t n_slice(const MxuSpec& mxu, std::uint64_t nc);
// When a tile has fewer column slices (nsubs) than MXUs, its rows are split so every MXU works,
// never into parts of fewer than `min_part` rows (8 GEMM rows; 1 output row of a band).
std::uint64_t row_parts(const MxuSpec& mxu, std::uint64_t nsubs, std::uint64_t rows,
                        std::uint64_t min_part = 8);
// The segments of the band tile holding GEMM rows [m0, m0 + mc) (whole output rows).
std::vector<BandSegment> band_segments(const ConvBand& b, std::uint64_t m0, std::uint64_t mc);
// A band convolution's K pieces are runs of at most R elements contiguous in a stored input row.
std::uint64_t band_run(const ConvBand& b);
// A buffer bytes for a band tile of tm GEMM rows, whichever images its rows fall in.
std::uint64_t band_bytes(const ConvBand& b, std::uint64_t tm);
// One step of a band convolution: its weight loads and matmuls (conv_band.cpp).
void emit_band_compute(Emitter& e, const GemmProblem& p, const ConvBand& b, std::uint64_t m0,
                       std::uint64_t mc, std::uint64_t nc, Address band, Address weights,
                       std::uint64_t pitch_b, Address acc, std::uint64_t pitch_acc);

}  // namespace tpusim::isa::lower_detail
