#pragma once
// Runs the built `tpusim` as a user does, for the CLI tests: exit code, stdout and stderr.

#include <sys/wait.h>

#include <cstdlib>
#include <string>

#include <catch2/catch.hpp>

#include "tests/sim/test_support.h"

namespace tpusim::test {

struct Result {
  int exit_code = -1;
  std::string out;
  std::string err;
  int err_lines() const {
    int n = 0;
    for (char c : err) n += c == '\n';
    return n;
  }
};

// Runs build/tpusim with `args` (shell words) in `cwd`; a hang is cut off by timeout(1) and fails
// the test.
inline Result run_tpusim(const std::string& args, const std::string& cwd = TPUSIM_SOURCE_DIR) {
  TempDir dir;
  const std::string out = dir.path("out"), err = dir.path("err");
  const std::string command = "cd '" + cwd + "' && timeout 60 '" TPUSIM_EXE "' " + args + " > '" +
                              out + "' 2> '" + err + "' < /dev/null";
  const int status = std::system(command.c_str());
  Result r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  REQUIRE(r.exit_code != 124);  // timeout(1) killed it: a hang
  return r;
}

}  // namespace tpusim::test
