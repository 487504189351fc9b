#include "isa/program.h"

#include <cctype>
#include <cmath>
#include <cstring>
#include <map>
#include <utility>
#include <variant>

namespace tpusim::isa {
namespace {

constexpr std::string_view kSpaceNames[kNumSpaces] = {"hbm", "vmem", "accmem", "cmem"};

// Distance from the core's compute units: a load moves data to a smaller level, a store to a
// larger one. vmem and accmem share level 0, so DMA never copies between them (the VPU's move
// does).
int space_level(Space s) {
  switch (s) {
    case Space::kHbm:
      return 2;
    case Space::kCmem:
      return 1;
    case Space::kVmem:
    case Space::kAccmem:
      return 0;
  }
  return 0;
}

bool is_on_chip_operand(Space s) { return s == Space::kVmem || s == Space::kAccmem; }

bool all_zero(const VectorOperand& o) {
  return o.addr.space == Space::kHbm && o.addr.addr == 0 && o.stride == 0;
}

std::string dma_error(const DmaInstr& d) {
  if (d.dims < 1 || d.dims > kMaxDmaDims) return "dims must be 1..4";
  for (std::size_t i = d.dims; i < kMaxDmaDims; ++i) {
    if (d.count[i] != 0 || d.src_stride[i] != 0 || d.dst_stride[i] != 0)
      return "unused descriptor dimensions must be zero";
  }
  int from = space_level(d.src.space);
  int to = space_level(d.dst.space);
  // Within vector memory both ways: activations a compiler keeps there move as tiles, as they
  // would from HBM (compiler.activations: vmem).
  if (d.src.space == Space::kVmem && d.dst.space == Space::kVmem) return "";
  if (!d.store && !(from > to))
    return "load copies toward the core (hbm -> cmem -> vmem/accmem) or within vmem, not " +
           std::string(space_name(d.src.space)) + " -> " + std::string(space_name(d.dst.space));
  if (d.store && !(from < to))
    return "store copies away from the core (vmem/accmem -> cmem -> hbm) or within vmem, not " +
           std::string(space_name(d.src.space)) + " -> " + std::string(space_name(d.dst.space));
  return "";
}

std::string vector_error(const VectorInstr& v) {
  if (!is_on_chip_operand(v.dst.addr.space)) return "dst must be in vmem or accmem";
  if (!is_on_chip_operand(v.a.addr.space)) return "a must be in vmem or accmem";
  if (vector_arity(v.op) == VectorArity::kBinary) {
    if (!is_on_chip_operand(v.b.addr.space)) return "b must be in vmem or accmem";
  } else if (!all_zero(v.b)) {
    return "b is only for binary ops and must be zero";
  }
  if (!vector_op_converts(v.op) && v.src_dtype != v.dtype)
    return "from= (a source dtype) is only for cast, requantize and reduce_sum";
  if (v.op == VectorOp::kRequantize) {
    if (!std::isfinite(v.scale)) return "scale must be finite";
  } else {
    std::uint32_t bits = 0;
    std::memcpy(&bits, &v.scale, sizeof bits);
    if (bits != 0 || v.zero_point != 0) return "scale and zp are only for requantize";
  }
  return "";
}

std::string unit_error(const Unit& u) {
  if ((u.kind == UnitKind::kSeq || u.kind == UnitKind::kVpu) && u.index != 0)
    return "seq and vpu have no index";
  return "";
}

}  // namespace

std::string_view space_name(Space s) { return kSpaceNames[static_cast<std::size_t>(s)]; }

std::optional<Space> space_from_name(std::string_view name) {
  for (std::size_t i = 0; i < kNumSpaces; ++i)
    if (kSpaceNames[i] == name) return static_cast<Space>(i);
  return std::nullopt;
}

std::string unit_name(Unit u) {
  switch (u.kind) {
    case UnitKind::kSeq:
      return "seq";
    case UnitKind::kVpu:
      return "vpu";
    case UnitKind::kDma:
      return "dma" + std::to_string(u.index);
    case UnitKind::kMxu:
      return "mxu" + std::to_string(u.index);
  }
  return "?";
}

namespace {
// "dma12" -> 12 when `s` is `prefix` followed by 1-3 decimal digits, without leading zeros.
std::optional<unsigned> indexed_name(std::string_view s, std::string_view prefix) {
  if (s.size() <= prefix.size() || s.substr(0, prefix.size()) != prefix) return std::nullopt;
  std::string_view digits = s.substr(prefix.size());
  if (digits.size() > 6 || (digits.size() > 1 && digits[0] == '0')) return std::nullopt;
  unsigned v = 0;
  for (char c : digits) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    v = v * 10 + static_cast<unsigned>(c - '0');
  }
  return v;
}
}  // namespace

std::optional<Unit> unit_from_name(std::string_view name) {
  if (name == "seq") return Unit{UnitKind::kSeq, 0};
  if (name == "vpu") return Unit{UnitKind::kVpu, 0};
  for (auto [prefix, kind] : {std::pair{"dma", UnitKind::kDma}, std::pair{"mxu", UnitKind::kMxu}}) {
    if (auto i = indexed_name(name, prefix)) {
      if (*i > 255) return std::nullopt;
      return Unit{kind, static_cast<std::uint8_t>(*i)};
    }
  }
  return std::nullopt;
}

std::uint64_t DmaInstr::total_bytes() const {
  std::uint64_t n = elem_bytes;
  for (std::size_t i = 0; i < dims && i < kMaxDmaDims; ++i) n *= count[i];
  return n;
}

VectorArity vector_arity(VectorOp op) {
  switch (op) {
    case VectorOp::kAdd:
    case VectorOp::kSub:
    case VectorOp::kMul:
    case VectorOp::kMax:
    case VectorOp::kMin:
    case VectorOp::kMac:
      return VectorArity::kBinary;
    default:
      return VectorArity::kUnary;
  }
}

