#include "sim/sweep/runner.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <thread>

#include "sim/base/errors.h"

namespace tpusim::sweep {

namespace {

using Clock = std::chrono::steady_clock;

volatile sig_atomic_t g_stop_signal = 0;
void on_stop_signal(int sig) { g_stop_signal = sig; }

// Installs the stop handlers for the run and puts the previous ones back after it.
class StopSignals {
 public:
  StopSignals() {
    g_stop_signal = 0;
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  ~StopSignals() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

std::string last_line(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string line, last;
  while (std::getline(in, line)) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (!line.empty()) last = line;
  }
  for (char& c : last)
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  if (last.size() > 400) last = last.substr(0, 400) + "...";
  return last;
}

std::string duration_text(double seconds) {
  const long s = static_cast<long>(seconds + 0.5);
  char text[32];
  if (s >= 3600)
    std::snprintf(text, sizeof text, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
  else
    std::snprintf(text, sizeof text, "%ld:%02ld", s / 60, s % 60);
  return text;
}

class Progress {
 public:
  Progress(std::size_t total, bool tty) : total_(total), tty_(tty), start_(Clock::now()) {}

  void finished(const Job& job, const JobVerdict& verdict) {
    ++done_;
    failed_ += !verdict.ok;
    const std::string line = "[" + std::to_string(done_) + "/" + std::to_string(total_) +
                             "] point " + std::to_string(job.id) + " " + job.label + ": " +
                             verdict.summary;
    if (!tty_) {
      std::cerr << line << "\n" << std::flush;
      return;
    }
    // On a terminal only failures keep a line of their own; the bar is redrawn below them.
    if (!verdict.ok) std::cerr << "\r\033[K" << line << "\n";
    draw();
  }

  void tick() {
    if (tty_ && Clock::now() - last_draw_ > std::chrono::milliseconds(250)) draw();
  }

  void close() {
    if (tty_) {
      draw();
      std::cerr << "\n" << std::flush;
    }
  }

 private:
  void draw() {
    last_draw_ = Clock::now();
    const double elapsed = std::chrono::duration<double>(last_draw_ - start_).count();
    const double rate = elapsed > 0 ? done_ / elapsed : 0;
    std::string line = "\r\033[Ksweep: " + std::to_string(done_) + "/" + std::to_string(total_) +
                       " points, " + std::to_string(failed_) + " failed";
    char text[64];
    std::snprintf(text, sizeof text, ", %.2f points/s", rate);
    line += text;
    if (done_ > 0 && done_ < total_) line += ", ETA " + duration_text((total_ - done_) / rate);
    line += ", elapsed " + duration_text(elapsed);
    std::cerr << line << std::flush;
  }

  std::size_t total_;
  bool tty_;
  std::size_t done_ = 0;
  std::size_t failed_ = 0;
  Clock::time_point start_;
  Clock::time_point last_draw_{};
};

struct Running {
  const Job* job;
  Clock::time_point start;
  bool timed_out = false;
};

int open_output(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw InputError(path + ": cannot write file (" + std::strerror(errno) + ")");
  return fd;
}

pid_t start(const Job& job) {
  const int out = open_output((std::filesystem::path(job.dir) / "stdout.txt").string());
  const int err = open_output((std::filesystem::path(job.dir) / "stderr.txt").string());
  const int in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  // Everything the child needs is built before fork: after it, only async-signal-safe calls.
  std::vector<char*> argv;
  for (const std::string& a : job.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);  // the sweep died before prctl took effect
    dup2(in, STDIN_FILENO);
    dup2(out, STDOUT_FILENO);
    dup2(err, STDERR_FILENO);
    execv(argv[0], argv.data());
    const char message[] = "tpusim sweep: cannot execute the point's process\n";
    [[maybe_unused]] const ssize_t w = write(STDERR_FILENO, message, sizeof message - 1);
    _exit(127);
  }
  const int fork_errno = errno;
  ::close(out);
  ::close(err);
  if (in >= 0) ::close(in);
  if (pid < 0) throw Error(std::string("cannot start a process: ") + std::strerror(fork_errno));
  return pid;
}

JobOutcome outcome_of(const Running& r, int status, double timeout_seconds) {
  JobOutcome o;
  o.wall_seconds = std::chrono::duration<double>(Clock::now() - r.start).count();
  const std::string last = last_line((std::filesystem::path(r.job->dir) / "stderr.txt").string());
  const std::string tail = last.empty() ? "" : ": " + last;
  if (r.timed_out) {
    char text[64];
    std::snprintf(text, sizeof text, "timed out after %g s (killed)", timeout_seconds);
    o.error = text + tail;
  } else if (WIFEXITED(status)) {
    o.exited_ok = WEXITSTATUS(status) == 0;
    if (!o.exited_ok) o.error = "exit " + std::to_string(WEXITSTATUS(status)) + tail;
  } else if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    o.error = "crashed: signal " + std::to_string(sig) + " (" + strsignal(sig) + ")" + tail;
  } else {
    o.error = "ended with wait status " + std::to_string(status);
  }
  return o;
}

}  // namespace

std::string self_executable() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw Error("cannot find the tpusim executable (/proc/self/exe): " + ec.message());
  return exe.string();
}

RunEnd run_jobs(const std::vector<Job>& jobs, const RunOptions& options,
                const std::function<JobVerdict(const Job&, const JobOutcome&)>& on_done) {
  StopSignals stop_signals;
  Progress progress(jobs.size(), options.tty);
  std::map<pid_t, Running> running;
  std::size_t next = 0;
  const unsigned parallel = std::max(1u, options.parallel);
  while (next < jobs.size() || !running.empty()) {
    if (g_stop_signal) {
      for (const auto& [pid, r] : running) kill(pid, SIGKILL);
      for (const auto& [pid, r] : running) waitpid(pid, nullptr, 0);
      progress.close();
      return RunEnd::kInterrupted;
    }
    while (running.size() < parallel && next < jobs.size()) {
      const Job& job = jobs[next++];
      running.emplace(start(job), Running{&job, Clock::now()});
    }
    int status = 0;
    const pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid > 0) {
      const auto it = running.find(pid);
      if (it == running.end()) continue;  // not a point (nothing else forks here, but be safe)
      const Running r = it->second;
      running.erase(it);
      // A child that died of the user's Ctrl-C is not a failed point; the loop stops next.
      if (g_stop_signal && WIFSIGNALED(status)) continue;
      progress.finished(*r.job, on_done(*r.job, outcome_of(r, status, options.timeout_seconds)));
      continue;
    }
    if (options.timeout_seconds > 0) {
      for (auto& [child, r] : running) {
        const double age = std::chrono::duration<double>(Clock::now() - r.start).count();
        if (!r.timed_out && age > options.timeout_seconds) {
          r.timed_out = true;
          kill(child, SIGKILL);
        }
      }
    }
    progress.tick();
    // Polling keeps this loop simple (no SIGCHLD plumbing); 10 ms is nothing next to a run.
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  progress.close();
  return RunEnd::kDone;
}

}  // namespace tpusim::sweep
