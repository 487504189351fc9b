#pragma once
// "Did you mean" for misspelt keys, operator kinds and tensor names (the distance itself is
// shared with sim/config through sim/base).

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "sim/base/edit_distance.h"

namespace tpusim::workloads {

// The candidate closest to `word`, or "" when none is close enough to be a likely typo
// (distance at most max(2, |word| / 3)). Ties go to the earlier candidate.
std::string nearest(std::string_view word, const std::vector<std::string>& candidates);

// " (did you mean 'x'?)" or, with no close candidate and a short list, " (expected one of: a, b)";
// otherwise "". Ready to append to a message.
std::string suggestion(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace tpusim::workloads
