#include "isa/binary.h"

#include <algorithm>
#include <cassert>
#include <cstdio>
#include <cstring>
#include <set>

namespace tpusim::isa {
namespace {

constexpr std::uint8_t kFlagTranspose = 1;   // mxu.lw
constexpr std::uint8_t kFlagAccumulate = 1;  // mxu.mm
constexpr std::uint8_t kFlagKeep = 2;        // mxu.mm
constexpr std::uint8_t kFlagReads = 1;       // sem.signal

std::string hex(std::size_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%zx", v);
  return buf;
}

class Writer {
 public:
  void u8(std::uint8_t v) { out_.push_back(v); }
  void u16(std::uint16_t v) { le(v, 2); }
  void u32(std::uint32_t v) { le(v, 4); }
  void u64(std::uint64_t v) { le(v, 8); }
  void f32(float v) {
    std::uint32_t bits = 0;
    std::memcpy(&bits, &v, sizeof bits);
    u32(bits);
  }
  void bytes(const std::string& s) { out_.insert(out_.end(), s.begin(), s.end()); }
  void zeros(std::size_t n) { out_.insert(out_.end(), n, 0); }
  std::size_t size() const { return out_.size(); }
  std::vector<std::uint8_t> take() { return std::move(out_); }

 private:
  void le(std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out_.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  std::vector<std::uint8_t> out_;
};

// Bounds-checked little-endian reads. Every read names what it reads, so a short file reports
// the item it cut off.
class Reader {
 public:
  Reader(const std::vector<std::uint8_t>& b, const std::string& file) : b_(b), file_(file) {}

  AsmError error_at(std::size_t offset, const std::string& msg) const {
    return AsmError(SourceLocation{file_, 0, 0}, "byte " + hex(offset) + ": " + msg);
  }
  std::size_t pos() const { return pos_; }
  std::size_t left() const { return b_.size() - pos_; }
  void need(std::size_t n, const std::string& what) const {
    if (n > left())
      throw error_at(pos_, "truncated " + what + " (need " + std::to_string(n) + " bytes, " +
                               std::to_string(left()) + " left)");
  }
  std::uint64_t le(int n) {
    need(static_cast<std::size_t>(n), "field");
    std::uint64_t v = 0;
    for (int i = 0; i < n; ++i)
      v |= std::uint64_t{b_[pos_ + static_cast<std::size_t>(i)]} << (8 * i);
    pos_ += static_cast<std::size_t>(n);
    return v;
  }
  std::uint8_t u8() { return static_cast<std::uint8_t>(le(1)); }
  std::uint16_t u16() { return static_cast<std::uint16_t>(le(2)); }
  std::uint32_t u32() { return static_cast<std::uint32_t>(le(4)); }
  std::uint64_t u64() { return le(8); }
  float f32() {
    std::uint32_t bits = u32();
    float v = 0;
    std::memcpy(&v, &bits, sizeof v);
    return v;
  }
  std::string str(std::size_t n, const std::string& what) {
    need(n, what);
    std::string s(reinterpret_cast<const char*>(b_.data()) + pos_, n);
    pos_ += n;
    return s;
  }
  void reserved(std::size_t n, const std::string& what) {
    need(n, what);
    for (std::size_t i = 0; i < n; ++i)
      if (b_[pos_ + i] != 0) throw error_at(pos_ + i, what + ": reserved byte must be zero");
    pos_ += n;
  }
  // Reads a one-byte enum with `count` values, naming it in the error.
  template <typename E>
  E enum8(std::size_t count, const std::string& what) {
    std::size_t at = pos_;
    std::uint8_t v = u8();
    if (v >= count)
      throw error_at(at, what + " " + std::to_string(v) + " out of range (0.." +
                             std::to_string(count - 1) + ")");
    return static_cast<E>(v);
  }

