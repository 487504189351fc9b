#include "isa/program_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "isa/assembler.h"
#include "isa/binary.h"
#include "sim/base/input_file.h"
#include "sim/base/output_file.h"

namespace tpusim::isa {
namespace {

AsmError file_error(const std::string& path, const std::string& msg) {
  return AsmError(SourceLocation{path, 0, 0}, msg);
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

Program read_program_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw file_error(path, "is a directory, not a program");
  std::string text;
  switch (read_input_file(path, max_program_file_bytes(path), text)) {
    case ReadStatus::kOk:
      break;
    case ReadStatus::kCannotOpen:
      throw file_error(path, "cannot open file");
    case ReadStatus::kTooLarge:
      throw file_error(path, "too large for a program file");
    case ReadStatus::kCannotRead:
      throw file_error(path, "cannot read file");
  }
  const std::vector<std::uint8_t> bytes(text.begin(), text.end());
  bool magic = bytes.size() >= 4 && std::memcmp(bytes.data(), kBinaryMagic, 4) == 0;
  Program program =
      magic || ends_with(path, ".tbin")
          ? decode(bytes, path)
          : assemble_text(
                std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), path);
  // An empty file, or one of comments alone, is almost always the wrong file.
  if (program.instructions.empty())
    throw AsmError(magic ? SourceLocation{path} : SourceLocation{path, 1, 1}, "no instructions");
  return program;
}

void write_binary_file(const Program& program, const std::string& path) {
  std::vector<std::uint8_t> bytes = encode(program);
  const OutputTarget where = output_target(path);
  const bool in_place = where.temp.empty();  // a device: see sim/base/output_file.h
  std::string tmp = where.target.string();   // what is written: the target, or a temporary
  if (!in_place) tmp += ".tmp.XXXXXX";
  int fd = in_place ? ::open(tmp.c_str(), O_WRONLY | O_TRUNC) : ::mkstemp(tmp.data());
  if (fd < 0) throw file_error(path, std::string("cannot create file: ") + std::strerror(errno));
  const auto discard = [&] {
    if (!in_place) ::unlink(tmp.c_str());
  };
  std::size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = errno;
      ::close(fd);
      discard();
      throw file_error(path, std::string("cannot write file: ") + std::strerror(err));
    }
    done += static_cast<std::size_t>(n);
  }
  // mkstemp creates the file 0600; a program is an ordinary output file.
  if (!in_place) ::fchmod(fd, 0644);
  if (::close(fd) != 0 ||
      (!in_place && std::rename(tmp.c_str(), where.target.string().c_str()) != 0)) {
    int err = errno;
    discard();
    throw file_error(path, std::string("cannot write file: ") + std::strerror(err));
  }
}

}  // namespace tpusim::isa
