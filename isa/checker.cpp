#include "isa/checker.h"

#include <map>
#include <string>

#include "isa/checker_sync.h"
#include "isa/text_util.h"

namespace tpusim::isa {
namespace {

using u128 = unsigned __int128;

std::string hex128(u128 v) {
  if (v <= ~std::uint64_t{0}) return number_text(static_cast<std::uint64_t>(v));
  return "beyond 2^64";
}

const char* capacity_key(Space s) {
  switch (s) {
    case Space::kHbm:
      return "memory.capacity";
    case Space::kVmem:
      return "core.vmem.capacity";
    case Space::kAccmem:
      return "core.accmem.capacity";
    case Space::kCmem:
      return "core.cmem.capacity";
  }
  return "?";
}

std::uint64_t capacity(const ChipSpec& c, Space s) {
  switch (s) {
    case Space::kHbm:
      return c.memory.capacity.value();
    case Space::kVmem:
      return c.core.vmem.capacity.value();
    case Space::kAccmem:
      return c.core.accmem.capacity.value();
    case Space::kCmem:
      return c.core.cmem.capacity.value();
  }
  return 0;
}

// Bytes spanned by `rows` rows of `row_bytes` each, `stride` bytes apart (0 when empty).
u128 rows_extent(std::uint64_t rows, u128 row_bytes, std::uint64_t stride) {
  if (rows == 0 || row_bytes == 0) return 0;
  return u128{rows - 1} * stride + row_bytes;
}

u128 dma_extent(const DmaInstr& d, const std::array<std::uint32_t, kMaxDmaDims>& stride) {
  u128 e = d.elem_bytes;
  for (std::size_t i = 0; i < d.dims; ++i) {
    if (d.count[i] == 0) return 0;
    e += u128{d.count[i] - 1u} * stride[i];
  }
  return d.elem_bytes == 0 ? 0 : e;
}

class Checker {
 public:
  Checker(const Program& p, const ChipSpec& c) : p_(p), c_(c) {}

  void run() {
    check_regions();
    for (std::size_t i = 0; i < p_.instructions.size(); ++i) check_instruction(i);
    check_sync(p_, c_);
  }

 private:
  [[noreturn]] void fail(std::size_t i, const std::string& why) const {
    throw instruction_error(p_, i, why);
  }

  void check_regions() const {
    for (std::size_t r = 0; r < p_.regions.size(); ++r) {
      const Region& g = p_.regions[r];
      std::uint64_t cap = capacity(c_, g.space);
      u128 end = u128{g.base} + g.size;
      if (end <= cap) continue;
      SourceLocation where{p_.file_name, static_cast<int>(g.line), g.line ? 1 : 0};
      std::string who = g.line ? "region " + g.name
                               : "region table entry " + std::to_string(r) + " (" + g.name + ")";
      throw AsmError(where, who + ": " + std::string(space_name(g.space)) + " bytes " +
                                number_text(g.base) + ".." + hex128(end - 1) + " exceed " +
                                capacity_key(g.space) + " (" + number_text(cap) + " bytes)");
    }
  }

  void range(std::size_t i, const std::string& what, const Address& a, u128 extent) const {
    if (extent == 0) return;
    std::uint64_t cap = capacity(c_, a.space);
    if (a.space == Space::kCmem && cap == 0)
      fail(i, what + ": this chip has no cmem (no core.cmem section)");
    u128 end = u128{a.addr} + extent;
    if (end > cap) {
      fail(i, what + ": touches " + std::string(space_name(a.space)) + " bytes " +
                  number_text(a.addr) + ".." + hex128(end - 1) + ", beyond " +
                  capacity_key(a.space) + " (" + number_text(cap) + " bytes)");
    }
  }

  void positive(std::size_t i, const char* what, std::uint64_t v) const {
    if (v == 0) fail(i, std::string(what) + " must be at least 1");
  }

  // A destination whose rows would overlap is almost surely a bug, so it is rejected.
  void dst_rows(std::size_t i, const char* key, std::uint64_t rows, u128 row_bytes,
                std::uint32_t stride) const {
    if (rows > 1 && stride < row_bytes)
      fail(i, std::string(key) + " " + std::to_string(stride) + " is less than one row (" +
                  hex128(row_bytes) + " bytes): the rows written would overlap");
  }

  void mxu_index(std::size_t i, std::uint8_t mxu) const {
    if (mxu >= c_.core.mxu.count)
      fail(i, "mxu" + std::to_string(mxu) + " does not exist (core.mxu.count is " +
                  std::to_string(c_.core.mxu.count) + ")");
  }

