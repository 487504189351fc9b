#pragma once
// The double-buffered load -> vector unit -> store pipeline of every operator that does not use
// the MXU (README "Vector operators").

#include <functional>
#include <string>
#include <vector>

#include "isa/lower/lower_impl.h"

namespace tpusim::isa::lower_detail {

struct RowTile {
  std::uint64_t first = 0;  // first row of the operator's iteration space
  std::uint64_t rows = 0;   // rows in this tile
  std::uint64_t tag = 0;    // operator-specific (e.g. the image a window tile belongs to)
};

struct RowInput {
  std::uint64_t bytes_per_row = 0;  // size of the tile slot per tile row
  std::function<std::vector<Transfer>(const RowTile& t, Address slot)> load;
};

// Something loaded once before the first tile (a bias, gamma, a constant row).
struct Preload {
  const TensorPlacement* tensor = nullptr;
  std::uint64_t bytes = 0;  // from the start of the tensor
  Address at;
};

struct RowPipeline {
  std::vector<RowInput> inputs;
  std::uint64_t out_bytes_per_row = 0;
  std::function<std::vector<Transfer>(const RowTile& t, Address slot)> store;
  std::uint64_t scratch_bytes_per_row = 0;  // fp32 working space, single-buffered (VPU only)
  std::vector<Preload> preloads;
  // Vector work run once after the preloads arrive (widening a bias to fp32, say).
  std::function<void(Emitter&)> after_preload;
  // The vector work of one tile: slots of each input, the output slot, the scratch.
  std::function<void(Emitter&, const RowTile&, const std::vector<Address>& in, Address out,
                     Address scratch)>
      compute;
  std::string description;  // for --explain
};

inline std::uint32_t u32(std::uint64_t v) { return static_cast<std::uint32_t>(v); }

// A dense [rows, cols] operand of type t at `a`.
inline VectorOperand dense(Address a, std::uint64_t cols, DType t) {
  return VectorOperand{a, u32(cols * dtype_bytes(t))};
}

// Writes an fp32 tile out as `dtype`: a move, a cast, or (narrow integers) a requantize;
// nothing when the tile was computed in the fp32 output itself (see result()).
inline void narrow(Emitter& e, std::uint64_t rows, std::uint64_t cols, VectorOperand f32,
                   Address out, DType dtype, float scale = 1.0f) {
  const VectorOperand dst = dense(out, cols, dtype);
  if (dtype == DType::kFp32 && f32.addr == out && f32.stride == dst.stride) return;
  if (dtype == DType::kFp32)
    e.vector(VectorOp::kMove, DType::kFp32, DType::kFp32, u32(rows), u32(cols), dst, f32);
  else if (dtype_is_integer(dtype) && dtype != DType::kInt32)
    e.vector(VectorOp::kRequantize, dtype, DType::kFp32, u32(rows), u32(cols), dst, f32, {}, scale);
  else
    e.vector(VectorOp::kCast, dtype, DType::kFp32, u32(rows), u32(cols), dst, f32);
}

// Where a tile's last fp32 step writes: the output itself when it is fp32 (narrow() then has
// nothing to do), else `scratch`.
inline VectorOperand result(Address out, Address scratch, std::uint64_t cols, DType dtype) {
  return dense(dtype == DType::kFp32 ? out : scratch, cols, DType::kFp32);
}

// Largest tile (in rows, a multiple of `granule` unless the whole fits) whose double-buffered
// slots and scratch fit what is left of vmem, capped so tiles stay near `target_bytes`.
std::uint64_t choose_tile_rows(const OpContext& ctx, const RowPipeline& p, std::uint64_t rows,
                               std::uint64_t vmem_used, std::uint64_t granule = 1);

// Uniform tiles over [0, rows).
std::vector<RowTile> uniform_tiles(std::uint64_t rows, std::uint64_t tile_rows);

// Emits the pipeline; tiles go round-robin over cores. `vmem` already holds the preload slots.
void emit_row_pipeline(OpContext& ctx, const RowPipeline& p, const std::vector<RowTile>& tiles,
                       OnChip& vmem);

}  // namespace tpusim::isa::lower_detail
