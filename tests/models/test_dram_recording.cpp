// A recording of a memory's calls on its timeline channels, replayed on fresh channels: the
// same spec must reproduce every decision, another spec must show the ones it changes, and a
// damaged file is refused naming it.

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>
#include <catch2/catch.hpp>

#include "models/hbm/dram_recording.h"
#include "tests/models/dram_test_spec.h"

using namespace tpusim;
using namespace tpusim::models;
using namespace tpusim::test::dram;

namespace {

DramSpec spec() {
  DramSpec s = channel_spec();
  s.engine = DramEngine::kTimeline;
  return s;
}

std::string temp_path(const char* name) {
  return (std::filesystem::temp_directory_path() /
          ("tpusim_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

DramAddress at(std::uint32_t group, std::uint32_t row, std::uint32_t column = 0) {
  DramAddress a;
  a.bank_group = group;
  a.row = row;
  a.column = column;
  return a;
}

// A closed bank (a miss at 0), a hit at 100 and a conflict at 200, each released once decided,
// as a memory does: the conflict waits until a settle past its cycle.
void record_three_pieces(const std::string& path) {
  DramTimeline d(spec());
  DramRecorder rec(path, 1);
  const auto serve = [&](const DramAddress& a, std::uint64_t cycle) {
    const auto id = d.serve(&a, 1, false, cycle, cycle);
    rec.serve(0, &a, 1, false, cycle, cycle, id);
    return id;
  };
  const auto release = [&](DramTimeline::PieceId id) {
    REQUIRE(d.piece(id).done);
    rec.release(0, id, d.piece(id));
    d.release(id);
  };
  release(serve(at(0, 5), 0));
  release(serve(at(0, 5, 1), 100));
  const auto conflict = serve(at(0, 6), 200);
  REQUIRE_FALSE(d.piece(conflict).done);
  d.settle(201);
  rec.settle(0, 201);
  release(conflict);
  d.end_run(1000);
  rec.end_run(1000);
}

// A file of raw words, for records the recorder would never write.
void write_words(const std::string& path, std::initializer_list<std::uint64_t> words) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  for (const std::uint64_t w : words) f.write(reinterpret_cast<const char*>(&w), sizeof w);
}
constexpr std::uint64_t kMagic = 0x316d726473757074;  // "tpusdrm1" read as a little-endian word
constexpr std::uint64_t kServe = 1, kRelease = 3, kEnd = 4;

}  // namespace

TEST_CASE("dram recording: a replay on the same spec reproduces every decision",
          "[dram][recording]") {
  const std::string path = temp_path("same.rec");
  record_three_pieces(path);
  const DramReplay r = DramRecording(path).replay(spec());
  CHECK(r.serves == 3);
  CHECK(r.settles == 1);
  CHECK(r.releases == 3);
  CHECK(r.mismatches == 0);
  std::filesystem::remove(path);
}

TEST_CASE("dram recording: a replay on another spec counts the decisions it changes",
          "[dram][recording]") {
  const std::string path = temp_path("other.rec");
  record_three_pieces(path);
  DramSpec slower = spec();
  slower.timing.tRCD = Duration::of_cycles(RCD + 1);
  // The miss (RCD + CL + BURST) and the conflict (200 + RP + RCD + CL + BURST) move; the hit at
  // 100 (100 + CL + BURST) does not.
  CHECK(DramRecording(path).replay(slower).mismatches == 2);
  std::filesystem::remove(path);
}

TEST_CASE("dram recording: a damaged recording is refused naming its file", "[dram][recording]") {
  const std::string path = temp_path("cut.rec");
  record_three_pieces(path);
  const auto size = std::filesystem::file_size(path);
  SECTION("cut inside a record") {
    std::filesystem::resize_file(path, size - 3 * sizeof(std::uint64_t));
    CHECK_THROWS_WITH(DramRecording(path), Catch::Contains(path) && Catch::Contains("cut short"));
  }
  SECTION("cut before the end of the run") {
    std::filesystem::resize_file(path, size - 2 * sizeof(std::uint64_t));
    CHECK_THROWS_WITH(DramRecording(path),
                      Catch::Contains(path) && Catch::Contains("before the end of the run"));
  }
  SECTION("not a recording") {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << "channels: 32\n";
    CHECK_THROWS_WITH(DramRecording(path), Catch::Contains(path) && Catch::Contains("bad header"));
  }
  SECTION("an unknown record kind") {
    write_words(path, {kMagic, 1, 9, 0, kEnd, 0});
    CHECK_THROWS_WITH(DramRecording(path), Catch::Contains("unknown record kind"));
  }
  SECTION("a piece of no bursts") {
    write_words(path, {kMagic, 1, kServe, 0, 0, 0, 0, kEnd, 0});
    CHECK_THROWS_WITH(DramRecording(path), Catch::Contains("no bursts"));
  }
  SECTION("a first piece with an id a channel gives only later") {
    write_words(path, {kMagic, 1, kServe, 1, 0, 0, 5, 0, 0, kEnd, 0});
    CHECK_THROWS_WITH(DramRecording(path), Catch::Contains("cannot have given yet"));
  }
  SECTION("a release of a piece never served") {
    write_words(path, {kMagic, 1, kRelease, 0, 0, 0, 0, 0, 0, kEnd, 0});
    CHECK_THROWS_WITH(DramRecording(path), Catch::Contains("never served"));
  }
  SECTION("a burst outside the spec's banks") {
    write_words(path, {kMagic, 1, kServe, 1, 0, 0, 0, 7, 0, kEnd, 0});
    CHECK_THROWS_WITH(DramRecording(path).replay(spec()), Catch::Contains("outside the spec"));
  }
  SECTION("replayed on a spec with another channel count") {
    DramSpec two = spec();
    two.channels = 2;
    CHECK_THROWS_WITH(DramRecording(path).replay(two), Catch::Contains("2 channels"));
  }
  std::filesystem::remove(path);
}