  void mxu_shape(std::size_t i, DType t, std::uint32_t k, std::uint32_t n) const {
    if (!mxu_precision(c_.core.mxu, t)) {
      std::string have;
      for (auto& [d, rate] : c_.core.mxu.precisions)
        have += (have.empty() ? "" : ", ") + std::string(dtype_name(d));
      for (auto& [from, to] : c_.core.mxu.rounding)
        have += ", " + std::string(dtype_name(from)) + " (rounded to " +
                std::string(dtype_name(to)) + ")";
      fail(i, "dtype " + std::string(dtype_name(t)) +
                  " is not supported by the MXU (core.mxu.precisions: " + have + ")");
    }
    positive(i, "k", k);
    positive(i, "n", n);
    // The stationary operand must fit the array; the streamed one is as long as it likes:
    // ws holds W (K x N), os holds the outputs (N on columns, K streams), is holds the inputs
    // (K on rows, the N weight columns stream).
    const Dataflow flow = c_.core.mxu.dataflow;
    if (k > c_.core.mxu.rows && flow != Dataflow::kOutputStationary)
      fail(i, "k=" + std::to_string(k) + " exceeds the MXU rows (core.mxu.rows is " +
                  std::to_string(c_.core.mxu.rows) + ")");
    if (n > c_.core.mxu.cols && flow != Dataflow::kInputStationary)
      fail(i, "n=" + std::to_string(n) + " exceeds the MXU columns (core.mxu.cols is " +
                  std::to_string(c_.core.mxu.cols) + ")");
  }

  void check_dma(std::size_t i, const DmaInstr& d) const {
    if (d.engine >= c_.core.dma.engines)
      fail(i, "dma" + std::to_string(d.engine) + " does not exist (core.dma.engines is " +
                  std::to_string(c_.core.dma.engines) + ")");
    positive(i, "elem", d.elem_bytes);
    for (std::size_t k = 0; k < d.dims; ++k) positive(i, "every count", d.count[k]);
    range(i, "src", d.src, dma_extent(d, d.src_stride));
    range(i, "dst", d.dst, dma_extent(d, d.dst_stride));
    dma_dst_disjoint(i, d);
    // A copy within one memory that reads what it writes would depend on the order the engine
    // moves its chunks in (and so on core.dma.chunk): refused, by the spans each side covers.
    if (d.src.space == d.dst.space) {
      const u128 src_end = u128{d.src.addr} + dma_extent(d, d.src_stride);
      const u128 dst_end = u128{d.dst.addr} + dma_extent(d, d.dst_stride);
      if (d.src.addr < dst_end && d.dst.addr < src_end)
        fail(i, "src and dst overlap in " + std::string(space_name(d.src.space)) +
                    ": a copy must not read what it writes");
    }
  }

  // Rule 5 for DMA: the runs written never overlap. Taken from the smallest stride up, each
  // dimension that repeats must step past everything the dimensions inside it cover. (This also
  // bounds a transfer by its destination's capacity: a zero-stride destination repeated 2^64
  // times is refused, not simulated for ever.)
  void dma_dst_disjoint(std::size_t i, const DmaInstr& d) const {
    const std::size_t dims = std::min<std::size_t>(d.dims, kMaxDmaDims);
    std::array<std::size_t, kMaxDmaDims> order{};
    for (std::size_t k = 0; k < dims; ++k) {  // insertion sort by stride: at most four
      std::size_t j = k;
      for (; j > 0 && d.dst_stride[order[j - 1]] > d.dst_stride[k]; --j) order[j] = order[j - 1];
      order[j] = k;
    }
    u128 covered = d.elem_bytes;
    for (std::size_t j = 0; j < dims; ++j) {
      const std::size_t k = order[j];
      if (d.count[k] <= 1) continue;
      if (d.dst_stride[k] < covered)
        fail(i, "dst_stride[" + std::to_string(k) + "] " + std::to_string(d.dst_stride[k]) +
                    " is less than the " + hex128(covered) +
                    " bytes its inner dimensions write: the runs written would overlap");
      covered += u128{d.count[k] - 1u} * d.dst_stride[k];
    }
  }

