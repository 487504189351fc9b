// The trace recorder's merged tracks (the memory's transactions): intervals of one operator that
// touch or overlap become one, in whatever order they finish; other operators stay apart.

#include <catch2/catch.hpp>

#include "models/common/trace.h"

using tpusim::models::TraceRecorder;

TEST_CASE("trace: merged intervals of one operator join in any finishing order", "[trace]") {
  TraceRecorder trace(true);
  const std::uint32_t track = trace.add_track("chip.memory");
  trace.record_merged(track, 0, 100, 200);
  trace.record_merged(track, 0, 150, 300);  // overlaps: extends the end
  trace.record_merged(track, 0, 50, 120);   // finished later but arrived earlier: extends the start
  trace.record_merged(track, 1, 250, 400);  // another operator: its own interval
  trace.record_merged(track, 0, 300, 350);  // touches operator 0's interval
  trace.record_merged(track, 0, 500, 600);  // a gap: a new interval
  REQUIRE(trace.events().size() == 3);
  CHECK(trace.events()[0].start_ps == 50);
  CHECK(trace.events()[0].end_ps == 350);
  CHECK(trace.events()[1].op == 1);
  CHECK(trace.events()[1].start_ps == 250);
  CHECK(trace.events()[2].start_ps == 500);
  CHECK(trace.events()[2].end_ps == 600);
  // The operator spans cover every piece whether or not it was merged.
  CHECK(trace.op_spans()[0].start_ps == 50);
  CHECK(trace.op_spans()[0].end_ps == 600);
}

TEST_CASE("trace: a recorder that is off keeps operator spans and no events", "[trace]") {
  TraceRecorder trace(false);
  const std::uint32_t track = trace.add_track("chip.memory");
  trace.record_merged(track, 2, 10, 20);
  trace.record(track, 7, 2, 5, 15);
  CHECK(trace.events().empty());
  CHECK(trace.op_spans()[2].start_ps == 5);
  CHECK(trace.op_spans()[2].end_ps == 20);
}
