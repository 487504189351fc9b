#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

#include "isa/assembler_impl.h"

namespace tpusim::isa::detail {

const Token& Assembler::tok(std::size_t i, const char* expected) const {
  if (i >= toks_.size()) throw error(end_column(), std::string("expected ") + expected);
  return toks_[i];
}

i128 Assembler::int_literal(const Token& t) const {
  std::string_view s = t.text;
  bool hex = s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
  std::string_view digits = hex ? s.substr(2) : s;
  i128 v = 0;
  for (char c : digits) {
    int d = -1;
    if (c >= '0' && c <= '9') d = c - '0';
    if (hex && c >= 'a' && c <= 'f') d = c - 'a' + 10;
    if (hex && c >= 'A' && c <= 'F') d = c - 'A' + 10;
    if (d < 0) throw error(t.column, "expected an integer, got " + quoted(t));
    v = v * (hex ? 16 : 10) + d;
    if (v > kU64Max)
      throw error(t.column, "number out of range: " + quoted(t) + " exceeds 64 bits");
  }
  if (digits.empty()) throw error(t.column, "expected an integer, got " + quoted(t));
  return v;
}

Value Assembler::parse_atom(std::size_t& pos, std::size_t end) const {
  if (pos >= end)
    throw error(pos < toks_.size() ? toks_[pos].column : end_column(),
                "expected a number or a name");
  const Token& t = toks_[pos++];
  if (t.kind == TokenKind::kNumber) return Value{int_literal(t), -1};
  if (t.is('(')) {
    // Bounded, so deeply nested input cannot exhaust the stack.
    if (++nesting_ > kMaxNesting)
      throw error(t.column, "expression nested too deeply (more than " +
                                std::to_string(kMaxNesting) + " parentheses)");
    Value v = parse_expr(pos, end);
    --nesting_;
    if (pos >= end || !toks_[pos].is(')')) throw error(t.column, "unbalanced '('");
    ++pos;
    return v;
  }
  if (t.kind == TokenKind::kIdent) {
    auto it = names_.find(t.text);
    if (it == names_.end())
      throw error(t.column, "unknown name " + quoted(t) + " (not a region or a .const)");
    if (it->second.is_region) return Value{0, static_cast<int>(it->second.region)};
    return Value{it->second.value, -1};
  }
  throw error(t.column, "expected a number or a name, got " + quoted(t));
}

Value Assembler::parse_unary(std::size_t& pos, std::size_t end) const {
  // Iterative, so a long run of '-' cannot exhaust the stack.
  bool negate = false;
  int col = 0;
  while (pos < end && toks_[pos].is('-')) {
    col = toks_[pos++].column;
    negate = !negate;
  }
  Value v = parse_atom(pos, end);
  if (col != 0 && v.region >= 0) throw error(col, "a region name can only be added to an offset");
  if (negate) v.num = -v.num;
  return v;
}

Value Assembler::parse_term(std::size_t& pos, std::size_t end) const {
  Value v = parse_unary(pos, end);
  while (pos < end && toks_[pos].is('*')) {
    int col = toks_[pos++].column;
    Value r = parse_unary(pos, end);
    if (v.region >= 0 || r.region >= 0)
      throw error(col, "a region name can only be added to an offset");
    i128 a = v.num < 0 ? -v.num : v.num;
    i128 b = r.num < 0 ? -r.num : r.num;
    if (b != 0 && a > kU64Max / b) throw error(col, "number out of range: product exceeds 64 bits");
    v.num *= r.num;
  }
  return v;
}

Value Assembler::parse_expr(std::size_t& pos, std::size_t end) const {
  Value v = parse_term(pos, end);
  while (pos < end && (toks_[pos].is('+') || toks_[pos].is('-'))) {
    bool minus = toks_[pos].is('-');
    int col = toks_[pos++].column;
    Value r = parse_term(pos, end);
    if (r.region >= 0 && (minus || v.region >= 0))
      throw error(col, "a region name can only be added to an offset");
    v.num = minus ? v.num - r.num : v.num + r.num;
    if (r.region >= 0) v.region = r.region;
    if (v.num > kU64Max || v.num < -kU64Max)
      throw error(col, "number out of range: exceeds 64 bits");
  }
  return v;
}

Value Assembler::whole_expr(std::size_t begin, std::size_t end) const {
  std::size_t pos = begin;
  nesting_ = 0;
  Value v = parse_expr(pos, end);
  if (pos < end)
    throw error(toks_[pos].column, "unexpected " + quoted(toks_[pos]) + " in expression");
  return v;
}

i128 Assembler::number_in(std::size_t begin, std::size_t end, i128 lo, i128 hi,
                          const char* what) const {
  Value v = whole_expr(begin, end);
  int col = toks_[begin].column;
  if (v.region >= 0) throw error(col, std::string(what) + ": expected a number, got an address");
  if (v.num < lo || v.num > hi)
    throw error(col, std::string(what) + ": number out of range: " + i128_text(v.num) +
                         " (expected " + i128_text(lo) + ".." + i128_text(hi) + ")");
  return v.num;
}

Address Assembler::address_in(std::size_t begin, std::size_t end) const {
  const Token& first = toks_[begin];
  if (first.kind == TokenKind::kIdent && begin + 1 < end && toks_[begin + 1].is(':')) {
    auto space = space_from_name(first.text);
    if (!space)
      throw error(first.column, "unknown memory space " + quoted(first) +
                                    " (expected hbm, vmem, accmem or cmem)");
    if (begin + 2 >= end) throw error(toks_[begin + 1].column, "expected an address after ':'");
    Value v = whole_expr(begin + 2, end);
    if (v.region >= 0)
      throw error(toks_[begin + 2].column, "write either a region or a space prefix, not both");
    if (v.num < 0 || v.num > kU64Max)
      throw error(toks_[begin + 2].column, "number out of range: address " + i128_text(v.num));
    return Address{*space, static_cast<std::uint64_t>(v.num)};
  }
  Value v = whole_expr(begin, end);
  if (v.region < 0)
    throw error(first.column,
                "expected an address: a region name (a0, a0+256) or a space "
                "prefix (vmem:0x100)");
  const Region& r = prog_.regions[static_cast<std::size_t>(v.region)];
  if (v.num < 0 || v.num >= static_cast<i128>(r.size))
    throw error(first.column, "offset " + i128_text(v.num) + " is outside region " + r.name +
                                  " (size " + std::to_string(r.size) + ")");
  return Address{r.space, r.base + static_cast<std::uint64_t>(v.num)};
}

std::vector<std::uint32_t> Assembler::list_in(std::size_t begin, std::size_t end,
                                              const char* what) const {
  if (!toks_[begin].is('[') || !toks_[end - 1].is(']'))
    throw error(toks_[begin].column, std::string(what) + ": expected a list like [4,128]");
  std::vector<std::uint32_t> out;
  std::size_t pos = begin + 1;
  while (pos < end - 1) {
    std::size_t stop = pos;
    int depth = 0;
    while (stop < end - 1 && !(depth == 0 && toks_[stop].is(','))) {
      if (toks_[stop].is('(')) ++depth;
      if (toks_[stop].is(')')) --depth;
      ++stop;
    }
    if (stop == pos) throw error(toks_[pos].column, std::string(what) + ": empty list entry");
    out.push_back(static_cast<std::uint32_t>(number_in(pos, stop, 0, UINT32_MAX, what)));
    pos = stop + 1;
    if (stop < end - 1 && pos == end - 1)
      throw error(toks_[stop].column, std::string(what) + ": empty list entry");
  }
  return out;
}

void Assembler::split_operands(const Params& params, std::size_t first) {
  operands_.clear();
  flags_set_.clear();
  std::size_t next_positional = 0;
  std::size_t n = toks_.size();
  auto known = [&](std::string_view key) {
    for (auto* list : {&params.positional, &params.named})
      for (auto k : *list)
        if (k == key) return k;
    return std::string_view{};
  };
  std::size_t i = first;
  while (i < n) {
    RawOperand op;
    if (toks_[i].is(',')) throw error(toks_[i].column, "empty operand before ','");
    op.column = toks_[i].column;
    if (toks_[i].kind == TokenKind::kIdent && i + 1 < n && toks_[i + 1].is('=')) {
      op.key = known(toks_[i].text);
      if (op.key.empty()) {
        std::string list;
        for (auto* l : {&params.positional, &params.named})
          for (auto k : *l) list += (list.empty() ? "" : ", ") + std::string(k);
        throw error(toks_[i].column, std::string(toks_[0].text) + " has no operand " +
                                         quoted(toks_[i]) + " (expected: " + list + ")");
      }
      i += 2;
    }
    op.begin = i;
    if (!op.key.empty() && i + 1 < n && toks_[i].kind == TokenKind::kIdent && toks_[i + 1].is('='))
      throw error(op.column, "missing value after '='");
    int depth = 0;
    while (i < n) {
      const Token& t = toks_[i];
      if (depth == 0 && t.is(',')) break;
      if (i > op.begin && depth == 0) {
        const Token& p = toks_[i - 1];
        bool joins = t.is('+') || t.is('-') || t.is('*') || t.is(':') || t.is(']') || t.is(')') ||
                     p.is('+') || p.is('-') || p.is('*') || p.is(':') || p.is('(') || p.is('[');
        if (!joins) break;
        // "src=A+ elem=1": the next key=value is not a term of this expression.
        if ((p.is('+') || p.is('-') || p.is('*')) && t.kind == TokenKind::kIdent && i + 1 < n &&
            toks_[i + 1].is('='))
          throw error(p.column, "expected a term after '" + std::string(p.text) + "'");
      }
      if (t.is('[') || t.is('(')) ++depth;
      if ((t.is(']') || t.is(')')) && depth > 0) --depth;
      ++i;
    }
    op.end = i;
    if (op.end == op.begin) throw error(op.column, "missing value after '='");
    if (i < n && toks_[i].is(',')) {
      ++i;
      if (i == n) throw error(toks_[i - 1].column, "expected an operand after ','");
    }
    if (op.key.empty()) {
      const Token& t = toks_[op.begin];
      bool is_flag = false;
      for (auto f : params.flags) is_flag |= op.end == op.begin + 1 && t.text == f;
      if (is_flag && t.kind == TokenKind::kIdent) {
        for (auto f : flags_set_)
          if (f == t.text) throw error(t.column, "flag " + quoted(t) + " given twice");
        flags_set_.push_back(t.text);
        continue;
      }
      if (next_positional >= params.positional.size())
        throw error(t.column, "unexpected operand " + quoted(t) + " (write key=value)");
      op.key = params.positional[next_positional++];
    }
    if (operands_.count(op.key))
      throw error(op.column, "operand '" + std::string(op.key) + "' given twice");
    operands_[op.key] = op;
  }
}

const RawOperand* Assembler::find(std::string_view key) const {
  auto it = operands_.find(key);
  return it == operands_.end() ? nullptr : &it->second;
}

const RawOperand& Assembler::need(std::string_view key) const {
  if (auto* op = find(key)) return *op;
  throw error(mnemonic_ ? mnemonic_->column : 1,
              std::string(toks_[0].text) + ": missing operand " + std::string(key) + "=");
}

std::uint64_t Assembler::uint_op(std::string_view key, int bits) const {
  const RawOperand& op = need(key);
  i128 max = bits == 64 ? kU64Max : (i128{1} << bits) - 1;
  return static_cast<std::uint64_t>(number_in(op.begin, op.end, 0, max, std::string(key).c_str()));
}

std::uint64_t Assembler::uint_or(std::string_view key, int bits, std::uint64_t dflt) const {
  return find(key) ? uint_op(key, bits) : dflt;
}

Address Assembler::addr_op(std::string_view key) const {
  const RawOperand& op = need(key);
  return address_in(op.begin, op.end);
}

DType Assembler::dtype_op(std::string_view key) const {
  const RawOperand& op = need(key);
  const Token& t = toks_[op.begin];
  auto d = dtype_from_name(t.text);
  if (op.end != op.begin + 1 || t.kind != TokenKind::kIdent || !d)
    throw error(t.column, std::string(key) + ": unknown dtype " + quoted(t) +
                              " (expected int8, int16, int32, bf16, fp32 or fp8)");
  return *d;
}

Unit Assembler::unit_op(std::string_view key, std::optional<UnitKind> want) const {
  const RawOperand& op = need(key);
  const Token& t = toks_[op.begin];
  auto u = unit_from_name(t.text);
  bool ok = op.end == op.begin + 1 && t.kind == TokenKind::kIdent && u;
  if (want) ok = ok && u->kind == *want;
  if (!ok) {
    const char* expected = !want                     ? "a unit (dma0, mxu0, vpu, seq)"
                           : *want == UnitKind::kDma ? "a DMA engine such as dma0"
                                                     : "an MXU such as mxu0";
    throw error(t.column, std::string(key) + ": expected " + expected + ", got " + quoted(t));
  }
  return *u;
}

float Assembler::float_op(std::string_view key) const {
  const RawOperand& op = need(key);
  std::size_t pos = op.begin;
  std::string text;
  if (toks_[pos].is('-') && pos + 1 < op.end) {
    text = "-";
    ++pos;
  }
  const Token& t = toks_[pos];
  std::string what(key);
  if (pos + 1 != op.end || t.kind != TokenKind::kNumber)
    throw error(toks_[op.begin].column, what + ": expected a number such as 0.05");
  text += std::string(t.text);
  bool hex = text.find_first_of("xX") != std::string::npos;
  char* stop = nullptr;
  errno = 0;
  float v = std::strtof(text.c_str(), &stop);
  // Subnormals are kept (a binary may hold any float, and its text must read back exactly).
  const bool underflow = errno == ERANGE && v == 0.0f;
  if (hex || *stop != '\0')
    throw error(t.column, what + ": expected a number such as 0.05, got " + quoted(t));
  if (!std::isfinite(v))
    throw error(t.column, what + ": number out of range: " + text + " is not a finite fp32");
  if (underflow)
    throw error(t.column, what + ": number out of range: " + text +
                              " is too small for fp32: it would be read as 0");
  return v;
}

bool Assembler::flag(std::string_view name) const {
  for (auto f : flags_set_)
    if (f == name) return true;
  return false;
}

std::vector<std::uint32_t> Assembler::list_op(std::string_view key, std::size_t min,
                                              std::size_t max) const {
  const RawOperand& op = need(key);
  std::string what(key);
  auto v = list_in(op.begin, op.end, what.c_str());
  if (v.size() < min || v.size() > max) {
    throw error(op.column, what + ": expected " +
                               (min == max ? std::to_string(min)
                                           : std::to_string(min) + " to " + std::to_string(max)) +
                               " entries, got " + std::to_string(v.size()));
  }
  return v;
}

std::uint32_t Assembler::stride_or(std::string_view key, std::uint64_t dflt) const {
  if (find(key)) return static_cast<std::uint32_t>(uint_op(key, 32));
  if (dflt > UINT32_MAX)
    throw error(mnemonic_->column, "the default " + std::string(key) + " " + std::to_string(dflt) +
                                       " exceeds 32 bits; write " + std::string(key) + "=");
  return static_cast<std::uint32_t>(dflt);
}

}  // namespace tpusim::isa::detail