  void check_lw(std::size_t i, const Instruction& inst, const MxuLoadWeights& w) {
    mxu_index(i, w.mxu);
    mxu_shape(i, w.dtype, w.k, w.n);
    std::uint64_t rows = w.transpose ? w.n : w.k;
    u128 row_bytes = u128{w.transpose ? w.k : w.n} * dtype_bytes(w.dtype);
    range(i, "src", w.src, rows_extent(rows, row_bytes, w.src_stride));
    // Rows read again (a stride below a row) make a tile larger than the bytes it reads. Only
    // the streamed side of os and is is unbounded by the array; it must still fit the memory
    // it streams from.
    const u128 tile_bytes = rows * row_bytes;
    if (tile_bytes > capacity(c_, w.src.space))
      fail(i, "the tile it stages (k=" + std::to_string(w.k) + " x n=" + std::to_string(w.n) +
                  ", " + hex128(tile_bytes) + " bytes) does not fit the memory it is read from (" +
                  capacity_key(w.src.space) + " " + number_text(capacity(c_, w.src.space)) +
                  " bytes)");
    Tiles& t = tiles_[{inst.core, w.mxu}];
    // The shadow buffer holds one staged tile until a matmul switches to it.
    if (t.staged != kNone && c_.core.mxu.weight_double_buffer)
      fail(i, "mxu" + std::to_string(w.mxu) + " still holds the tile staged at " +
                  instruction_place(p_, t.staged) +
                  ", which no matmul has switched to (a matmul without keep must come between)");
    t.staged = i;
  }

  // A matmul switches to the tile staged by the last mxu.lw, unless it says `keep`.
  void check_mm(std::size_t i, const Instruction& inst, const MxuMatmul& m) {
    mxu_index(i, m.mxu);
    mxu_shape(i, m.dtype, m.k, m.n);
    positive(i, "m", m.m);
    Tiles& t = tiles_[{inst.core, m.mxu}];
    if (m.keep && t.staged != kNone && !c_.core.mxu.weight_double_buffer)
      fail(i, "keep needs core.mxu.weight_double_buffer: with one weight buffer the mxu.lw at " +
                  instruction_place(p_, t.staged) + " loads into the tile matmuls use");
    if (m.keep && t.active == kNone && t.staged != kNone)
      fail(i, "keep, but no tile is in use on mxu" + std::to_string(m.mxu) +
                  " yet (the mxu.lw at " + instruction_place(p_, t.staged) +
                  " is staged; a matmul without keep switches to it)");
    if (!m.keep && t.staged != kNone) {
      t.active = t.staged;
      t.staged = kNone;
    }
    if (t.active == kNone)
      fail(i, "no mxu.lw loads weights into mxu" + std::to_string(m.mxu) + " of core " +
                  std::to_string(inst.core) + " before this matmul");
    const auto& w = std::get<MxuLoadWeights>(p_.instructions[t.active].body);
    if (w.k != m.k || w.n != m.n || w.dtype != m.dtype) {
      fail(i, "k=" + std::to_string(m.k) + " n=" + std::to_string(m.n) + " dtype=" +
                  std::string(dtype_name(m.dtype)) + " do not match the weights loaded at " +
                  instruction_place(p_, t.active) + " (k=" + std::to_string(w.k) +
                  " n=" + std::to_string(w.n) + " dtype=" + std::string(dtype_name(w.dtype)) + ")");
    }
    u128 out_row = u128{m.n} * dtype_bytes(accumulator_dtype(m.dtype));
    dst_rows(i, "dst_stride", m.m, out_row, m.dst_stride);
    range(i, "src", m.src, rows_extent(m.m, u128{m.k} * dtype_bytes(m.dtype), m.src_stride));
    range(i, "dst", m.dst, rows_extent(m.m, out_row, m.dst_stride));
  }

  void check_vector_types(std::size_t i, const VectorInstr& v) const {
    auto name = [](DType t) { return std::string(dtype_name(t)); };
    switch (v.op) {
      case VectorOp::kGelu:
      case VectorOp::kExp:
      case VectorOp::kRsqrt:
      case VectorOp::kReciprocal:
        if (dtype_is_integer(v.dtype))
          fail(i, "needs a floating dtype (bf16, fp32, fp8), not " + name(v.dtype));
        break;
      case VectorOp::kRequantize:
        if (v.src_dtype != DType::kInt32 && v.src_dtype != DType::kFp32)
          fail(i, "from= must be int32 or fp32, not " + name(v.src_dtype));
        if (v.dtype != DType::kInt8 && v.dtype != DType::kInt16 && v.dtype != DType::kFp8)
          fail(i, "dtype must be int8, int16 or fp8, not " + name(v.dtype));
        if (!(v.scale > 0.0f)) fail(i, "scale must be positive");
        break;
      case VectorOp::kReduceSum:
        if (v.dtype != v.src_dtype && v.dtype != accumulator_dtype(v.src_dtype)) {
          const DType acc = accumulator_dtype(v.src_dtype);
          fail(i, "sums " + name(v.src_dtype) + " into " + name(v.src_dtype) +
                      (acc == v.src_dtype ? "" : " or " + name(acc)) + ", not " + name(v.dtype));
        }
        break;
      default:
        break;
    }
  }

