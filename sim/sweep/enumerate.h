#pragma once
// Points of a sweep: every combination of workload, cartesian axes and zip groups, in a fixed
// order, filtered by the constraints; and the deterministic slices that shards run.

#include <cstdint>
#include <string>
#include <vector>

#include "sim/sweep/sweep_file.h"

namespace tpusim::sweep {

struct Point {
  // Position in the full enumeration before constraints: workloads outermost, then the
  // cartesian axes in file order, then the zip groups; the last varies fastest. Stable under
  // edits of the constraints, so resumed and merged results keep their ids.
  std::uint64_t id = 0;
  std::size_t workload = 0;         // into SweepFile::expanded
  std::vector<std::size_t> values;  // per axis, into Axis::values
};

// More combinations than this is a mistake in the file, not a sweep to run.
inline constexpr std::uint64_t kMaxCombinations = 1'000'000;

// The points that satisfy every constraint, in id order. `combinations` (optional) receives the
// count before constraints.
std::vector<Point> enumerate_points(const SweepFile& sweep, std::uint64_t* combinations = nullptr);

// `--shard i/N`: 0-based i < N.
struct Shard {
  unsigned index = 0;
  unsigned count = 1;
};
Shard parse_shard(const std::string& text);  // InputError when malformed

// The points at positions p (0-based, in id order) with p mod N == i: slices of equal size
// whatever the constraints removed, and together exactly the unsharded points.
std::vector<Point> shard_points(const std::vector<Point>& points, const Shard& shard);

// A point's cells for SweepFile::columns() (parameters, then axes).
std::vector<std::string> point_cells(const SweepFile& sweep, const Point& point);

// The `--set key=value` overrides of a point, in the order they apply: section swaps first
// (`set:`, then axes), then plain values (`set:`, then axes), so a swapped-in preset can
// still be adjusted key by key.
std::vector<std::string> point_overrides(const SweepFile& sweep, const Point& point);

}  // namespace tpusim::sweep
