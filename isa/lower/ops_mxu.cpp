// matmul and conv2d as GEMM problems: how each operand's tiles are found in HBM.

#include <functional>
#include <sstream>
#include <vector>

#include "isa/lower/lower_impl.h"

namespace tpusim::isa::lower_detail {

namespace {

std::uint64_t u(std::int64_t v) { return static_cast<std::uint64_t>(v); }

void require_mxu_dtype(const OpContext& ctx, const TensorPlacement& t) {
  if (t.dtype != ctx.mxu_dtype)
    ctx.fail("operand '" + t.name + "' is " + std::string(dtype_name(t.dtype)) +
             " but the MXU runs " + std::string(dtype_name(ctx.mxu_dtype)));
}

// Where matrix `batch` (over the leading dimensions) of a matmul operand starts; a tensor of one
// matrix repeats it (dense_step 0). A tensor stored with a halo (an NHWC image a padded window
// operator reads) has padded H and W, so its matrices are not dense blocks: they are found through
// its storage. Rows inside a matrix stay one last dimension apart, which the halo does not pad.
std::uint64_t matrix_base(const TensorPlacement& t, std::uint64_t batch, std::uint64_t dense_step) {
  if (t.storage == t.shape) return t.base + batch * dense_step;
  std::vector<std::int64_t> index(t.shape.size(), 0);
  for (std::size_t d = t.shape.size() - 2; d-- > 0;) {
    index[d] = static_cast<std::int64_t>(batch % u(t.shape[d]));
    batch /= u(t.shape[d]);
  }
  return t.address_of(index);
}

// Maps an output batch (row-major over the output's batch dimensions) to the batch of an operand
// whose batch dimensions broadcast against them: right-aligned, a dimension of 1 repeats.
std::function<std::uint64_t(std::uint64_t)> operand_batch(const workloads::Shape& out,
                                                          const workloads::Shape& operand) {
  const std::size_t ro = out.size() - 2, rt = operand.size() - 2;
  return [=](std::uint64_t batch) {
    std::uint64_t index = 0, scale = 1;
    for (std::size_t d = 0; d < ro; ++d) {
      const std::size_t od = ro - 1 - d;  // innermost output batch dimension first
      const std::uint64_t coord = batch % u(out[od]);
      batch /= u(out[od]);
      if (d >= rt) continue;
      const std::uint64_t size = u(operand[rt - 1 - d]);
      if (size > 1) index += coord * scale;
      scale *= size;
    }
    return index;
  };
}

}  // namespace

void lower_matmul(OpContext& ctx) {
  const TensorPlacement& a = *ctx.inputs[0];
  const TensorPlacement& b = *ctx.inputs[1];
  const TensorPlacement& out = *ctx.output;
  require_mxu_dtype(ctx, a);
  require_mxu_dtype(ctx, b);
  const auto& attrs = ctx.op.attrs;
  const std::size_t ra = a.shape.size(), rb = b.shape.size();
  const std::uint64_t m = u(attrs.transpose_a ? a.shape[ra - 1] : a.shape[ra - 2]);
  const std::uint64_t k = u(attrs.transpose_a ? a.shape[ra - 2] : a.shape[ra - 1]);
  const std::uint64_t n = u(attrs.transpose_b ? b.shape[rb - 2] : b.shape[rb - 1]);
  const std::uint64_t a_batch = u(product(a.shape, 0, ra - 2));
  const std::uint64_t b_batch = u(product(b.shape, 0, rb - 2));
  const std::uint64_t out_batch = u(product(out.shape, 0, out.shape.size() - 2));
  const std::uint64_t ea = dtype_bytes(a.dtype), eo = dtype_bytes(out.dtype);

  GemmProblem p;
  p.in_dtype = ctx.mxu_dtype;
  p.out_dtype = out.dtype;
  p.n = n;
  p.k = k;
  p.b_transposed = attrs.transpose_b;
  // A weight shared by every batch: the batches are just more rows of one larger product.
  const bool flatten = b_batch == 1 && !attrs.transpose_a;
  if (flatten) {
    p.batch = 1;
    p.m = a_batch * m;
  } else {
    // One product per output batch; each operand's batch dimensions broadcast (NumPy rules).
    p.batch = out_batch;
    p.m = m;
  }
  const RowView a_rows = flatten ? matrix_rows(a) : RowView{};
  const RowView out_rows = flatten ? matrix_rows(out) : RowView{};
  const std::uint64_t a_step = m * k * ea, b_step = k * n * ea;
  const auto a_of = operand_batch(out.shape, a.shape), b_of = operand_batch(out.shape, b.shape);

  p.load_a = [=](std::uint64_t batch, std::uint64_t m0, std::uint64_t mc, std::uint64_t k0,
                 std::uint64_t kc, Address tile, std::uint64_t pitch) {
    if (flatten) return row_transfers(false, a_rows, m0, mc, k0 * ea, kc * ea, tile, pitch);
    const std::uint64_t base = matrix_base(a, a_of(batch), a_step);
    if (!attrs.transpose_a) {
      const RowView rows{a.space, base, {1, 1, m}, {0, 0, k * ea}};
      return row_transfers(false, rows, m0, mc, k0 * ea, kc * ea, tile, pitch);
    }
    // Stored as [K, M]: an element-wise gather, as slow on real DMA engines as it is here.
    return std::vector<Transfer>{Transfer{false,
                                          {a.space, base + (k0 * m + m0) * ea},
                                          tile,
                                          ea,
                                          {mc, kc},
                                          {ea, m * ea},
                                          {pitch, ea}}};
  };
  p.load_b = [=](std::uint64_t batch, std::uint64_t k0, std::uint64_t kc, std::uint64_t n0,
                 std::uint64_t nc, Address tile, std::uint64_t pitch) {
    const std::uint64_t base = matrix_base(b, b_of(batch), b_step);
    if (!attrs.transpose_b)
      return row_transfers(false, RowView{b.space, base, {1, 1, k}, {0, 0, n * ea}}, k0, kc,
                           n0 * ea, nc * ea, tile, pitch);
    return row_transfers(false, RowView{b.space, base, {1, 1, n}, {0, 0, k * ea}}, n0, nc, k0 * ea,
                         kc * ea, tile, pitch);
  };
  p.store_c = [=](std::uint64_t batch, std::uint64_t m0, std::uint64_t mc, std::uint64_t n0,
                  std::uint64_t nc, Address tile, std::uint64_t pitch) {
    const RowView rows =
        flatten
            ? out_rows
            : RowView{out.space, matrix_base(out, batch, m * n * eo), {1, 1, m}, {0, 0, n * eo}};
    return row_transfers(true, rows, m0, mc, n0 * eo, nc * eo, tile, pitch);
  };
  p.a_description = attrs.transpose_a ? "element-wise transposing gather" : "dense rows";
  emit_gemm(ctx, p);
}

void lower_conv2d(OpContext& ctx) {
  const TensorPlacement& x = *ctx.inputs[0];
  const TensorPlacement& w = *ctx.inputs[1];
  const TensorPlacement& out = *ctx.output;
  const auto& at = ctx.op.attrs;
  const std::uint64_t cin = u(x.shape[3]), groups = u(at.groups);
  const std::uint64_t kh = u(w.shape[0]), kw = u(w.shape[1]), cg = u(w.shape[2]),
                      cout = u(w.shape[3]);
  // Depthwise is a vector-unit job; a one-channel plain convolution (groups 1) stays a GEMM.
  if (groups > 1 && groups == cin && cg == 1) return lower_window(ctx);
  require_mxu_dtype(ctx, x);
  require_mxu_dtype(ctx, w);
  const std::uint64_t batch = u(out.shape[0]), oh = u(out.shape[1]), ow = u(out.shape[2]);
  const std::uint64_t cog = cout / groups;
  const std::uint64_t e = dtype_bytes(x.dtype), eo = dtype_bytes(out.dtype);
  const std::vector<std::uint64_t> xs = x.strides();
  // Element [n, oh*sh + kh*dh - pt, ow*sw + kw*dw - pl, c] for output row (n, oh, ow).
  const std::uint64_t origin = x.address_of({0, -at.pad_top, -at.pad_left, 0});
  const RowView windows{
      x.space, origin, {batch, oh, ow}, {xs[0], u(at.stride_h) * xs[1], u(at.stride_w) * xs[2]}};
  const RowView out_rows = matrix_rows(out);

  GemmProblem p;
  p.batch = groups;
  p.m = batch * oh * ow;
  p.n = cog;
  p.k = kh * kw * cg;
  p.in_dtype = ctx.mxu_dtype;
  p.out_dtype = out.dtype;
  p.load_a = [=](std::uint64_t g, std::uint64_t m0, std::uint64_t mc, std::uint64_t k0,
                 std::uint64_t kc, Address tile, std::uint64_t pitch) {
    // Column k of the im2col matrix is (kernel row, kernel column, channel); runs of columns that
    // are adjacent in the image (whole channel vectors of neighbouring kernel columns) are one
    // segment, so a 3x3 kernel over all channels is three gathers, one per kernel row.
    auto offset = [&](std::uint64_t col) {
      const std::uint64_t r = col / (kw * cg), c = (col / cg) % kw, ch = col % cg;
      return r * u(at.dilation_h) * xs[1] + c * u(at.dilation_w) * xs[2] + (g * cg + ch) * e;
    };
    std::vector<Transfer> xfers;
    std::uint64_t seg = k0;
    while (seg < k0 + kc) {
      std::uint64_t end = seg + 1;
      while (end < k0 + kc && offset(end) == offset(end - 1) + e) ++end;
      RowView view = windows;
      view.base += offset(seg);
      const Address at_col{tile.space, tile.addr + (seg - k0) * e};
      for (Transfer& t : row_transfers(false, view, m0, mc, 0, (end - seg) * e, at_col, pitch))
        xfers.push_back(std::move(t));
      seg = end;
    }
    return xfers;
  };
  p.load_b = [=](std::uint64_t g, std::uint64_t k0, std::uint64_t kc, std::uint64_t n0,
                 std::uint64_t nc, Address tile, std::uint64_t pitch) {
    return row_transfers(false, RowView{w.space, w.base, {1, 1, kh * kw * cg}, {0, 0, cout * e}},
                         k0, kc, (g * cog + n0) * e, nc * e, tile, pitch);
  };
  p.store_c = [=](std::uint64_t g, std::uint64_t m0, std::uint64_t mc, std::uint64_t n0,
                  std::uint64_t nc, Address tile, std::uint64_t pitch) {
    return row_transfers(true, out_rows, m0, mc, (g * cog + n0) * eo, nc * eo, tile, pitch);
  };
  p.bias_column = [=](std::uint64_t g) { return g * cog; };
  std::ostringstream what;
  // A window wider than one pixel would read each input kh x kw times through an im2col gather;
  // a band of stored rows is read once and its taps are views of it.
  if (groups == 1 && kh * kw > 1) {
    ConvBand b;
    b.oh = oh;
    b.ow = ow;
    b.kh = kh;
    b.kw = kw;
    b.channels = cin;
    b.sh = u(at.stride_h);
    b.sw = u(at.stride_w);
    b.dh = u(at.dilation_h);
    b.dw = u(at.dilation_w);
    b.pt = at.pad_top;
    b.pl = at.pad_left;
    b.row_bytes = xs[1];
    b.pixel_bytes = xs[2];
    b.elem = e;
    b.space = x.space;
    const std::int64_t left = -x.origin[2];  // logical column of storage column 0
    b.row_start = [x, left](std::uint64_t n, std::int64_t ih) {
      return x.address_of({static_cast<std::int64_t>(n), ih, left, 0});
    };
    b.col_offset = [xs, left](std::int64_t iw) {
      return static_cast<std::uint64_t>(iw - left) * xs[2];
    };
    std::ostringstream band_what;
    band_what << "input band in vmem (stored rows read once), " << kh << "x" << kw
              << " taps as shifted views, stride " << at.stride_h << "x" << at.stride_w;
    b.description = band_what.str();
    p.band = b;
  }
  // Kernel rows of whole pixels are contiguous when the dilation is 1 and a pixel is all one
  // group's channels; otherwise each tap's channels are a run.
  p.a_run_elements =
      u(at.dilation_w) == 1 && groups == 1 && xs[2] == cin * e ? kw * cg : cg;
  what << "im2col gather, " << kh << "x" << kw << " window, stride " << at.stride_h << "x"
       << at.stride_w;
  if (groups > 1) what << ", " << groups << " groups";
  p.a_description = what.str();
  emit_gemm(ctx, p);
}

}  // namespace tpusim::isa::lower_detail