  void check_vector(std::size_t i, const VectorInstr& v) const {
    check_vector_types(i, v);
    positive(i, "rows", v.rows);
    positive(i, "cols", v.cols);
    u128 dst_row = u128{v.dst_cols()} * dtype_bytes(v.dtype);
    dst_rows(i, "dst_stride", v.rows, dst_row, v.dst.stride);
    range(i, "dst", v.dst.addr, rows_extent(v.rows, dst_row, v.dst.stride));
    range(i, "a", v.a.addr,
          rows_extent(v.rows, u128{v.a_cols()} * dtype_bytes(v.src_dtype), v.a.stride));
    if (vector_arity(v.op) == VectorArity::kBinary)
      range(i, "b", v.b.addr,
            rows_extent(v.rows, u128{v.cols} * dtype_bytes(v.src_dtype), v.b.stride));
  }

  void check_unit(std::size_t i, const Unit& u) const {
    if (u.kind == UnitKind::kDma && u.index >= c_.core.dma.engines)
      fail(i, unit_name(u) + " does not exist (core.dma.engines is " +
                  std::to_string(c_.core.dma.engines) + ")");
    if (u.kind == UnitKind::kMxu) mxu_index(i, u.index);
  }

  void check_sem(std::size_t i, std::uint16_t sem) const {
    if (sem >= c_.core.sequencer.semaphores)
      fail(i, "s" + std::to_string(sem) + " does not exist (core.sequencer.semaphores is " +
                  std::to_string(c_.core.sequencer.semaphores) + ")");
  }

  void check_instruction(std::size_t i) {
    const Instruction& inst = p_.instructions[i];
    std::string why = structural_error(inst);
    if (!why.empty()) fail(i, why);
    if (inst.core >= c_.cores)
      fail(i, "core " + std::to_string(inst.core) + " does not exist (cores is " +
                  std::to_string(c_.cores) + ")");
    if (inst.op >= p_.ops.size())
      fail(i, "operator id " + std::to_string(inst.op) + " is not in the operator table (" +
                  std::to_string(p_.ops.size()) + " entries)");
    auto halted = halt_.find(inst.core);
    if (halted != halt_.end())
      fail(i, "core " + std::to_string(inst.core) + " already halted at " +
                  instruction_place(p_, halted->second));
    if (auto* d = std::get_if<DmaInstr>(&inst.body)) check_dma(i, *d);
    if (auto* w = std::get_if<MxuLoadWeights>(&inst.body)) check_lw(i, inst, *w);
    if (auto* m = std::get_if<MxuMatmul>(&inst.body)) check_mm(i, inst, *m);
    if (auto* v = std::get_if<VectorInstr>(&inst.body)) check_vector(i, *v);
    if (auto* s = std::get_if<SemSignal>(&inst.body)) {
      check_unit(i, s->unit);
      check_sem(i, s->sem);
    }
    if (auto* s = std::get_if<SemWait>(&inst.body)) {
      check_unit(i, s->unit);
      check_sem(i, s->sem);
      positive(i, "count", s->count);
    }
    if (std::holds_alternative<Halt>(inst.body)) halt_[inst.core] = i;
  }

  const Program& p_;
  const ChipSpec& c_;
  static constexpr std::size_t kNone = ~std::size_t{0};
  struct Tiles {
    std::size_t active = kNone;  // the mxu.lw whose tile the array computes with
    std::size_t staged = kNone;  // an mxu.lw no matmul has switched to yet
  };
  std::map<std::pair<std::uint16_t, std::uint8_t>, Tiles> tiles_;  // per (core, mxu)
  std::map<std::uint16_t, std::size_t> halt_;                      // core -> its halt
};

}  // namespace

void check(const Program& program, const ChipSpec& chip) { Checker(program, chip).run(); }

}  // namespace tpusim::isa
