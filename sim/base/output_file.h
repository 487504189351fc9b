#pragma once
// Where a result file is written so that a failure never leaves half of it under its name: a
// temporary beside it, renamed over it once whole. A path that names a device or a FIFO
// (`-o /dev/null`, `-o /dev/stdout`) is written in place instead: renaming over it would replace
// the node itself (as root, /dev/null by a regular file), and nothing written there stays
// behind to pass for a whole result. A symbolic link is followed, so the file it names is
// replaced, not the link.

#include <filesystem>
#include <fstream>
#include <functional>
#include <ostream>
#include <system_error>

#include "sim/base/errors.h"

namespace tpusim {

struct OutputTarget {
  std::filesystem::path target;  // what the result replaces
  std::filesystem::path temp;    // written first, renamed to target; empty: write target itself
};

inline OutputTarget output_target(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path target = path;
  if (fs::is_symlink(fs::symlink_status(path, ec))) {
    fs::path resolved = fs::canonical(path, ec);
    if (!ec) target = std::move(resolved);  // a dangling link is replaced as a name
  }
  const fs::file_status status = fs::status(target, ec);
  const bool special =
      fs::exists(status) && !fs::is_regular_file(status) && !fs::is_directory(status);
  if (special) return {target, {}};
  fs::path temp = target;
  temp += ".partial";
  return {target, temp};
}

// The two halves of writing a result file, for results that must appear together: stage_file
// writes `path`'s temporary (or, for a device, the device itself; temp is then empty),
// commit_file renames it into place. InputError naming the path when either fails, the
// temporary removed.
struct StagedFile {
  std::filesystem::path temp, target;
};

inline StagedFile stage_file(const std::filesystem::path& path,
                             const std::function<void(std::ostream&)>& render) {
  const OutputTarget where = output_target(path);
  std::error_code ec;
  try {
    std::ofstream out(where.temp.empty() ? where.target : where.temp, std::ios::binary);
    render(out);
    if (!out.flush()) throw InputError(path.string() + ": cannot write file");
  } catch (...) {
    if (!where.temp.empty()) std::filesystem::remove(where.temp, ec);
    throw;
  }
  return {where.temp, where.target};
}

inline void commit_file(const StagedFile& file) {
  if (file.temp.empty()) return;  // written in place
  std::error_code ec;
  std::filesystem::rename(file.temp, file.target, ec);
  if (ec) {
    std::error_code ignored;
    std::filesystem::remove(file.temp, ignored);
    throw InputError(file.target.string() + ": cannot write file (" + ec.message() + ")");
  }
}

}  // namespace tpusim
