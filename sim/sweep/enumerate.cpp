#include "sim/sweep/enumerate.h"

#include <cstdlib>

namespace tpusim::sweep {

std::vector<Point> enumerate_points(const SweepFile& sweep, std::uint64_t* combinations) {
  // Dimensions of the odometer: workloads, each cartesian axis, each zip group.
  std::vector<std::size_t> sizes{sweep.expanded.size()};
  std::vector<int> dim_of_axis;
  std::vector<int> dim_of_group(sweep.zip_groups, -1);
  for (const Axis& a : sweep.axes) {
    if (a.zip_group < 0) {
      dim_of_axis.push_back(static_cast<int>(sizes.size()));
      sizes.push_back(a.values.size());
    } else {
      int& dim = dim_of_group[a.zip_group];
      if (dim < 0) {
        dim = static_cast<int>(sizes.size());
        sizes.push_back(a.values.size());
      }
      dim_of_axis.push_back(dim);
    }
  }
  std::uint64_t total = 1;
  for (std::size_t s : sizes) {
    total *= s;
    if (total > kMaxCombinations)
      throw ConfigError(SourceLocation{sweep.path}, "axes",
                        "more than " + std::to_string(kMaxCombinations) +
                            " combinations; split the sweep into several files");
  }
  if (combinations) *combinations = total;

  std::vector<std::string> cells;
  const std::size_t workload_key = sweep.columns().size();  // "workload" follows the columns
  const auto value_of = [&](std::size_t key) -> const std::string& { return cells[key]; };
  std::vector<Point> points;
  std::vector<std::size_t> at(sizes.size(), 0);
  for (std::uint64_t id = 0; id < total; ++id) {
    Point p;
    p.id = id;
    p.workload = at[0];
    for (int dim : dim_of_axis) p.values.push_back(at[dim]);
    cells = point_cells(sweep, p);
    cells.resize(workload_key);
    cells.push_back(sweep.expanded[p.workload].name);
    bool keep = true;
    for (const Constraint& c : sweep.constraints) keep = keep && c.holds(value_of);
    if (keep) points.push_back(std::move(p));
    for (std::size_t d = sizes.size(); d > 0 && ++at[d - 1] == sizes[d - 1];) at[--d] = 0;
  }
  return points;
}

Shard parse_shard(const std::string& text) {
  const std::size_t slash = text.find('/');
  const auto number = [&](const std::string& s, unsigned long* out) {
    if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos)
      return false;
    *out = std::strtoul(s.c_str(), nullptr, 10);
    return true;
  };
  unsigned long i = 0, n = 0;
  if (slash == std::string::npos || !number(text.substr(0, slash), &i) ||
      !number(text.substr(slash + 1), &n) || n == 0 || i >= n)
    throw InputError("--shard " + text + ": expected i/N with 0 <= i < N (0-based), e.g. 0/4");
  return Shard{static_cast<unsigned>(i), static_cast<unsigned>(n)};
}

std::vector<Point> shard_points(const std::vector<Point>& points, const Shard& shard) {
  std::vector<Point> out;
  for (std::size_t p = shard.index; p < points.size(); p += shard.count) out.push_back(points[p]);
  return out;
}

std::vector<std::string> point_cells(const SweepFile& sweep, const Point& point) {
  std::vector<std::string> cells = sweep.expanded[point.workload].params;
  for (std::size_t a = 0; a < sweep.axes.size(); ++a)
    cells.push_back(sweep.axes[a].values[point.values[a]].text);
  return cells;
}

std::vector<std::string> point_overrides(const SweepFile& sweep, const Point& point) {
  std::vector<std::string> out;
  for (const bool swaps : {true, false}) {
    for (const Setting& s : sweep.settings)
      if (s.value.file.empty() != swaps) out.push_back(s.key + "=" + s.value.set_text);
    for (std::size_t a = 0; a < sweep.axes.size(); ++a) {
      const Value& v = sweep.axes[a].values[point.values[a]];
      if (v.file.empty() != swaps) out.push_back(sweep.axes[a].key + "=" + v.set_text);
    }
  }
  return out;
}

}  // namespace tpusim::sweep
