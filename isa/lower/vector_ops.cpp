// Row-wise vector operators: elementwise, bias, activations, softmax, layernorm. The vector unit
// computes in fp32 (as TPUv2-v4's VPU does); narrower tensors are widened on the way in and
// narrowed on the way out, each a real pass over the tile.

#include "isa/lower/row_pipeline.h"

namespace tpusim::isa::lower_detail {

using workloads::OpKind;

namespace {

constexpr DType kF32 = DType::kFp32;

struct Matrix {
  RowView view;
  std::uint64_t cols = 0;
  DType dtype = kF32;
  std::uint64_t row_bytes() const { return cols * dtype_bytes(dtype); }
};

Matrix as_matrix(const TensorPlacement& t) {
  return Matrix{matrix_rows(t), last_dim(t.shape), t.dtype};
}

RowInput tile_input(const Matrix& m) {
  const std::uint64_t bytes = m.row_bytes();
  return RowInput{bytes, [m, bytes](const RowTile& t, Address slot) {
                    return row_transfers(false, m.view, t.first, t.rows, 0, bytes, slot, bytes);
                  }};
}

std::function<std::vector<Transfer>(const RowTile&, Address)> tile_store(const Matrix& m) {
  const std::uint64_t bytes = m.row_bytes();
  return [m, bytes](const RowTile& t, Address slot) {
    return row_transfers(true, m.view, t.first, t.rows, 0, bytes, slot, bytes);
  };
}

// The tile as fp32: `src` itself when it already is, else widened into `f32`.
VectorOperand widen(Emitter& e, std::uint64_t rows, std::uint64_t cols, Address src, DType dtype,
                    Address f32) {
  if (dtype == kF32) return dense(src, cols, kF32);
  e.vector(VectorOp::kCast, kF32, dtype, u32(rows), u32(cols), dense(f32, cols, kF32),
           dense(src, cols, dtype));
  return dense(f32, cols, kF32);
}

// A tensor loaded once into vmem and widened to fp32 there.
struct Resident {
  Preload preload;
  Address wide;
  DType dtype = kF32;
  std::uint64_t elements = 0;
};

Resident resident(OnChip& vmem, const TensorPlacement* t, std::uint64_t elements) {
  Resident r;
  r.dtype = t->dtype;
  r.elements = elements;
  r.preload = Preload{t, elements * dtype_bytes(t->dtype),
                      vmem.take(elements * dtype_bytes(t->dtype), "a preloaded row")};
  r.wide = t->dtype == kF32 ? r.preload.at : vmem.take(elements * 4, "a widened row");
  return r;
}

void widen_resident(Emitter& e, const Resident& r) {
  if (r.dtype != kF32)
    e.vector(VectorOp::kCast, kF32, r.dtype, 1, u32(r.elements), {r.wide, 0}, {r.preload.at, 0});
}

std::uint64_t rows_of(const TensorPlacement& t) {
  return static_cast<std::uint64_t>(product(t.shape, 0, t.shape.size() - 1));
}

}  // namespace

void lower_elementwise(OpContext& ctx) {
  const OpKind kind = ctx.op.kind;
  const TensorPlacement& x = *ctx.inputs[0];
  const TensorPlacement& out = *ctx.output;
  const std::uint64_t cols = last_dim(out.shape);
  const std::uint64_t rows = rows_of(out);
  OnChip vmem = ctx.vmem();
  RowPipeline p;
  p.inputs.push_back(tile_input(as_matrix(x)));
  p.out_bytes_per_row = cols * dtype_bytes(out.dtype);
  p.store = tile_store(as_matrix(out));
  p.scratch_bytes_per_row = 2 * cols * 4;

  // The second operand: a tile per step, or one row for every row (bias, broadcast, relu6).
  const bool binary = kind == OpKind::kAdd || kind == OpKind::kMul || kind == OpKind::kBias;
  std::vector<Resident> residents;
  bool b_per_tile = false;
  if (binary) {
    const TensorPlacement& b = *ctx.inputs[1];
    const std::uint64_t b_rows = b.shape.size() <= 1 ? 1 : rows_of(b);
    if (b_rows == 1) {
      residents.push_back(resident(vmem, &b, cols));
    } else {
      b_per_tile = true;
      Matrix bm = as_matrix(b);
      if (b_rows != rows) {
        // b repeats every b_rows rows (NumPy broadcast over leading dimensions).
        if (bm.view.size[0] * bm.view.size[1] != 1) ctx.unsupported("broadcast of a padded tensor");
        bm.view.size = {1, rows / b_rows, b_rows};
        bm.view.stride = {0, 0, bm.view.stride[2]};
      }
      p.inputs.push_back(tile_input(bm));
    }
  }
  if (kind == OpKind::kRelu6)
    residents.push_back(
        resident(vmem,
                 ctx.constant(ctx.op.name + ".six", {1, static_cast<std::int64_t>(cols)},
                              TensorInit::kConstant, 6.0),
                 cols));
  for (const Resident& r : residents) p.preloads.push_back(r.preload);
  p.after_preload = [residents](Emitter& e) {
    for (const Resident& r : residents) widen_resident(e, r);
  };
  const DType xt = x.dtype, bt = binary ? ctx.inputs[1]->dtype : kF32, ot = out.dtype;
  // Integer sums and products run in the tensors' own type, which wraps (workloads/README.md):
  // through fp32 they would saturate when narrowed, and lose int32 values above 2^24.
  const bool integer = binary && dtype_is_integer(ot) && xt == ot && bt == ot;
  // relu and relu6 of an integer tensor clamp in its own type, for the same reason.
  const bool integer_clamp =
      (kind == OpKind::kRelu || kind == OpKind::kRelu6) && dtype_is_integer(ot) && xt == ot;
  if (integer || integer_clamp) p.scratch_bytes_per_row = 0;
  Address int_six{};
  if (integer_clamp && kind == OpKind::kRelu6) {
    int_six = vmem.take(cols * dtype_bytes(ot), "the relu6 bound");
    p.after_preload = [widen_residents = p.after_preload, residents, int_six, ot,
                       cols](Emitter& e) {
      widen_residents(e);
      e.vector(VectorOp::kCast, ot, kF32, 1, u32(cols), {int_six, 0}, {residents[0].wide, 0});
    };
  }
  const auto scale = static_cast<float>(ctx.op.attrs.scale);
  p.compute = [=](Emitter& e, const RowTile& t, const std::vector<Address>& in, Address o,
                  Address scratch) {
    if (kind == OpKind::kRequantize) {
      // Lowered to a floating type (a chip without the graph's integer side, timing only), it
      // is a cast, as the MXU epilogue does (gemm.cpp).
      const bool narrows = dtype_is_integer(ot) && ot != DType::kInt32;
      e.vector(narrows ? VectorOp::kRequantize : VectorOp::kCast, ot, xt, u32(t.rows), u32(cols),
               dense(o, cols, ot), dense(in[0], cols, xt), {}, narrows ? scale : 0.0f);
      return;
    }
    if (integer) {
      const VectorOperand b =
          b_per_tile ? dense(in[1], cols, bt) : VectorOperand{residents[0].preload.at, 0};
      e.vector(kind == OpKind::kMul ? VectorOp::kMul : VectorOp::kAdd, ot, ot, u32(t.rows),
               u32(cols), dense(o, cols, ot), dense(in[0], cols, xt), b);
      return;
    }
    if (integer_clamp) {
      const VectorOperand out_tile = dense(o, cols, ot);
      e.vector(VectorOp::kRelu, ot, ot, u32(t.rows), u32(cols), out_tile, dense(in[0], cols, xt));
      if (kind == OpKind::kRelu6)
        e.vector(VectorOp::kMin, ot, ot, u32(t.rows), u32(cols), out_tile, out_tile, {int_six, 0});
      return;
    }
    const Address s0 = scratch, s1{scratch.space, scratch.addr + t.rows * cols * 4};
    const VectorOperand a = widen(e, t.rows, cols, in[0], xt, s0);
    const VectorOperand acc = result(o, s0, cols, ot);
    const auto r = u32(t.rows), c = u32(cols);
    switch (kind) {
      case OpKind::kAdd:
      case OpKind::kMul:
      case OpKind::kBias: {
        const VectorOperand b = b_per_tile ? widen(e, t.rows, cols, in[1], bt, s1)
                                           : VectorOperand{residents[0].wide, 0};
        e.vector(kind == OpKind::kMul ? VectorOp::kMul : VectorOp::kAdd, kF32, kF32, r, c, acc, a,
                 b);
        break;
      }
      case OpKind::kRelu:
        e.vector(VectorOp::kRelu, kF32, kF32, r, c, acc, a);
        break;
      case OpKind::kRelu6:
        e.vector(VectorOp::kRelu, kF32, kF32, r, c, acc, a);
        e.vector(VectorOp::kMin, kF32, kF32, r, c, acc, acc, {residents[0].wide, 0});
        break;
      case OpKind::kGelu:
        e.vector(VectorOp::kGelu, kF32, kF32, r, c, acc, a);
        break;
      default:
        break;
    }
    narrow(e, t.rows, cols, acc, o, ot);
  };
  p.description = std::string(workloads::op_kind_name(kind)) +
                  (integer || integer_clamp || kind == OpKind::kRequantize
                       ? " in " + std::string(dtype_name(ot))
                       : " in fp32");
  emit_row_pipeline(ctx, p, uniform_tiles(rows, choose_tile_rows(ctx, p, rows, vmem.used(), 8)),
                    vmem);
}

void lower_softmax(OpContext& ctx) {
  const TensorPlacement& x = *ctx.inputs[0];
  const TensorPlacement& out = *ctx.output;
  const std::uint64_t cols = static_cast<std::uint64_t>(x.shape.back());
  const std::uint64_t rows = rows_of(x);
  OnChip vmem = ctx.vmem();
  RowPipeline p;
  p.inputs.push_back(tile_input(as_matrix(x)));
  const bool causal = ctx.op.attrs.causal;
  if (causal) {
    // Row i of each [S, S] block masks columns j > i: an additive mask tensor read per tile.
    const std::uint64_t period =
        x.shape.size() >= 2 ? static_cast<std::uint64_t>(x.shape[x.shape.size() - 2]) : 1;
    const TensorPlacement* mask = ctx.constant(
        ctx.op.name + ".mask", {static_cast<std::int64_t>(period), static_cast<std::int64_t>(cols)},
        TensorInit::kCausalMask, -1e30);
    Matrix m{RowView{mask->space, mask->base, {1, rows / period, period}, {0, 0, cols * 4}}, cols,
             kF32};
    p.inputs.push_back(tile_input(m));
  }
  p.out_bytes_per_row = cols * dtype_bytes(out.dtype);
  p.store = tile_store(as_matrix(out));
  p.scratch_bytes_per_row = 2 * cols * 4 + 2 * 4;
  const DType xt = x.dtype, ot = out.dtype;
  p.compute = [=](Emitter& e, const RowTile& t, const std::vector<Address>& in, Address o,
                  Address scratch) {
    const auto r = u32(t.rows), c = u32(cols);
    const Address s{scratch.space, scratch.addr};
    const Address wide{scratch.space, scratch.addr + t.rows * cols * 4};
    const Address m{scratch.space, wide.addr + t.rows * cols * 4};
    const Address sum{scratch.space, m.addr + t.rows * 4};
    const VectorOperand S = dense(s, cols, kF32), W = dense(wide, cols, kF32);
    const VectorOperand M{m, 4}, Z{sum, 4};
    const VectorOperand x32 = widen(e, t.rows, cols, in[0], xt, s);
    if (causal) e.vector(VectorOp::kAdd, kF32, kF32, r, c, S, x32, dense(in[1], cols, kF32));
    const VectorOperand src = causal ? S : x32;
    e.vector(VectorOp::kReduceMax, kF32, kF32, r, c, M, src);
    e.vector(VectorOp::kBroadcast, kF32, kF32, r, c, W, M);
    e.vector(VectorOp::kSub, kF32, kF32, r, c, S, src, W);
    e.vector(VectorOp::kExp, kF32, kF32, r, c, S, S);
    e.vector(VectorOp::kReduceSum, kF32, kF32, r, c, Z, S);
    e.vector(VectorOp::kReciprocal, kF32, kF32, r, 1, Z, Z);
    e.vector(VectorOp::kBroadcast, kF32, kF32, r, c, W, Z);
    const VectorOperand F = result(o, s, cols, ot);
    e.vector(VectorOp::kMul, kF32, kF32, r, c, F, S, W);
    narrow(e, t.rows, cols, F, o, ot);
  };
  p.description = causal ? "max, exp, sum, scale per row in fp32, causal mask added"
                         : "max, exp, sum, scale per row in fp32";
  emit_row_pipeline(ctx, p, uniform_tiles(rows, choose_tile_rows(ctx, p, rows, vmem.used(), 8)),
                    vmem);
}

void lower_layernorm(OpContext& ctx) {
  const TensorPlacement& x = *ctx.inputs[0];
  const TensorPlacement& out = *ctx.output;
  const std::uint64_t cols = static_cast<std::uint64_t>(x.shape.back());
  const std::uint64_t rows = rows_of(x);
  OnChip vmem = ctx.vmem();
  const Resident gamma = resident(vmem, ctx.inputs[1], cols);
  const Resident beta = resident(vmem, ctx.inputs[2], cols);
  const Resident inv_d = resident(
      vmem, ctx.constant(ctx.op.name + ".inv_d", {1, 1}, TensorInit::kConstant, 1.0 / double(cols)),
      1);
  const Resident eps = resident(
      vmem, ctx.constant(ctx.op.name + ".eps", {1, 1}, TensorInit::kConstant, ctx.op.attrs.epsilon),
      1);
  RowPipeline p;
  p.inputs.push_back(tile_input(as_matrix(x)));
  p.out_bytes_per_row = cols * dtype_bytes(out.dtype);
  p.store = tile_store(as_matrix(out));
  p.scratch_bytes_per_row = 2 * cols * 4 + 2 * 4;
  p.preloads = {gamma.preload, beta.preload, inv_d.preload, eps.preload};
  p.after_preload = [=](Emitter& e) {
    widen_resident(e, gamma);
    widen_resident(e, beta);
  };
  const DType xt = x.dtype, ot = out.dtype;
  p.compute = [=](Emitter& e, const RowTile& t, const std::vector<Address>& in, Address o,
                  Address scratch) {
    const auto r = u32(t.rows), c = u32(cols);
    const Address s{scratch.space, scratch.addr};
    const Address wide{scratch.space, scratch.addr + t.rows * cols * 4};
    const Address mean{scratch.space, wide.addr + t.rows * cols * 4};
    const Address var{scratch.space, mean.addr + t.rows * 4};
    const VectorOperand S = dense(s, cols, kF32), W = dense(wide, cols, kF32);
    const VectorOperand MEAN{mean, 4}, VAR{var, 4};
    const VectorOperand x32 = widen(e, t.rows, cols, in[0], xt, s);
    e.vector(VectorOp::kReduceSum, kF32, kF32, r, c, MEAN, x32);
    e.vector(VectorOp::kMul, kF32, kF32, r, 1, MEAN, MEAN, {inv_d.wide, 0});
    e.vector(VectorOp::kBroadcast, kF32, kF32, r, c, W, MEAN);
    e.vector(VectorOp::kSub, kF32, kF32, r, c, S, x32, W);
    e.vector(VectorOp::kMul, kF32, kF32, r, c, W, S, S);
    e.vector(VectorOp::kReduceSum, kF32, kF32, r, c, VAR, W);
    e.vector(VectorOp::kMul, kF32, kF32, r, 1, VAR, VAR, {inv_d.wide, 0});
    e.vector(VectorOp::kAdd, kF32, kF32, r, 1, VAR, VAR, {eps.wide, 0});
    e.vector(VectorOp::kRsqrt, kF32, kF32, r, 1, VAR, VAR);
    e.vector(VectorOp::kBroadcast, kF32, kF32, r, c, W, VAR);
    e.vector(VectorOp::kMul, kF32, kF32, r, c, S, S, W);
    e.vector(VectorOp::kMul, kF32, kF32, r, c, S, S, {gamma.wide, 0});
    const VectorOperand F = result(o, s, cols, ot);
    e.vector(VectorOp::kAdd, kF32, kF32, r, c, F, S, {beta.wide, 0});
    narrow(e, t.rows, cols, F, o, ot);
  };
  p.description = "mean, variance, normalise, scale and shift per row in fp32";
  emit_row_pipeline(ctx, p, uniform_tiles(rows, choose_tile_rows(ctx, p, rows, vmem.used(), 8)),
                    vmem);
}

}  // namespace tpusim::isa::lower_detail
