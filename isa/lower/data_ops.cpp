// Data movement: transpose, concat and reshape copies, and embedding gathers. Each goes
// HBM -> vmem -> (vector move) -> HBM, so its traffic and time are those of a real copy.

#include <algorithm>

#include "isa/lower/row_pipeline.h"

namespace tpusim::isa::lower_detail {

using workloads::OpKind;

namespace {

std::uint64_t u(std::int64_t v) { return static_cast<std::uint64_t>(v); }

// Output rows gathered from a source whose elements along the output's last dimension are
// `col_stride` bytes apart: a strided run becomes one more (innermost) DMA dimension.
std::vector<Transfer> gather_rows(const RowView& src, std::uint64_t first, std::uint64_t rows,
                                  std::uint64_t cols, std::uint64_t col_stride, std::uint64_t e,
                                  Address slot) {
  const std::uint64_t row_bytes = cols * e;
  std::vector<Transfer> xfers =
      row_transfers(false, src, first, rows, 0, row_bytes, slot, row_bytes);
  if (col_stride == e) return xfers;
  for (Transfer& t : xfers) {
    t.elem = e;
    t.count.push_back(cols);
    t.src_stride.push_back(col_stride);
    t.dst_stride.push_back(e);
  }
  return xfers;
}

using ColumnIo = std::function<std::vector<Transfer>(const RowTile&, Address, std::uint64_t col0,
                                                     std::uint64_t cols)>;

// Copies rows through vmem in blocks of columns narrow enough that eight rows fit twice over
// (a KV-cache concat has rows of megabytes).
void copy_pipeline(OpContext& ctx, std::uint64_t rows, std::uint64_t cols, DType dtype,
                   ColumnIo load, ColumnIo store, const std::string& description) {
  const std::uint64_t e = dtype_bytes(dtype);
  const std::uint64_t budget = ctx.chip.core.vmem.capacity.value() / 2;
  const std::uint64_t block = std::max<std::uint64_t>(1, std::min(cols, budget / (4 * 8 * e)));
  for (std::uint64_t col0 = 0; col0 < cols; col0 += block) {
    const std::uint64_t width = std::min(block, cols - col0);
    const std::uint64_t row_bytes = width * e;
    OnChip vmem = ctx.vmem();
    RowPipeline p;
    p.inputs.push_back(RowInput{
        row_bytes, [=](const RowTile& t, Address slot) { return load(t, slot, col0, width); }});
    p.out_bytes_per_row = row_bytes;
    p.store = [=](const RowTile& t, Address slot) { return store(t, slot, col0, width); };
    p.compute = [=](Emitter& em, const RowTile& t, const std::vector<Address>& in, Address o,
                    Address) {
      em.vector(VectorOp::kMove, dtype, dtype, u32(t.rows), u32(width), {o, u32(row_bytes)},
                {in[0], u32(row_bytes)});
    };
    p.description =
        description +
        (width < cols ? " (" + std::to_string(ceil_div(cols, block)) + " column blocks)" : "");
    emit_row_pipeline(ctx, p, uniform_tiles(rows, choose_tile_rows(ctx, p, rows, vmem.used(), 8)),
                      vmem);
  }
}

}  // namespace

void lower_copy(OpContext& ctx) {
  const TensorPlacement& out = *ctx.output;
  const std::uint64_t e = dtype_bytes(out.dtype);
  const std::size_t rank = out.shape.size();
  const std::uint64_t cols = last_dim(out.shape);
  const std::uint64_t rows = u(product(out.shape, 0, rank - 1));
  const RowView out_rows = matrix_rows(out);
  // Stores columns [base + c0, base + c0 + n) of the output's rows.
  auto store_cols = [=](std::uint64_t base) -> ColumnIo {
    return [=](const RowTile& t, Address slot, std::uint64_t c0, std::uint64_t n) {
      return row_transfers(true, out_rows, t.first, t.rows, (base + c0) * e, n * e, slot, n * e);
    };
  };

  if (ctx.op.kind == OpKind::kTranspose) {
    const TensorPlacement& x = *ctx.inputs[0];
    if (rank > 4 || x.storage != x.shape)
      ctx.unsupported("transpose of a padded tensor or of rank > 4");
    const std::vector<std::uint64_t> xs = x.strides();
    const auto& perm = ctx.op.attrs.perm;
    // Output row (i0, i1, i2) reads input element sum(i_k * stride[perm[k]]).
    RowView src{x.space, x.base, {1, 1, 1}, {0, 0, 0}};
    for (std::size_t k = 0; k + 1 < rank; ++k) {
      const std::size_t slot = 3 - (rank - 1) + k;
      src.size[slot] = u(out.shape[k]);
      src.stride[slot] = xs[u(perm[k])];
    }
    const std::uint64_t col_stride = xs[u(perm[rank - 1])];
    copy_pipeline(
        ctx, rows, cols, out.dtype,
        [=](const RowTile& t, Address slot, std::uint64_t c0, std::uint64_t n) {
          RowView from = src;
          from.base += c0 * col_stride;
          return gather_rows(from, t.first, t.rows, n, col_stride, e, slot);
        },
        store_cols(0),
        col_stride == e ? "rows gathered by strided DMA"
                        : "element-wise gather (the last axis moves)");
    return;
  }
  if (ctx.op.kind == OpKind::kConcat) {
    const std::int64_t axis =
        ctx.op.attrs.axis < 0 ? ctx.op.attrs.axis + std::int64_t(rank) : ctx.op.attrs.axis;
    const std::uint64_t inner = u(product(out.shape, u(axis) + 1, rank));
    std::uint64_t col0 = 0;
    for (const TensorPlacement* in : ctx.inputs) {
      const std::uint64_t width = u(in->shape[u(axis)]) * inner;  // elements per outer row
      if (u(axis) + 1 == rank) {
        const RowView src = matrix_rows(*in);
        copy_pipeline(
            ctx, rows, width, out.dtype,
            [=](const RowTile& t, Address slot, std::uint64_t c0, std::uint64_t n) {
              return row_transfers(false, src, t.first, t.rows, c0 * e, n * e, slot, n * e);
            },
            store_cols(col0), "copy into a column slice of the output");
      } else {
        if (in->storage != in->shape || out.storage != out.shape)
          ctx.unsupported("concat of padded tensors other than along the last axis");
        const std::uint64_t outer = u(product(out.shape, 0, u(axis)));
        const std::uint64_t out_width = u(out.shape[u(axis)]) * inner;
        const RowView src{in->space, in->base, {1, 1, outer}, {0, 0, width * e}};
        const RowView dst{out.space, out.base, {1, 1, outer}, {0, 0, out_width * e}};
        copy_pipeline(
            ctx, outer, width, out.dtype,
            [=](const RowTile& t, Address slot, std::uint64_t c0, std::uint64_t n) {
              return row_transfers(false, src, t.first, t.rows, c0 * e, n * e, slot, n * e);
            },
            [=](const RowTile& t, Address slot, std::uint64_t c0, std::uint64_t n) {
              return row_transfers(true, dst, t.first, t.rows, (col0 + c0) * e, n * e, slot, n * e);
            },
            "copy into a slice of the output");
      }
      col0 += width;
    }
    return;
  }
  // A reshape that cannot share bytes: input or output has a halo. Both have the same last
  // dimension in every case the layout lets through, so rows map one to one.
  const TensorPlacement& x = *ctx.inputs[0];
  if (last_dim(x.shape) != cols)
    ctx.unsupported("reshape of a padded tensor that changes its last dimension");
  const RowView src = matrix_rows(x);
  copy_pipeline(
      ctx, rows, cols, out.dtype,
      [=](const RowTile& t, Address slot, std::uint64_t c0, std::uint64_t n) {
        return row_transfers(false, src, t.first, t.rows, c0 * e, n * e, slot, n * e);
      },
      store_cols(0), "copy between padded and dense layouts");
}

void lower_embedding(OpContext& ctx, const std::vector<std::int64_t>* indices) {
  const TensorPlacement& table = *ctx.inputs[0];
  const TensorPlacement& out = *ctx.output;
  const std::uint64_t vocab = u(table.shape[0]), dim = u(table.shape[1]);
  const std::uint64_t rows = u(ctx.inputs[1]->shape.empty()
                                   ? 1
                                   : product(ctx.inputs[1]->shape, 0, ctx.inputs[1]->shape.size()));
  const std::uint64_t e = dtype_bytes(table.dtype);
  std::vector<std::uint64_t> row_of(rows);
  for (std::uint64_t i = 0; i < rows; ++i) {
    if (indices) {
      const std::int64_t v = (*indices)[i];
      if (v < 0 || u(v) >= vocab)
        ctx.fail("index " + std::to_string(v) + " at position " + std::to_string(i) +
                 " is outside the table of " + std::to_string(vocab) + " rows");
      row_of[i] = u(v);
    } else {
      row_of[i] =
          (i * 2654435761u) % vocab;  // spread over the table: no two neighbours share a DRAM row
    }
  }
  const RowView out_rows = matrix_rows(out);
  copy_pipeline(
      ctx, rows, dim, out.dtype,
      [=](const RowTile& t, Address slot, std::uint64_t c0, std::uint64_t n) {
        std::vector<Transfer> xfers;
        for (std::uint64_t i = 0; i < t.rows; ++i)
          xfers.push_back(Transfer{false,
                                   {table.space, table.base + (row_of[t.first + i] * dim + c0) * e},
                                   {slot.space, slot.addr + i * n * e},
                                   n * e,
                                   {1},
                                   {0},
                                   {0}});
        return xfers;
      },
      [=](const RowTile& t, Address slot, std::uint64_t c0, std::uint64_t n) {
        return row_transfers(true, out_rows, t.first, t.rows, c0 * e, n * e, slot, n * e);
      },
      indices ? "one row gather per index (indices resolved when compiling)"
              : "one row gather per index (indices unknown when compiling: spread over the table)");
}

}  // namespace tpusim::isa::lower_detail
