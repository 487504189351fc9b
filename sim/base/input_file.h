#pragma once
// Reading an input file whole, up to a limit, and checking its text is UTF-8. A FIFO or a device
// (`/dev/zero`) is cut off at the limit instead of being read until memory runs out, and a name
// that is not UTF-8 is refused where it is read instead of failing when a report is written.

#include <cstdint>
#include <fstream>
#include <string>
#include <string_view>
#include <utility>

namespace tpusim {

enum class ReadStatus { kOk, kCannotOpen, kTooLarge, kCannotRead };

inline ReadStatus read_input_file(const std::string& path, std::uint64_t limit, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return ReadStatus::kCannotOpen;
  out.clear();
  char block[1 << 16];
  while (in) {
    in.read(block, sizeof block);
    out.append(block, static_cast<std::size_t>(in.gcount()));
    if (out.size() > limit) return ReadStatus::kTooLarge;
  }
  return in.bad() ? ReadStatus::kCannotRead : ReadStatus::kOk;
}

// The offset of the first byte that does not belong to a well-formed UTF-8 sequence (overlong
// forms, surrogates and values above U+10FFFF included), or npos when the text is UTF-8.
inline std::size_t invalid_utf8_offset(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t n = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
    if (c < 0x80) {
      ++i;
      continue;
    } else if (c >= 0xC2 && c <= 0xDF) {
      n = 1;
    } else if (c >= 0xE0 && c <= 0xEF) {
      n = 2;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      n = 3;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    } else {
      return i;
    }
    for (std::size_t k = 1; k <= n; ++k) {
      if (i + k >= s.size()) return i;
      const auto b = static_cast<unsigned char>(s[i + k]);
      if (b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xBF)) return i;
    }
    i += n + 1;
  }
  return std::string_view::npos;
}

// 1-based line and column (in bytes) of `offset` in `text`.
inline std::pair<int, int> line_column_of(std::string_view text, std::size_t offset) {
  int line = 1, column = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return {line, column};
}

}  // namespace tpusim