bool vector_op_converts(VectorOp op) {
  return op == VectorOp::kCast || op == VectorOp::kRequantize || op == VectorOp::kReduceSum;
}

std::optional<VectorOp> vector_op_from_name(std::string_view name) {
  for (std::size_t i = 0; i < kNumVectorOps; ++i) {
    auto op = static_cast<VectorOp>(i);
    if (vector_op_name(op) == name) return op;
  }
  return std::nullopt;
}

std::uint32_t VectorInstr::dst_cols() const {
  return op == VectorOp::kReduceSum || op == VectorOp::kReduceMax ? 1 : cols;
}

std::uint32_t VectorInstr::a_cols() const { return op == VectorOp::kBroadcast ? 1 : cols; }

Opcode Instruction::opcode() const {
  struct Visitor {
    Opcode operator()(const DmaInstr& d) const { return d.store ? Opcode::kStore : Opcode::kLoad; }
    Opcode operator()(const MxuLoadWeights&) const { return Opcode::kMxuLoadWeights; }
    Opcode operator()(const MxuMatmul&) const { return Opcode::kMxuMatmul; }
    Opcode operator()(const VectorInstr&) const { return Opcode::kVector; }
    Opcode operator()(const SemSignal&) const { return Opcode::kSemSignal; }
    Opcode operator()(const SemWait&) const { return Opcode::kSemWait; }
    Opcode operator()(const Barrier&) const { return Opcode::kBarrier; }
    Opcode operator()(const Halt&) const { return Opcode::kHalt; }
  };
  return std::visit(Visitor{}, body);
}

std::string Instruction::mnemonic() const {
  switch (opcode()) {
    case Opcode::kLoad:
      return "load";
    case Opcode::kStore:
      return "store";
    case Opcode::kMxuLoadWeights:
      return "mxu.lw";
    case Opcode::kMxuMatmul:
      return "mxu.mm";
    case Opcode::kVector:
      return "vpu." + std::string(vector_op_name(std::get<VectorInstr>(body).op));
    case Opcode::kSemSignal:
      return "sem.signal";
    case Opcode::kSemWait:
      return "sem.wait";
    case Opcode::kBarrier:
      return "barrier";
    case Opcode::kHalt:
      return "halt";
  }
  return "?";
}

Unit Instruction::unit() const {
  struct Visitor {
    Unit operator()(const DmaInstr& d) const { return {UnitKind::kDma, d.engine}; }
    Unit operator()(const MxuLoadWeights& m) const { return {UnitKind::kMxu, m.mxu}; }
    Unit operator()(const MxuMatmul& m) const { return {UnitKind::kMxu, m.mxu}; }
    Unit operator()(const VectorInstr&) const { return {UnitKind::kVpu, 0}; }
    Unit operator()(const SemSignal& s) const { return s.unit; }
    Unit operator()(const SemWait& s) const { return s.unit; }
    Unit operator()(const Barrier&) const { return {UnitKind::kSeq, 0}; }
    Unit operator()(const Halt&) const { return {UnitKind::kSeq, 0}; }
  };
  return std::visit(Visitor{}, body);
}

std::string structural_error(const Instruction& inst) {
  if (auto* d = std::get_if<DmaInstr>(&inst.body)) return dma_error(*d);
  if (auto* w = std::get_if<MxuLoadWeights>(&inst.body)) {
    if (w->src.space != Space::kVmem) return "src must be in vmem";
  }
  if (auto* m = std::get_if<MxuMatmul>(&inst.body)) {
    if (m->src.space != Space::kVmem) return "src must be in vmem";
    if (m->dst.space != Space::kAccmem) return "dst must be in accmem";
  }
  if (auto* v = std::get_if<VectorInstr>(&inst.body)) return vector_error(*v);
  if (auto* s = std::get_if<SemSignal>(&inst.body)) return unit_error(s->unit);
  if (auto* s = std::get_if<SemWait>(&inst.body)) return unit_error(s->unit);
  return "";
}

bool is_identifier(std::string_view s) {
  if (s.empty() || s.size() > 255) return false;
  if (!(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.')) return false;
  return true;
}

bool is_reserved_name(std::string_view s) {
  return space_from_name(s).has_value() || unit_from_name(s).has_value() ||
         indexed_name(s, "s").has_value() || s == "dma" || s == "mxu";
}

bool is_valid_op_name(std::string_view s) {
  if (s.size() > 1024) return false;
  for (char c : s)
    if (c < 0x20 || c > 0x7e || c == '"' || c == '\\') return false;
  return true;
}

AsmError instruction_error(const Program& p, std::size_t index, const std::string& why) {
  const Instruction& inst = p.instructions.at(index);
  if (inst.line > 0) {
    return AsmError(
        SourceLocation{p.file_name, static_cast<int>(inst.line), static_cast<int>(inst.column)},
        inst.mnemonic() + ": " + why);
  }
  return AsmError(SourceLocation{p.file_name, 0, 0},
                  "instruction #" + std::to_string(index) + " (" + inst.mnemonic() + "): " + why);
}

std::vector<std::uint32_t> wait_turns(const Program& p) {
  std::vector<std::uint32_t> turns(p.instructions.size(), 0);
  std::map<std::pair<std::uint16_t, std::uint16_t>, std::uint32_t> waits;  // by (core, sem)
  for (std::size_t i = 0; i < p.instructions.size(); ++i)
    if (const auto* w = std::get_if<SemWait>(&p.instructions[i].body))
      turns[i] = waits[{p.instructions[i].core, w->sem}]++;
  return turns;
}

}  // namespace tpusim::isa
