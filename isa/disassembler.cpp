#include "isa/disassembler.h"

#include <sstream>

#include "isa/text_util.h"

namespace tpusim::isa {
namespace {

class Printer {
 public:
  explicit Printer(const Program& p) : p_(p) {}

  std::string address(const Address& a) const {
    for (const Region& r : p_.regions) {
      if (r.space == a.space && a.addr >= r.base && a.addr - r.base < r.size) {
        std::uint64_t off = a.addr - r.base;
        return off == 0 ? r.name : r.name + "+" + number_text(off);
      }
    }
    return std::string(space_name(a.space)) + ":" + number_text(a.addr);
  }

  static std::string list(const std::uint32_t* v, std::size_t n) {
    std::string s = "[";
    for (std::size_t i = 0; i < n; ++i) s += (i ? "," : "") + std::to_string(v[i]);
    return s + "]";
  }

  std::string dma(const DmaInstr& d) const {
    std::string s = std::string(d.store ? "store" : "load") + " dma" + std::to_string(d.engine) +
                    " dst=" + address(d.dst) + " src=" + address(d.src) +
                    " elem=" + std::to_string(d.elem_bytes);
    if (d.dims != 1 || d.count[0] != 1) s += " count=" + list(d.count.data(), d.dims);
    std::array<std::uint32_t, kMaxDmaDims> dense{};
    bool dense_ok = dense_dma_strides(d.elem_bytes, d.dims, d.count, &dense);
    if (!dense_ok || d.src_stride != dense) s += " src_stride=" + list(d.src_stride.data(), d.dims);
    if (!dense_ok || d.dst_stride != dense) s += " dst_stride=" + list(d.dst_stride.data(), d.dims);
    return s;
  }

  static std::string stride(const char* key, std::uint32_t v, std::uint64_t dflt) {
    return v == dflt ? "" : std::string(" ") + key + "=" + std::to_string(v);
  }

  std::string lw(const MxuLoadWeights& w) const {
    std::uint64_t row = std::uint64_t{w.transpose ? w.k : w.n} * dtype_bytes(w.dtype);
    return "mxu.lw mxu" + std::to_string(w.mxu) + " src=" + address(w.src) +
           " k=" + std::to_string(w.k) + " n=" + std::to_string(w.n) +
           " dtype=" + std::string(dtype_name(w.dtype)) + stride("stride", w.src_stride, row) +
           (w.transpose ? " transpose" : "");
  }

  std::string mm(const MxuMatmul& m) const {
    return "mxu.mm mxu" + std::to_string(m.mxu) + " src=" + address(m.src) +
           " dst=" + address(m.dst) + " m=" + std::to_string(m.m) + " k=" + std::to_string(m.k) +
           " n=" + std::to_string(m.n) + " dtype=" + std::string(dtype_name(m.dtype)) +
           stride("src_stride", m.src_stride, std::uint64_t{m.k} * dtype_bytes(m.dtype)) +
           stride("dst_stride", m.dst_stride,
                  std::uint64_t{m.n} * dtype_bytes(accumulator_dtype(m.dtype))) +
           (m.accumulate ? " accumulate" : "") + (m.keep ? " keep" : "");
  }

  std::string vector(const VectorInstr& v) const {
    std::string s =
        "vpu." + std::string(vector_op_name(v.op)) + " dtype=" + std::string(dtype_name(v.dtype));
    if (vector_op_converts(v.op)) s += " from=" + std::string(dtype_name(v.src_dtype));
    s += " shape=[" + std::to_string(v.rows) + "," + std::to_string(v.cols) + "]";
    bool binary = vector_arity(v.op) == VectorArity::kBinary;
    s += " dst=" + address(v.dst.addr) + " a=" + address(v.a.addr);
    if (binary) s += " b=" + address(v.b.addr);
    s += stride("dst_stride", v.dst.stride, std::uint64_t{v.dst_cols()} * dtype_bytes(v.dtype));
    s += stride("a_stride", v.a.stride, std::uint64_t{v.a_cols()} * dtype_bytes(v.src_dtype));
    if (binary)
      s += stride("b_stride", v.b.stride, std::uint64_t{v.cols} * dtype_bytes(v.src_dtype));
    if (v.op == VectorOp::kRequantize) {
      s += " scale=" + float_text(v.scale);
      if (v.zero_point != 0) s += " zp=" + std::to_string(v.zero_point);
    }
    return s;
  }

  std::string instruction(const Instruction& inst) const {
    if (auto* d = std::get_if<DmaInstr>(&inst.body)) return dma(*d);
    if (auto* w = std::get_if<MxuLoadWeights>(&inst.body)) return lw(*w);
    if (auto* m = std::get_if<MxuMatmul>(&inst.body)) return mm(*m);
    if (auto* v = std::get_if<VectorInstr>(&inst.body)) return vector(*v);
    if (auto* s = std::get_if<SemSignal>(&inst.body))
      return "sem.signal " + unit_name(s->unit) + " s" + std::to_string(s->sem) +
             (s->reads ? " reads" : "");
    if (auto* s = std::get_if<SemWait>(&inst.body)) {
      return "sem.wait " + unit_name(s->unit) + " s" + std::to_string(s->sem) +
             (s->count == 1 ? "" : " " + std::to_string(s->count));
    }
    return inst.mnemonic();
  }

 private:
  const Program& p_;
};

}  // namespace

std::string disassemble(const Program& p) {
  Printer pr(p);
  std::ostringstream out;
  std::string from = p.file_name.empty() ? "<program>" : p.file_name;
  for (char& c : from)
    if (static_cast<unsigned char>(c) < 0x20) c = '?';  // keep the comment on one line
  out << "; disassembled from " << from << "\n";
  for (const Region& r : p.regions) {
    out << ".region " << r.name << " " << space_name(r.space) << " " << number_text(r.base) << " "
        << number_text(r.size) << "\n";
  }
  for (const OpInfo& op : p.ops)
    out << ".op " << op.id << " " << op.kind << " \"" << op.name << "\"\n";
  // The assembler starts on core 0 with the last declared operator selected.
  std::uint32_t core = 0;
  std::uint32_t op = p.ops.empty() ? 0 : static_cast<std::uint32_t>(p.ops.size() - 1);
  bool first = true;
  for (const Instruction& inst : p.instructions) {
    if (first || inst.core != core) out << ".core " << inst.core << "\n";
    if (inst.op != op) out << ".op " << inst.op << "\n";
    first = false;
    core = inst.core;
    op = inst.op;
    out << pr.instruction(inst) << "\n";
  }
  return out.str();
}

}  // namespace tpusim::isa
