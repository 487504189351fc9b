#include "workloads/suggest.h"

#include <algorithm>

namespace tpusim::workloads {

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
