#include "isa/assembler.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "isa/assembler_impl.h"
#include "isa/text_util.h"
#include "sim/base/input_file.h"

namespace tpusim::isa {
namespace detail {

void Assembler::declare_name(const Token& t, Name n) {
  if (t.kind != TokenKind::kIdent || !is_identifier(t.text) || t.text[0] == '.')
    throw error(t.column, "expected a name (letters, digits, '_'), got " + quoted(t));
  if (is_reserved_name(t.text))
    throw error(t.column, quoted(t) + " is reserved (memory space, unit or semaphore name)");
  auto it = names_.find(t.text);
  if (it != names_.end()) {
    throw error(t.column, std::string("duplicate ") + (n.is_region ? "region " : "name ") +
                              quoted(t) + " (first declared at line " +
                              std::to_string(it->second.line) + ")");
  }
  n.line = line_no_;
  names_.emplace(std::string(t.text), n);
}

void Assembler::directive() {
  const Token& d = toks_[0];
  std::size_t n = toks_.size();
  if (d.text == ".core") {
    if (n < 2) throw error(end_column(), ".core: expected a core number");
    core_ = static_cast<std::uint16_t>(number_in(1, n, 0, UINT16_MAX, ".core"));
  } else if (d.text == ".const") {
    const Token& name = tok(1, "a name after .const");
    if (n < 3) throw error(end_column(), ".const: expected a value after the name");
    Value v = whole_expr(2, n);
    if (v.region >= 0)
      throw error(toks_[2].column, ".const: a constant is a number, not an address");
    declare_name(name, Name{false, 0, v.num, 0});
  } else if (d.text == ".region") {
    // .region NAME SPACE BASE SIZE ; BASE and SIZE are single expressions (no spaces inside
    // unless joined by operators), separated by whitespace or a comma.
    const Token& name = tok(1, "a region name after .region");
    const Token& space_tok = tok(2, "a memory space (hbm, vmem, accmem, cmem)");
    auto space = space_from_name(space_tok.text);
    if (space_tok.kind != TokenKind::kIdent || !space)
      throw error(space_tok.column, "unknown memory space " + quoted(space_tok) +
                                        " (expected hbm, vmem, accmem or cmem)");
    split_operands(Params{{"base", "size"}, {}, {}}, 3);
    // "0x20 -16" is one expression, 0x20 - 16: say so rather than only that the size is missing.
    if (const RawOperand* base = find("base"); base && !find("size") && base->end - base->begin > 1)
      throw error(d.column,
                  ".region: missing operand size= (the base and a signed size read as one "
                  "expression; a size is a number of at least 1)");
    std::uint64_t base = uint_op("base", 64);
    std::uint64_t size = uint_op("size", 64);
    if (size == 0) throw error(need("size").column, "region size must be at least 1");
    if (size - 1 > ~std::uint64_t{0} - base)
      throw error(need("size").column, "region end exceeds 64-bit address space");
    Name entry{true, prog_.regions.size(), 0, 0};
    declare_name(name, entry);
    prog_.regions.push_back(
        Region{std::string(name.text), *space, base, size, static_cast<std::uint32_t>(line_no_)});
  } else if (d.text == ".op") {
    // `.op ID` selects a declared operator; `.op ID KIND "name"` declares the next one and
    // selects it.
    if (n < 2) throw error(end_column(), ".op: expected an operator id");
    auto id = static_cast<std::uint32_t>(number_in(1, 2, 0, UINT32_MAX, ".op"));
    if (n == 2) {
      if (id >= prog_.ops.size())
        throw error(toks_[1].column, ".op " + std::to_string(id) +
                                         " is not declared (declare it "
                                         "as .op " +
                                         std::to_string(id) + " KIND \"name\")");
      op_ = id;
      return;
    }
    const Token& kind = toks_[2];
    const Token& name = tok(3, "a quoted operator name after the kind");
    if (kind.kind != TokenKind::kIdent || !is_identifier(kind.text) || kind.text[0] == '.')
      throw error(kind.column,
                  ".op: expected an operator kind such as matmul, got " + quoted(kind));
    if (name.kind != TokenKind::kString || !is_valid_op_name(name.text))
      throw error(name.column, ".op: expected a quoted name of printable characters");
    if (n > 4) throw error(toks_[4].column, "unexpected " + quoted(toks_[4]) + " after .op");
    if (id != prog_.ops.size())
      throw error(toks_[1].column,
                  ".op: operator ids are declared in order 0, 1, 2, ...: "
                  "expected " +
                      std::to_string(prog_.ops.size()) + ", got " + std::to_string(id));
    prog_.ops.push_back(OpInfo{id, std::string(kind.text), std::string(name.text)});
    op_ = id;
  } else {
    throw error(d.column,
                "unknown directive " + quoted(d) + " (expected .core, .op, .region or .const)");
  }
}

InstrBody Assembler::build_dma(bool store) {
  split_operands(
      Params{{"engine"}, {"dst", "src", "elem", "count", "src_stride", "dst_stride"}, {}}, 1);
  DmaInstr d;
  d.store = store;
  d.engine = unit_op("engine", UnitKind::kDma).index;
  d.dst = addr_op("dst");
  d.src = addr_op("src");
  d.elem_bytes = static_cast<std::uint32_t>(uint_op("elem", 32));
  std::vector<std::uint32_t> count = {1};
  if (find("count")) count = list_op("count", 1, kMaxDmaDims);
  d.dims = static_cast<std::uint8_t>(count.size());
  std::copy(count.begin(), count.end(), d.count.begin());
  std::array<std::uint32_t, kMaxDmaDims> dense{};
  bool dense_ok = dense_dma_strides(d.elem_bytes, d.dims, d.count, &dense);
  for (auto [key, stride] :
       {std::pair{"src_stride", &d.src_stride}, std::pair{"dst_stride", &d.dst_stride}}) {
    if (find(key)) {
      auto v = list_op(key, d.dims, d.dims);
      std::copy(v.begin(), v.end(), stride->begin());
    } else if (!dense_ok) {
      throw error(mnemonic_->column, "the default (dense) " + std::string(key) +
                                         " exceeds 32 bits; write " + key + "=[...]");
    } else {
      *stride = dense;
    }
  }
  return d;
}

InstrBody Assembler::build_mxu_lw() {
  split_operands(Params{{"mxu"}, {"src", "k", "n", "dtype", "stride"}, {"transpose"}}, 1);
  MxuLoadWeights w;
  w.mxu = unit_op("mxu", UnitKind::kMxu).index;
  w.src = addr_op("src");
  w.k = static_cast<std::uint32_t>(uint_op("k", 32));
  w.n = static_cast<std::uint32_t>(uint_op("n", 32));
  w.dtype = dtype_op("dtype");
  w.transpose = flag("transpose");
  // The tile sits in memory as K rows of N elements, or as N rows of K when transposed.
  std::uint64_t row = std::uint64_t{w.transpose ? w.k : w.n} * dtype_bytes(w.dtype);
  w.src_stride = stride_or("stride", row);
  return w;
}

InstrBody Assembler::build_mxu_mm() {
  split_operands(Params{{"mxu"},
                        {"src", "dst", "m", "k", "n", "dtype", "src_stride", "dst_stride"},
                        {"accumulate", "keep"}},
                 1);
  MxuMatmul m;
  m.mxu = unit_op("mxu", UnitKind::kMxu).index;
  m.src = addr_op("src");
  m.dst = addr_op("dst");
  m.m = static_cast<std::uint32_t>(uint_op("m", 32));
  m.k = static_cast<std::uint32_t>(uint_op("k", 32));
  m.n = static_cast<std::uint32_t>(uint_op("n", 32));
  m.dtype = dtype_op("dtype");
  m.accumulate = flag("accumulate");
  m.keep = flag("keep");
  m.src_stride = stride_or("src_stride", std::uint64_t{m.k} * dtype_bytes(m.dtype));
  m.dst_stride =
      stride_or("dst_stride", std::uint64_t{m.n} * dtype_bytes(accumulator_dtype(m.dtype)));
  return m;
}

InstrBody Assembler::build_vector(VectorOp op) {
  Params p{{}, {"dtype", "shape", "dst", "a", "dst_stride", "a_stride"}, {}};
  bool binary = vector_arity(op) == VectorArity::kBinary;
  if (binary) p.named.insert(p.named.end(), {"b", "b_stride"});
  if (vector_op_converts(op)) p.named.push_back("from");
  if (op == VectorOp::kRequantize) p.named.insert(p.named.end(), {"scale", "zp"});
  split_operands(p, 1);
  VectorInstr v;
  v.op = op;
  v.dtype = dtype_op("dtype");
  v.src_dtype = find("from") ? dtype_op("from") : v.dtype;
  auto shape = list_op("shape", 2, 2);
  v.rows = shape[0];
  v.cols = shape[1];
  v.dst.addr = addr_op("dst");
  v.a.addr = addr_op("a");
  v.dst.stride = stride_or("dst_stride", std::uint64_t{v.dst_cols()} * dtype_bytes(v.dtype));
  v.a.stride = stride_or("a_stride", std::uint64_t{v.a_cols()} * dtype_bytes(v.src_dtype));
  if (binary) {
    v.b.addr = addr_op("b");
    v.b.stride = stride_or("b_stride", std::uint64_t{v.cols} * dtype_bytes(v.src_dtype));
  }
  if (op == VectorOp::kRequantize) {
    v.scale = float_op("scale");
    if (const RawOperand* zp = find("zp"))
      v.zero_point =
          static_cast<std::int32_t>(number_in(zp->begin, zp->end, INT32_MIN, INT32_MAX, "zp"));
  }
  return v;
}

InstrBody Assembler::build_sem(bool wait) {
  Params p{{"unit", "sem"}, {}, {}};
  if (wait)
    p.positional.push_back("count");
  else
    p.flags.push_back("reads");
  split_operands(p, 1);
  Unit unit = unit_op("unit", std::nullopt);
  const RawOperand& s = need("sem");
  const Token& t = toks_[s.begin];
  std::uint16_t sem = 0;
  bool ok = s.end == s.begin + 1 && t.kind == TokenKind::kIdent && t.text.size() >= 2 &&
            t.text.size() <= 6 && t.text[0] == 's' && !(t.text.size() > 2 && t.text[1] == '0');
  std::uint32_t v = 0;
  for (std::size_t i = 1; ok && i < t.text.size(); ++i) {
    ok = t.text[i] >= '0' && t.text[i] <= '9';
    v = v * 10 + static_cast<std::uint32_t>(t.text[i] - '0');
  }
  if (!ok) {
    // Operands join across + - *: name the whole of it ("s0 -1"), not its first token.
    std::string got;
    for (std::size_t i = s.begin; i < s.end; ++i)
      got += (i > s.begin && toks_[i].column >
                                 toks_[i - 1].column + static_cast<int>(toks_[i - 1].text.size())
                  ? " "
                  : "") +
             std::string(toks_[i].text);
    throw error(t.column, "sem: expected a semaphore such as s0, got '" + got + "'");
  }
  if (v > UINT16_MAX)
    throw error(t.column,
                "sem: number out of range: s" + std::to_string(v) + " (expected s0..s65535)");
  sem = static_cast<std::uint16_t>(v);
  if (wait) return SemWait{unit, sem, static_cast<std::uint32_t>(uint_or("count", 32, 1))};
  return SemSignal{unit, sem, flag("reads")};
}

void Assembler::instruction() {
  std::string_view m = mnemonic_->text;
  int col = mnemonic_->column;
  InstrBody body;
  if (m == "load" || m == "store") {
    body = build_dma(m == "store");
  } else if (m == "mxu.lw") {
    body = build_mxu_lw();
  } else if (m == "mxu.mm") {
    body = build_mxu_mm();
  } else if (m.substr(0, 4) == "vpu." && vector_op_from_name(m.substr(4))) {
    body = build_vector(*vector_op_from_name(m.substr(4)));
  } else if (m == "sem.signal" || m == "sem.wait") {
    body = build_sem(m == "sem.wait");
  } else if (m == "barrier" || m == "halt") {
    split_operands(Params{}, 1);
    body = m == "halt" ? InstrBody{Halt{}} : InstrBody{Barrier{}};
  } else {
    throw error(col, "unknown mnemonic " + quoted(*mnemonic_) +
                         " (expected load, store, mxu.lw, mxu.mm, vpu.<op>, sem.signal, "
                         "sem.wait, barrier or halt)");
  }
  if (!op_) throw error(col, "no operator selected: declare one first with .op 0 KIND \"name\"");
  Instruction inst{core_, *op_, body, static_cast<std::uint32_t>(line_no_),
                   static_cast<std::uint32_t>(col)};
  std::string why = structural_error(inst);
  if (!why.empty()) throw error(col, std::string(m) + ": " + why);
  prog_.instructions.push_back(std::move(inst));
}

void Assembler::line(std::string_view text, int line_no) {
  line_no_ = line_no;
  toks_ = tokenize_line(text, prog_.file_name, line_no);
  mnemonic_ = nullptr;
  if (toks_.empty()) return;
  const Token& first = toks_[0];
  if (first.kind != TokenKind::kIdent)
    throw error(first.column, "expected a mnemonic or a directive, got " + quoted(first));
  // This line's, directives included: errors about a missing operand point at it.
  mnemonic_ = &toks_[0];
  if (first.text[0] == '.') {
    directive();
  } else {
    instruction();
  }
}

}  // namespace detail

Program assemble_text(std::string_view text, const std::string& file_name) {
  detail::Assembler as(file_name);
  int line_no = 1;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t nl = text.find('\n', start);
    std::size_t stop = nl == std::string_view::npos ? text.size() : nl;
    as.line(text.substr(start, stop - start), line_no++);
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
  return as.finish();
}

std::uint64_t max_program_file_bytes(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec) ? std::uint64_t{2} << 30
                                                    : std::uint64_t{64} << 20;
}

Program assemble_file(const std::string& path) {
  std::string text;
  switch (read_input_file(path, max_program_file_bytes(path), text)) {
    case ReadStatus::kOk:
      break;
    case ReadStatus::kCannotOpen:
      throw AsmError(SourceLocation{path, 0, 0}, "cannot open file");
    case ReadStatus::kTooLarge:
      throw AsmError(SourceLocation{path, 0, 0}, "too large for a program file");
    case ReadStatus::kCannotRead:
      throw AsmError(SourceLocation{path, 0, 0}, "cannot read file");
  }
  return assemble_text(text, path);
}

}  // namespace tpusim::isa
