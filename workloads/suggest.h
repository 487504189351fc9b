#pragma once
// "Did you mean" for misspelt keys, operator kinds and tensor names. Kept here rather than shared
// with sim/config because workloads may not depend on it (DESIGN.md folder rules).

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace tpusim::workloads {

// Levenshtein distance (insert, delete, substitute each cost 1).
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate closest to `word`, or "" when none is close enough to be a likely typo
// (distance at most max(2, |word| / 3)). Ties go to the earlier candidate.
std::string nearest(std::string_view word, const std::vector<std::string>& candidates);

// " (did you mean 'x'?)" or, with no close candidate and a short list, " (expected one of: a, b)";
// otherwise "". Ready to append to a message.
std::string suggestion(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace tpusim::workloads
