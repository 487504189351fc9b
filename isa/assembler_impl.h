#pragma once
// Internal to the assembler: the state of one assembly and its operand parsing, shared by
// assembler.cpp (directives, instructions) and assembler_operands.cpp (expressions, operands).

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "isa/lexer.h"
#include "isa/program.h"

namespace tpusim::isa::detail {

using i128 = __int128;
inline constexpr i128 kU64Max = static_cast<i128>(~std::uint64_t{0});

inline std::string i128_text(i128 v) {
  if (v == 0) return "0";
  bool neg = v < 0;
  unsigned __int128 u =
      neg ? static_cast<unsigned __int128>(-v) : static_cast<unsigned __int128>(v);
  std::string s;
  while (u > 0) {
    s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(u % 10)));
    u /= 10;
  }
  return neg ? "-" + s : s;
}

inline std::string quoted(const Token& t) { return "'" + std::string(t.text) + "'"; }

// A symbol: a region (an address) or a constant (a number).
struct Name {
  bool is_region = false;
  std::size_t region = 0;
  i128 value = 0;
  int line = 0;
};

// An evaluated expression: a number, plus a region whose base it is relative to (or -1).
struct Value {
  i128 num = 0;
  int region = -1;
};

// One operand as written: `key=value` or a bare value in tokens [begin, end).
struct RawOperand {
  std::string_view key;  // empty for a bare (positional or flag) operand
  std::size_t begin = 0;
  std::size_t end = 0;
  int column = 0;
};

// The operands a mnemonic accepts: positional ones may also be written key=value.
struct Params {
  std::vector<std::string_view> positional;
  std::vector<std::string_view> named;
  std::vector<std::string_view> flags;
};

class Assembler {
 public:
  explicit Assembler(const std::string& file) { prog_.file_name = file; }
  void line(std::string_view text, int line_no);
  Program finish() { return std::move(prog_); }

 private:
  AsmError error(int col, const std::string& msg) const {
    return AsmError(SourceLocation{prog_.file_name, line_no_, col}, msg);
  }
  int end_column() const {
    return toks_.empty() ? 1 : toks_.back().column + static_cast<int>(toks_.back().text.size());
  }
  const Token& tok(std::size_t i, const char* expected) const;

  // Expressions over tokens [pos, end).
  Value parse_expr(std::size_t& pos, std::size_t end) const;
  Value parse_term(std::size_t& pos, std::size_t end) const;
  Value parse_unary(std::size_t& pos, std::size_t end) const;
  Value parse_atom(std::size_t& pos, std::size_t end) const;
  Value whole_expr(std::size_t begin, std::size_t end) const;
  i128 int_literal(const Token& t) const;
  i128 number_in(std::size_t begin, std::size_t end, i128 lo, i128 hi, const char* what) const;
  Address address_in(std::size_t begin, std::size_t end) const;
  std::vector<std::uint32_t> list_in(std::size_t begin, std::size_t end, const char* what) const;

  void directive();
  void declare_name(const Token& t, Name n);
  void instruction();

  // Operand access for the instruction being assembled.
  // Splits toks_[first..] into operands named by `params`.
  void split_operands(const Params& params, std::size_t first);
  const RawOperand* find(std::string_view key) const;
  const RawOperand& need(std::string_view key) const;
  std::uint64_t uint_op(std::string_view key, int bits) const;
  std::uint64_t uint_or(std::string_view key, int bits, std::uint64_t dflt) const;
  Address addr_op(std::string_view key) const;
  DType dtype_op(std::string_view key) const;
  // `want` restricts the unit kind (dma0 or mxu0 forms); nullopt accepts any unit.
  Unit unit_op(std::string_view key, std::optional<UnitKind> want) const;
  float float_op(std::string_view key) const;
  bool flag(std::string_view name) const;
  std::vector<std::uint32_t> list_op(std::string_view key, std::size_t min, std::size_t max) const;
  std::uint32_t stride_or(std::string_view key, std::uint64_t dflt) const;

  InstrBody build_dma(bool store);
  InstrBody build_mxu_lw();
  InstrBody build_mxu_mm();
  InstrBody build_vector(VectorOp op);
  InstrBody build_sem(bool wait);

  Program prog_;
  std::map<std::string, Name, std::less<>> names_;
  std::uint16_t core_ = 0;
  std::optional<std::uint32_t> op_;
  int line_no_ = 0;
  std::vector<Token> toks_;
  const Token* mnemonic_ = nullptr;
  std::map<std::string_view, RawOperand> operands_;
  std::vector<std::string_view> flags_set_;
  static constexpr int kMaxNesting = 32;
  mutable int nesting_ = 0;  // parentheses open in the expression being parsed
};

}  // namespace tpusim::isa::detail
