#pragma once
// Runs a sweep's points as child processes, N at a time (SystemC elaborates once per process,
// so every simulation needs its own), and shows progress: one updating line on a terminal,
// a plain line per finished point otherwise.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tpusim::sweep {

struct Job {
  std::uint64_t id = 0;
  std::vector<std::string> argv;  // argv[0] is the program
  std::string dir;                // the child's stdout.txt and stderr.txt go here
  std::string label;              // names the point in progress lines
};

struct JobOutcome {
  bool exited_ok = false;  // exit status 0
  std::string error;       // otherwise: one line, the child's last stderr line and how it ended
  double wall_seconds = 0;
};

// What the caller made of a finished job: a point is ok only when its report could be read.
struct JobVerdict {
  bool ok = false;
  std::string summary;  // shown after the point's label
};

struct RunOptions {
  unsigned parallel = 1;
  double timeout_seconds = 0;  // per point; 0: none
  bool tty = false;            // one updating progress line instead of a line per point
};

enum class RunEnd { kDone, kInterrupted };

// Starts the jobs in order, at most `parallel` at once; `on_done` runs in this process as each
// ends, in completion order. SIGINT/SIGTERM stop the run: running children are killed and not
// reported. Children die with this process (PR_SET_PDEATHSIG), so a killed sweep leaves none.
RunEnd run_jobs(const std::vector<Job>& jobs, const RunOptions& options,
                const std::function<JobVerdict(const Job&, const JobOutcome&)>& on_done);

// The path of the running executable (/proc/self/exe), for children that run tpusim itself.
std::string self_executable();

}  // namespace tpusim::sweep
