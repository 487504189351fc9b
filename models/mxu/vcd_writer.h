#pragma once
// A minimal Value Change Dump writer (IEEE 1364 section 18): declarations in nested scopes, then
// time stamps with the values that changed. Only what GTKWave and Surfer need: wires of 1..64
// bits, vectors in binary with leading zeros dropped.

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace tpusim::models {

class VcdWriter {
 public:
  // `timescale` is one VCD time unit, e.g. "1 ps".
  VcdWriter(std::ostream& out, const std::string& timescale);

  void push_scope(const std::string& name);
  void pop_scope();
  // Declares a wire of `width` bits in the current scope; returns its handle for change().
  std::size_t add(const std::string& name, std::uint32_t width);
  void end_definitions();

  // Starts time `t` (non-decreasing). Changes after it belong to it.
  void time(std::uint64_t t);
  // Records `value` (its low `width` bits) if it differs from the last one written.
  void change(std::size_t signal, std::uint64_t value);
  // Writes the final time stamp so viewers show the last values for a whole period.
  void close(std::uint64_t t);

 private:
  struct Signal {
    std::string id;
    std::uint32_t width;
    std::uint64_t value;
    bool written;
  };
  static std::string make_id(std::size_t index);

  std::ostream& out_;
  std::vector<Signal> signals_;
  bool defining_ = true;
  bool time_written_ = false;
  std::uint64_t time_ = 0;
};

}  // namespace tpusim::models
