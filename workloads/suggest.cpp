#include "workloads/suggest.h"

#include <algorithm>

namespace tpusim::workloads {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string nearest(std::string_view word, const std::vector<std::string>& candidates) {
  // Names from garbage input can be long; comparing them costs |a|*|b|, so skip the hopeless.
  const std::size_t limit = std::max<std::size_t>(2, word.size() / 3);
  std::string best;
  std::size_t best_distance = limit + 1;
  for (const std::string& c : candidates) {
    const std::size_t gap =
        c.size() > word.size() ? c.size() - word.size() : word.size() - c.size();
    if (gap >= best_distance || word.size() > 256) continue;
    const std::size_t d = edit_distance(word, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  return best;
}

std::string suggestion(std::string_view word, const std::vector<std::string>& candidates) {
  const std::string best = nearest(word, candidates);
  if (!best.empty()) return " (did you mean '" + best + "'?)";
  if (candidates.empty() || candidates.size() > 24) return "";
  std::string list;
  for (const std::string& c : candidates) list += (list.empty() ? "" : ", ") + c;
  return " (expected one of: " + list + ")";
}

}  // namespace tpusim::workloads
