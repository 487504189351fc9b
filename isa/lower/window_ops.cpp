// Sliding-window operators on the vector unit (depthwise conv2d, max/avg pool, global average
// pool) and data movement (transpose, concat, reshape copies, embedding gathers).

#include <algorithm>

#include "isa/lower/row_pipeline.h"

namespace tpusim::isa::lower_detail {

using workloads::OpKind;

namespace {

constexpr DType kF32 = DType::kFp32;

std::uint64_t u(std::int64_t v) { return static_cast<std::uint64_t>(v); }

}  // namespace

void lower_window(OpContext& ctx) {
  const OpKind kind = ctx.op.kind;
  const auto& at = ctx.op.attrs;
  const TensorPlacement& x = *ctx.inputs[0];
  const TensorPlacement& out = *ctx.output;
  const bool depthwise = kind == OpKind::kConv2d;
  const std::uint64_t batch = u(out.shape[0]), oh = u(out.shape[1]), ow = u(out.shape[2]),
                      c = u(out.shape[3]);
  std::uint64_t kh = u(at.kernel_h), kw = u(at.kernel_w), dh = 1, dw = 1;
  if (depthwise) {
    const TensorPlacement& w = *ctx.inputs[1];
    kh = u(w.shape[0]);
    kw = u(w.shape[1]);
    dh = u(at.dilation_h);
    dw = u(at.dilation_w);
    if (u(w.shape[3]) != u(x.shape[3]))
      ctx.unsupported("depthwise convolution with a channel multiplier");
  }
  const std::uint64_t sh = u(at.stride_h), sw = u(at.stride_w);
  const std::vector<std::uint64_t> xs = x.strides();
  const std::uint64_t ex = dtype_bytes(x.dtype);
  const std::uint64_t width = u(x.storage[2]);           // stored row, halo included
  const std::uint64_t row_bytes = width * c * ex;        // one stored image row
  const std::int64_t col0 = -at.pad_left + x.origin[2];  // stored column of window column 0

  OnChip vmem = ctx.vmem();
  // Resident operands: depthwise weights [KH*KW, C], bias, 1/(KH*KW) for average pools.
  struct Row {
    Preload pre;
    Address wide;
    std::uint64_t n;
    DType t;
  };
  std::vector<Row> rows_res;
  auto resident = [&](const TensorPlacement* t, std::uint64_t n) {
    Row r{Preload{t, n * dtype_bytes(t->dtype),
                  vmem.take(n * dtype_bytes(t->dtype), "a preloaded row")},
          {},
          n,
          t->dtype};
    r.wide = t->dtype == kF32 ? r.pre.at : vmem.take(n * 4, "a widened row");
    rows_res.push_back(r);
    return r.wide;
  };
  Address weights{}, bias{}, inv{}, six{};
  if (depthwise) weights = resident(ctx.inputs[1], kh * kw * c);
  const TensorPlacement* bias_t = ctx.epilogue_bias;
  if (bias_t) bias = resident(bias_t, c);
  if (kind == OpKind::kAvgPool)
    inv = resident(ctx.constant(ctx.op.name + ".inv_area", {1, static_cast<std::int64_t>(c)},
                                TensorInit::kConstant, 1.0 / double(kh * kw)),
                   c);
  const bool relu6 = std::count(ctx.epilogue.begin(), ctx.epilogue.end(), OpKind::kRelu6) > 0;
  // Depthwise accumulators start from the bias, or from a resident row of zeros.
  Address zero{};
  if (depthwise && !bias_t)
    zero = resident(ctx.constant(ctx.op.name + ".zero", {1, static_cast<std::int64_t>(c)},
                                 TensorInit::kConstant, 0.0),
                    c);
  const Address acc_init = bias_t ? bias : zero;
  if (relu6)
    six = resident(ctx.constant(ctx.op.name + ".six", {1, static_cast<std::int64_t>(c)},
                                TensorInit::kConstant, 6.0),
                   c);

  // Channels go in blocks small enough that a band of one output row fits (vmem is 256 KiB on
  // Gemmini-like chips); each block is its own pipeline over the same bands.
  const std::uint64_t stored_per_row = sh + (kh - 1) * dh + 1;
  auto row_cost = [&](std::uint64_t cb) {
    return stored_per_row * width * cb * (2 * ex + 4) + ow * cb * (8 + 2 * dtype_bytes(out.dtype));
  };
  std::uint64_t cb = c;
  const std::uint64_t room = ctx.chip.core.vmem.capacity.value() -
                             std::min(vmem.used(), ctx.chip.core.vmem.capacity.value());
  while (cb > 8 && 2 * row_cost(cb) > room) cb = round_up(cb / 2, 8);
  const RowView out_rows = matrix_rows(out);
  const DType xt = x.dtype, ot = out.dtype;
  const std::uint64_t eo = dtype_bytes(out.dtype);
  const std::vector<OpKind> epilogue = ctx.epilogue;
  // An integer max pool (relu at most fused) stays in its own type, writing the output tile
  // directly: through fp32 int32 values above 2^24 would lose bits. The rest computes in fp32.
  const bool integer_max =
      kind == OpKind::kMaxPool && dtype_is_integer(xt) && xt == ot && !bias_t &&
      std::all_of(epilogue.begin(), epilogue.end(), [](OpKind k) { return k == OpKind::kRelu; });
  const DType ct = integer_max ? xt : kF32;
  const std::uint64_t ec = dtype_bytes(ct);
  const float scale = ctx.epilogue_scale;  // a fused requantize's; 1 otherwise
  for (std::uint64_t c0 = 0; c0 < c; c0 += cb) {
    const std::uint64_t n_ch = std::min(cb, c - c0);
    OnChip block_vmem = vmem;
    RowPipeline p;
    // Every block preloads the resident rows again: each core's vmem needs them, and a core may
    // have no band in some block.
    for (const Row& r : rows_res) p.preloads.push_back(r.pre);
    p.after_preload = [rows_res](Emitter& e) {
      for (const Row& r : rows_res)
        if (r.t != kF32)
          e.vector(VectorOp::kCast, kF32, r.t, 1, u32(r.n), {r.wide, 0}, {r.pre.at, 0});
    };
    // Tiles are bands of output rows inside one image; a band of r rows reads (r-1)*sh + (kh-1)*dh
    // + 1 stored input rows, halo included.
    auto in_rows = [=](std::uint64_t r) { return (r - 1) * sh + (kh - 1) * dh + 1; };
    const std::uint64_t slot_row = width * n_ch * ex;
    p.out_bytes_per_row = ow * n_ch * eo;
    p.scratch_bytes_per_row = stored_per_row * width * n_ch * 4 + ow * n_ch * 4;
    p.inputs.push_back(RowInput{
        stored_per_row * slot_row, [=](const RowTile& t, Address slot) {
          const std::uint64_t n = t.tag, band0 = t.first - n * oh;
          const std::uint64_t stored_row = band0 * sh - u(at.pad_top) + u(x.origin[1]);
          const std::uint64_t src = x.base + n * xs[0] + stored_row * xs[1] + c0 * ex;
          if (n_ch == c)
            return std::vector<Transfer>{
                Transfer{false, {x.space, src}, slot, in_rows(t.rows) * row_bytes, {1}, {0}, {0}}};
          return std::vector<Transfer>{Transfer{false,
                                                {x.space, src},
                                                slot,
                                                n_ch * ex,
                                                {in_rows(t.rows), width},
                                                {xs[1], xs[2]},
                                                {slot_row, n_ch * ex}}};
        }});
    p.store = [=](const RowTile& t, Address slot) {
      return row_transfers(true, out_rows, t.first * ow, t.rows * ow, c0 * eo, n_ch * eo, slot,
                           n_ch * eo);
    };
    p.compute = [=](Emitter& e, const RowTile& t, const std::vector<Address>& in, Address o,
                    Address scratch) {
      const std::uint64_t stored = in_rows(t.rows);
      const Address xf = scratch;
      const Address acc = integer_max ? o : offset(scratch, stored * width * n_ch * 4);
      VectorOperand x32{in[0], u32(width * n_ch * ex)};
      if (xt != ct) {
        e.vector(VectorOp::kCast, kF32, xt, u32(stored), u32(width * n_ch),
                 dense(xf, width * n_ch, kF32), dense(in[0], width * n_ch, xt));
        x32 = dense(xf, width * n_ch, kF32);
      }
      const std::uint64_t pitch = width * n_ch * ec;  // stored row in the compute type
      const auto rows = u32(ow), cols = u32(n_ch);
      for (std::uint64_t i = 0; i < t.rows; ++i) {
        const VectorOperand a_row{offset(acc, i * ow * n_ch * ec), u32(n_ch * ec)};
        if (depthwise)
          e.vector(VectorOp::kMove, kF32, kF32, rows, cols, a_row, {offset(acc_init, c0 * 4), 0});
        for (std::uint64_t r = 0; r < kh; ++r)
          for (std::uint64_t q = 0; q < kw; ++q) {
            const std::uint64_t col = u(col0 + std::int64_t(q * dw));
            const VectorOperand win{offset(x32.addr, (i * sh + r * dh) * pitch + col * n_ch * ec),
                                    u32(sw * n_ch * ec)};
            const bool first = r == 0 && q == 0;
            if (depthwise) {
              const VectorOperand w{offset(weights, ((r * kw + q) * c + c0) * 4), 0};
              e.vector(VectorOp::kMac, kF32, kF32, rows, cols, a_row, win, w);
            } else if (first) {
              e.vector(VectorOp::kMove, ct, ct, rows, cols, a_row, win);
            } else {
              e.vector(kind == OpKind::kMaxPool ? VectorOp::kMax : VectorOp::kAdd, ct, ct, rows,
                       cols, a_row, a_row, win);
            }
          }
      }
      const auto n_out = u32(t.rows * ow);
      const VectorOperand A = dense(acc, n_ch, ct);
      if (kind == OpKind::kAvgPool)
        e.vector(VectorOp::kMul, kF32, kF32, n_out, cols, A, A, {offset(inv, c0 * 4), 0});
      if (bias_t && !depthwise)
        e.vector(VectorOp::kAdd, kF32, kF32, n_out, cols, A, A, {offset(bias, c0 * 4), 0});
      for (OpKind k : epilogue) {
        if (k == OpKind::kRelu || k == OpKind::kRelu6)
          e.vector(VectorOp::kRelu, ct, ct, n_out, cols, A, A);
        if (k == OpKind::kRelu6)
          e.vector(VectorOp::kMin, kF32, kF32, n_out, cols, A, A, {offset(six, c0 * 4), 0});
        if (k == OpKind::kGelu) e.vector(VectorOp::kGelu, kF32, kF32, n_out, cols, A, A);
      }
      if (!integer_max) narrow(e, t.rows * ow, n_ch, A, o, ot, scale);
    };
    p.description = std::to_string(kh) + "x" + std::to_string(kw) +
                    " window, one vector op per tap and output row" +
                    (n_ch < c ? ", " + std::to_string(ceil_div(c, cb)) + " channel blocks" : "");
    // Bands of output rows, never crossing an image.
    const std::uint64_t band = choose_tile_rows(ctx, p, oh, block_vmem.used(), 1);
    std::vector<RowTile> tiles;
    for (std::uint64_t n = 0; n < batch; ++n)
      for (std::uint64_t r = 0; r < oh; r += band)
        tiles.push_back(RowTile{n * oh + r, std::min(band, oh - r), n});
    emit_row_pipeline(ctx, p, tiles, block_vmem);
  }
}

void lower_global_avg_pool(OpContext& ctx) {
  const TensorPlacement& x = *ctx.inputs[0];
  const TensorPlacement& out = *ctx.output;
  const std::uint64_t batch = u(x.shape[0]), area = u(x.shape[1]) * u(x.shape[2]),
                      c = u(x.shape[3]);
  const TensorPlacement* inv_t =
      ctx.constant(ctx.op.name + ".inv_area", {1, static_cast<std::int64_t>(c)},
                   TensorInit::kConstant, 1.0 / double(area));
  const RowView in_rows = matrix_rows(x);
  const RowView out_rows = matrix_rows(out);
  const std::uint64_t ex = dtype_bytes(x.dtype), eo = dtype_bytes(out.dtype);
  const DType xt = x.dtype, ot = out.dtype;
  // One tile per image (H*W rows of a block of channels), summed by halving; channel blocks keep
  // an image within vmem.
  std::uint64_t cb = c;
  const auto image_cost = [&](std::uint64_t n) {
    return area * n * (2 * ex + 4) + 2 * n * eo + n * 4;
  };
  while (cb > 8 && 2 * image_cost(cb) > ctx.chip.core.vmem.capacity.value())
    cb = round_up(cb / 2, 8);
  for (std::uint64_t c0 = 0; c0 < c; c0 += cb) {
    const std::uint64_t n_ch = std::min(cb, c - c0);
    OnChip vmem = ctx.vmem();
    const Address inv = vmem.take(n_ch * 4, "1/area");
    RowPipeline p;
    p.preloads.push_back(Preload{inv_t, n_ch * 4, inv});  // every element holds 1/area
    p.inputs.push_back(RowInput{area * n_ch * ex, [=](const RowTile& t, Address slot) {
                                  return row_transfers(false, in_rows, t.first * area,
                                                       t.rows * area, c0 * ex, n_ch * ex, slot,
                                                       n_ch * ex);
                                }});
    p.out_bytes_per_row = n_ch * eo;
    p.store = [=](const RowTile& t, Address slot) {
      return row_transfers(true, out_rows, t.first, t.rows, c0 * eo, n_ch * eo, slot, n_ch * eo);
    };
    p.scratch_bytes_per_row = area * n_ch * 4;
    p.compute = [=](Emitter& e, const RowTile& t, const std::vector<Address>& in, Address o,
                    Address scratch) {
      for (std::uint64_t img = 0; img < t.rows; ++img) {
        const Address src = offset(in[0], img * area * n_ch * ex);
        const Address f = offset(scratch, img * area * n_ch * 4);
        const VectorOperand F = dense(f, n_ch, kF32);
        std::uint64_t n = area;
        if (xt == kF32 && area > 1) {
          // fp32 needs no widening copy: the first halving reads the input itself (and an odd
          // area's middle row is carried over).
          const std::uint64_t half = area / 2;
          e.vector(VectorOp::kAdd, kF32, kF32, u32(half), u32(n_ch), F, dense(src, n_ch, kF32),
                   dense(offset(src, (area - half) * n_ch * 4), n_ch, kF32));
          if (area % 2)
            e.vector(VectorOp::kMove, kF32, kF32, 1, u32(n_ch),
                     dense(offset(f, half * n_ch * 4), n_ch, kF32),
                     dense(offset(src, half * n_ch * 4), n_ch, kF32));
          n = area - half;
        } else {
          e.vector(xt != kF32 ? VectorOp::kCast : VectorOp::kMove, kF32, xt, u32(area), u32(n_ch),
                   F, dense(src, n_ch, xt));
        }
        for (; n > 1;) {
          const std::uint64_t half = n / 2;
          e.vector(VectorOp::kAdd, kF32, kF32, u32(half), u32(n_ch), F, F,
                   dense(offset(f, (n - half) * n_ch * 4), n_ch, kF32));
          n -= half;
        }
        e.vector(VectorOp::kMul, kF32, kF32, 1, u32(n_ch), F, F, {inv, 0});
        narrow(e, 1, n_ch, F, offset(o, img * n_ch * eo), ot);
      }
    };
    p.description =
        "sum of H*W rows by halving, times 1/(H*W)" +
        (n_ch < c ? ", " + std::to_string(ceil_div(c, cb)) + " channel blocks" : std::string());
    emit_row_pipeline(ctx, p, uniform_tiles(batch, choose_tile_rows(ctx, p, batch, vmem.used(), 1)),
                      vmem);
  }
}

}  // namespace tpusim::isa::lower_detail
