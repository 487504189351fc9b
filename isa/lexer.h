#pragma once
// Tokens of one .tasm line. Internal to the assembler; exposed only for its tests.

#include <string_view>
#include <vector>

#include "sim/base/errors.h"

namespace tpusim::isa {

enum class TokenKind {
  kIdent,   // [A-Za-z_.][A-Za-z0-9_.]* : mnemonics, directives, names, keys, dtypes
  kNumber,  // starts with a digit: 42, 0x1f, 1.5, 2e-3 (checked when interpreted)
  kString,  // "..." ; text excludes the quotes
  kPunct,   // one of = [ ] ( ) , + - * :
};

struct Token {
  TokenKind kind = TokenKind::kIdent;
  std::string_view text;
  int column = 1;  // 1-based column of the first character (the quote for strings)
  bool is(char c) const { return kind == TokenKind::kPunct && text.size() == 1 && text[0] == c; }
};

// Splits `line` (without its newline) into tokens, dropping the comment that starts at the first
// ';' or '#' outside a string. Throws AsmError at `file:line_no:col` for a character that starts
// no token or an unterminated string. The tokens' text points into `line`.
std::vector<Token> tokenize_line(std::string_view line, const std::string& file, int line_no);

}  // namespace tpusim::isa
