#include "isa/lexer.h"

#include <cctype>
#include <string>

namespace tpusim::isa {
namespace {

bool ident_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '.';
}
bool ident_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
}

std::string printable(char c) {
  if (c >= 0x20 && c <= 0x7e) return std::string("'") + c + "'";
  static const char* kHex = "0123456789abcdef";
  auto u = static_cast<unsigned char>(c);
  return std::string("byte 0x") + kHex[u >> 4] + kHex[u & 15];
}

}  // namespace

std::vector<Token> tokenize_line(std::string_view line, const std::string& file, int line_no) {
  std::vector<Token> out;
  std::size_t i = 0;
  auto error = [&](std::size_t at, const std::string& msg) {
    return AsmError(SourceLocation{file, line_no, static_cast<int>(at) + 1}, msg);
  };
  while (i < line.size()) {
    char c = line[i];
    if (c == ' ' || c == '\t' || c == '\r') {
      ++i;
      continue;
    }
    if (c == ';' || c == '#') break;
    std::size_t start = i;
    if (c == '"') {
      std::size_t close = line.find('"', i + 1);
      if (close == std::string_view::npos) throw error(start, "unterminated string");
      out.push_back({TokenKind::kString, line.substr(i + 1, close - i - 1), int(start) + 1});
      i = close + 1;
    } else if (ident_start(c)) {
      while (i < line.size() && ident_char(line[i])) ++i;
      out.push_back({TokenKind::kIdent, line.substr(start, i - start), int(start) + 1});
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      bool hex = c == '0' && i + 1 < line.size() && (line[i + 1] == 'x' || line[i + 1] == 'X');
      ++i;
      while (i < line.size()) {
        char d = line[i];
        bool exponent_sign =
            !hex && (d == '+' || d == '-') && (line[i - 1] == 'e' || line[i - 1] == 'E');
        if (!(ident_char(d) || exponent_sign)) break;
        ++i;
      }
      out.push_back({TokenKind::kNumber, line.substr(start, i - start), int(start) + 1});
    } else if (std::string_view("=[](),+-*:").find(c) != std::string_view::npos) {
      out.push_back({TokenKind::kPunct, line.substr(i, 1), int(start) + 1});
      ++i;
    } else {
      throw error(start, "unexpected character " + printable(c));
    }
  }
  return out;
}

}  // namespace tpusim::isa