 private:
  const std::vector<std::uint8_t>& b_;
  const std::string& file_;
  std::size_t pos_ = 0;
};

constexpr std::size_t kNumDTypes = sizeof(kAllDTypes) / sizeof(kAllDTypes[0]);
constexpr std::size_t kNumUnitKinds = 4;

void put_header(Writer& w, const Instruction& inst, std::uint8_t flags) {
  w.u8(static_cast<std::uint8_t>(inst.opcode()));
  w.u8(flags);
  w.u16(inst.core);
  w.u32(inst.op);
}

void encode_instruction(Writer& w, const Instruction& inst) {
  [[maybe_unused]] std::size_t start = w.size();
  if (auto* d = std::get_if<DmaInstr>(&inst.body)) {
    put_header(w, inst, 0);
    w.u8(d->engine);
    w.u8(static_cast<std::uint8_t>(d->src.space));
    w.u8(static_cast<std::uint8_t>(d->dst.space));
    w.u8(d->dims);
    w.u32(d->elem_bytes);
    w.u64(d->src.addr);
    w.u64(d->dst.addr);
    for (auto* a : {&d->count, &d->src_stride, &d->dst_stride})
      for (std::uint32_t v : *a) w.u32(v);
  } else if (auto* l = std::get_if<MxuLoadWeights>(&inst.body)) {
    put_header(w, inst, l->transpose ? kFlagTranspose : 0);
    w.u8(l->mxu);
    w.u8(static_cast<std::uint8_t>(l->dtype));
    w.u8(static_cast<std::uint8_t>(l->src.space));
    w.u8(0);
    w.u32(l->k);
    w.u32(l->n);
    w.u32(l->src_stride);
    w.u64(l->src.addr);
  } else if (auto* m = std::get_if<MxuMatmul>(&inst.body)) {
    put_header(w, inst,
               static_cast<std::uint8_t>((m->accumulate ? kFlagAccumulate : 0) |
                                         (m->keep ? kFlagKeep : 0)));
    w.u8(m->mxu);
    w.u8(static_cast<std::uint8_t>(m->dtype));
    w.u8(static_cast<std::uint8_t>(m->src.space));
    w.u8(static_cast<std::uint8_t>(m->dst.space));
    for (std::uint32_t v : {m->m, m->k, m->n, m->src_stride, m->dst_stride}) w.u32(v);
    w.u64(m->src.addr);
    w.u64(m->dst.addr);
  } else if (auto* v = std::get_if<VectorInstr>(&inst.body)) {
    put_header(w, inst, 0);
    w.u8(static_cast<std::uint8_t>(v->op));
    w.u8(static_cast<std::uint8_t>(v->dtype));
    w.u8(static_cast<std::uint8_t>(v->src_dtype));
    w.u8(0);
    w.u32(v->rows);
    w.u32(v->cols);
    for (auto* o : {&v->dst, &v->a, &v->b}) w.u8(static_cast<std::uint8_t>(o->addr.space));
    w.u8(0);
    for (auto* o : {&v->dst, &v->a, &v->b}) w.u32(o->stride);
    w.f32(v->scale);
    w.u32(static_cast<std::uint32_t>(v->zero_point));
    w.u32(0);
    for (auto* o : {&v->dst, &v->a, &v->b}) w.u64(o->addr.addr);
  } else if (auto* s = std::get_if<SemSignal>(&inst.body)) {
    put_header(w, inst, s->reads ? kFlagReads : 0);
    w.u8(static_cast<std::uint8_t>(s->unit.kind));
    w.u8(s->unit.index);
    w.u16(s->sem);
    w.u32(0);
  } else if (auto* s = std::get_if<SemWait>(&inst.body)) {
    put_header(w, inst, 0);
    w.u8(static_cast<std::uint8_t>(s->unit.kind));
    w.u8(s->unit.index);
    w.u16(s->sem);
    w.u32(s->count);
  } else {
    put_header(w, inst, 0);
  }
  assert(w.size() - start == encoded_size(inst.opcode()));
}

Address read_address(Reader& r, Space space) { return Address{space, r.u64()}; }

Instruction decode_instruction(Reader& r, std::size_t index, std::size_t n_ops) {
  std::size_t start = r.pos();
  std::string name = "instruction #" + std::to_string(index);
  r.need(1, name);
  auto opcode = static_cast<Opcode>(r.u8());
  std::size_t size = encoded_size(opcode);
  if (size == 0)
    throw r.error_at(start, name + ": unknown opcode " + hex(static_cast<std::size_t>(opcode)));
  if (size - 1 > r.left())  // the opcode byte has been read
    throw r.error_at(start, "truncated " + name + " (need " + std::to_string(size) + " bytes, " +
                                std::to_string(r.left() + 1) + " left)");
  std::size_t flags_at = r.pos();
  std::uint8_t flags = r.u8();
  Instruction inst;
  inst.core = r.u16();
  std::size_t op_at = r.pos();
  inst.op = r.u32();
  if (inst.op >= n_ops)
    throw r.error_at(op_at, name + ": operator id " + std::to_string(inst.op) +
                                " is not in the operator table (" + std::to_string(n_ops) +
                                " entries)");
  std::uint8_t allowed_flags = 0;
  switch (opcode) {
    case Opcode::kLoad:
    case Opcode::kStore: {
      DmaInstr d;
      d.store = opcode == Opcode::kStore;
      d.engine = r.u8();
      Space src = r.enum8<Space>(kNumSpaces, name + ": src space");
      Space dst = r.enum8<Space>(kNumSpaces, name + ": dst space");
      std::size_t dims_at = r.pos();
      d.dims = r.u8();
      if (d.dims < 1 || d.dims > kMaxDmaDims)
        throw r.error_at(dims_at,
                         name + ": dims " + std::to_string(d.dims) + " out of range (1..4)");
      d.elem_bytes = r.u32();
      d.src = read_address(r, src);
      d.dst = read_address(r, dst);
      for (auto* a : {&d.count, &d.src_stride, &d.dst_stride})
        for (std::uint32_t& v : *a) v = r.u32();
      inst.body = d;
      break;
    }
    case Opcode::kMxuLoadWeights: {
      MxuLoadWeights l;
      allowed_flags = kFlagTranspose;
      l.transpose = flags & kFlagTranspose;
      l.mxu = r.u8();
      l.dtype = r.enum8<DType>(kNumDTypes, name + ": dtype");
      Space src = r.enum8<Space>(kNumSpaces, name + ": src space");
      r.reserved(1, name);
      l.k = r.u32();
      l.n = r.u32();
      l.src_stride = r.u32();
      l.src = read_address(r, src);
      inst.body = l;
      break;
    }
    case Opcode::kMxuMatmul: {
      MxuMatmul m;
      allowed_flags = kFlagAccumulate | kFlagKeep;
      m.accumulate = flags & kFlagAccumulate;
      m.keep = flags & kFlagKeep;
      m.mxu = r.u8();
      m.dtype = r.enum8<DType>(kNumDTypes, name + ": dtype");
      Space src = r.enum8<Space>(kNumSpaces, name + ": src space");
      Space dst = r.enum8<Space>(kNumSpaces, name + ": dst space");
      for (std::uint32_t* v : {&m.m, &m.k, &m.n, &m.src_stride, &m.dst_stride}) *v = r.u32();
      m.src = read_address(r, src);
      m.dst = read_address(r, dst);
      inst.body = m;
      break;
    }
    case Opcode::kVector: {
      VectorInstr v;
      v.op = r.enum8<VectorOp>(kNumVectorOps, name + ": vector op");
      v.dtype = r.enum8<DType>(kNumDTypes, name + ": dtype");
      v.src_dtype = r.enum8<DType>(kNumDTypes, name + ": from dtype");
      r.reserved(1, name);
      v.rows = r.u32();
      v.cols = r.u32();
      for (auto* o : {&v.dst, &v.a, &v.b})
        o->addr.space = r.enum8<Space>(kNumSpaces, name + ": operand space");
      r.reserved(1, name);
      for (auto* o : {&v.dst, &v.a, &v.b}) o->stride = r.u32();
      v.scale = r.f32();
      v.zero_point = static_cast<std::int32_t>(r.u32());
      r.reserved(4, name);
      for (auto* o : {&v.dst, &v.a, &v.b}) o->addr.addr = r.u64();
      inst.body = v;
      break;
    }
    case Opcode::kSemSignal:
    case Opcode::kSemWait: {
      Unit u;
      u.kind = r.enum8<UnitKind>(kNumUnitKinds, name + ": unit kind");
      u.index = r.u8();
      std::uint16_t sem = r.u16();
      if (opcode == Opcode::kSemWait) {
        inst.body = SemWait{u, sem, r.u32()};
      } else {
        r.reserved(4, name);
        allowed_flags = kFlagReads;
        inst.body = SemSignal{u, sem, (flags & kFlagReads) != 0};
      }
      break;
    }
    case Opcode::kBarrier:
      inst.body = Barrier{};
      break;
    case Opcode::kHalt:
      inst.body = Halt{};
      break;
  }
  if (flags & ~allowed_flags)
    throw r.error_at(flags_at, name + ": unknown flag bits " + hex(flags & ~allowed_flags));
  std::string why = structural_error(inst);
  if (!why.empty()) throw r.error_at(start, name + " (" + inst.mnemonic() + "): " + why);
  return inst;
}

}  // namespace

std::size_t encoded_size(Opcode op) {
  switch (op) {
    case Opcode::kLoad:
    case Opcode::kStore:
      return 80;
    case Opcode::kMxuLoadWeights:
      return 32;
    case Opcode::kMxuMatmul:
      return 48;
    case Opcode::kVector:
      return 72;
    case Opcode::kSemSignal:
    case Opcode::kSemWait:
      return 16;
    case Opcode::kBarrier:
    case Opcode::kHalt:
      return kInstrHeaderBytes;
  }
  return 0;
}

std::vector<std::uint8_t> encode(const Program& p) {
  auto fail = [&](const std::string& msg) {
    return AsmError(SourceLocation{p.file_name, 0, 0}, msg);
  };
  if (p.ops.size() > UINT32_MAX || p.regions.size() > UINT32_MAX ||
      p.instructions.size() > UINT32_MAX)
    throw fail("program too large for the binary format (2^32 entries per table)");
  Writer w;
  for (char c : kBinaryMagic) w.u8(static_cast<std::uint8_t>(c));
  w.u16(kBinaryVersion);
  w.u16(0);
  w.u32(static_cast<std::uint32_t>(p.ops.size()));
  w.u32(static_cast<std::uint32_t>(p.regions.size()));
  w.u32(static_cast<std::uint32_t>(p.instructions.size()));
  w.u32(0);
  for (const OpInfo& op : p.ops) {
    if (op.kind.size() > UINT16_MAX || op.name.size() > UINT16_MAX)
      throw fail("operator " + std::to_string(op.id) + ": kind or name longer than 65535 bytes");
    w.u32(op.id);
    w.u16(static_cast<std::uint16_t>(op.kind.size()));
    w.u16(static_cast<std::uint16_t>(op.name.size()));
    w.bytes(op.kind);
    w.bytes(op.name);
  }
  for (const Region& r : p.regions) {
    if (r.name.size() > UINT16_MAX) throw fail("region name longer than 65535 bytes");
    w.u8(static_cast<std::uint8_t>(r.space));
    w.u8(0);
    w.u16(static_cast<std::uint16_t>(r.name.size()));
    w.u32(0);
    w.u64(r.base);
    w.u64(r.size);
    w.bytes(r.name);
  }
  for (const Instruction& inst : p.instructions) encode_instruction(w, inst);
  return w.take();
}

Program decode(const std::vector<std::uint8_t>& bytes, const std::string& file_name) {
  Reader r(bytes, file_name);
  Program p;
  p.file_name = file_name;
  r.need(4, "header");
  if (std::memcmp(bytes.data(), kBinaryMagic, 4) != 0)
    throw r.error_at(0, "bad magic: not a tpusim binary program (expected \"TBIN\")");
  r.need(kFileHeaderBytes, "header");
  r.str(4, "magic");
  std::uint16_t version = r.u16();
  if (version != kBinaryVersion)
    throw r.error_at(4, "unsupported format version " + std::to_string(version) +
                            " (this build reads version " + std::to_string(kBinaryVersion) + ")");
  r.reserved(2, "header");
  std::uint32_t n_ops = r.u32();
  std::uint32_t n_regions = r.u32();
  std::uint32_t n_instructions = r.u32();
  r.reserved(4, "header");

  for (std::uint32_t i = 0; i < n_ops; ++i) {
    std::string what = "operator table entry " + std::to_string(i);
    std::size_t at = r.pos();
    r.need(8, what);
    OpInfo op;
    op.id = r.u32();
    std::uint16_t kind_len = r.u16();
    std::uint16_t name_len = r.u16();
    if (op.id != i)
      throw r.error_at(at,
                       what + " has id " + std::to_string(op.id) + " (ids must be 0, 1, 2, ...)");
    std::size_t kind_at = r.pos();
    op.kind = r.str(kind_len, what);
    if (!is_identifier(op.kind) || op.kind[0] == '.')
      throw r.error_at(kind_at, what + ": kind is not an identifier");
    std::size_t name_at = r.pos();
    op.name = r.str(name_len, what);
    if (!is_valid_op_name(op.name))
      throw r.error_at(name_at,
                       what + ": name has a character outside printable ASCII, '\"' or '\\'");
    p.ops.push_back(std::move(op));
  }

  std::set<std::string> names;
  for (std::uint32_t i = 0; i < n_regions; ++i) {
    std::string what = "region table entry " + std::to_string(i);
    std::size_t at = r.pos();
    r.need(24, what);
    Region g;
    g.space = r.enum8<Space>(kNumSpaces, what + ": space");
    r.reserved(1, what);
    std::uint16_t name_len = r.u16();
    r.reserved(4, what);
    g.base = r.u64();
    g.size = r.u64();
    if (g.size == 0 || g.size - 1 > ~std::uint64_t{0} - g.base)
      throw r.error_at(at + 16, what + ": size must be >= 1 and end within 64-bit addresses");
    std::size_t name_at = r.pos();
    g.name = r.str(name_len, what);
    if (!is_identifier(g.name) || g.name[0] == '.' || is_reserved_name(g.name))
      throw r.error_at(name_at, what + ": name is not an identifier or is reserved");
    if (!names.insert(g.name).second)
      throw r.error_at(name_at, what + ": duplicate region name '" + g.name + "'");
    p.regions.push_back(std::move(g));
  }

  // Reserve no more than the bytes left could hold, so a corrupt count cannot exhaust memory.
  p.instructions.reserve(std::min<std::size_t>(n_instructions, r.left() / kInstrHeaderBytes));
  for (std::uint32_t i = 0; i < n_instructions; ++i)
    p.instructions.push_back(decode_instruction(r, i, p.ops.size()));
  if (r.left() != 0)
    throw r.error_at(r.pos(),
                     std::to_string(r.left()) + " trailing bytes after the last instruction");
  return p;
}

}  // namespace tpusim::isa
