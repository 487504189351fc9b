#pragma once
// Where a result file is written so that a failure never leaves half of it under its name: a
// temporary beside it, renamed over it once whole. A path that names a device or a FIFO
// (`-o /dev/null`, `-o /dev/stdout`) is written in place instead: renaming over it would replace
// the node itself (as root, /dev/null by a regular file), and nothing written there stays
// behind to pass for a whole result. A symbolic link is followed, so the file it names is
// replaced, not the link.

#include <filesystem>
#include <system_error>

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

}  // namespace tpusim
