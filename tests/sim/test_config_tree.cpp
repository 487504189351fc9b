#include <catch2/catch.hpp>

#include "sim/config/config_tree.h"
#include "tests/sim/test_support.h"

using namespace tpusim;
using namespace tpusim::config;
using tpusim::test::position_of;
using tpusim::test::TempDir;
using tpusim::test::error_of;

namespace {

std::string text_at(const ConfigNode& root, const std::string& path) {
  const ConfigNode* n = find_path(root, path);
  REQUIRE(n != nullptr);
  REQUIRE(n->is_scalar());
  return n->text();
}


}  // namespace

TEST_CASE("config tree: every node remembers file, line and column", "[config][tree]") {
  const std::string text = "a: 1\nb:\n  c: hello\n  d: [1, 2]\n";
  const ConfigNode root = parse_yaml(text, "x.yaml");
  const ConfigNode* c = find_path(root, "b.c");
  REQUIRE(c);
  CHECK(c->where().str() == "x.yaml:" + position_of(text, "hello"));
  CHECK(c->key_where().str() == "x.yaml:" + position_of(text, "c:"));
  CHECK(find_path(root, "b.d")->items().size() == 2);
  CHECK(find_path(root, "b.e") == nullptr);
}

TEST_CASE("config tree: duplicate keys and bad YAML are errors with positions",
          "[config][tree]") {
  const std::string dup = "a: 1\nb: 2\na: 3\n";
  CHECK(error_of([&] { parse_yaml(dup, "d.yaml"); }) ==
        "d.yaml:" + position_of(dup, "a: 3") + ": a: duplicate key (each key may appear once)");
  const std::string two_docs = "a: 1\n---\nb: 2\n";
  CHECK(error_of([&] { parse_yaml(two_docs, "m.yaml"); }) ==
        "m.yaml:3:1: more than one YAML document ('---' starts another); a config is one document");
  const std::string merge = "base: &b {x: 1}\nc:\n  <<: *b\n";
  CHECK(error_of([&] { parse_yaml(merge, "y.yaml"); }) ==
        "y.yaml:" + position_of(merge, "<<") + ": <<: YAML merge keys are not supported; use extends");
  const std::string broken = "a: [1, 2\nb: 3\n";
  CHECK_THAT(error_of([&] { parse_yaml(broken, "b.yaml"); }),
             Catch::StartsWith("b.yaml:") && Catch::Contains("invalid YAML"));
  // Nine levels of nine-fold aliases would expand to 9^9 values.
  std::string bomb = "l0: &l0 [1, 1, 1, 1, 1, 1, 1, 1, 1]\n";
  for (int i = 1; i <= 9; ++i) {
    const std::string prev = "*l" + std::to_string(i - 1);
    bomb += "l" + std::to_string(i) + ": &l" + std::to_string(i) + " [" + prev;
    for (int k = 1; k < 9; ++k) bomb += ", " + prev;
    bomb += "]\n";
  }
  CHECK_THAT(error_of([&] { parse_yaml(bomb, "bomb.yaml"); }),
             Catch::StartsWith("bomb.yaml:") &&
                 Catch::EndsWith("more than 100000 values (counting what aliases expand to), more "
                                 "than any config holds"));
  CHECK(error_of([&] { parse_yaml(std::string("a: 1\0b", 6), "n.yaml"); }) ==
        "n.yaml:1:1: not a YAML text file (contains NUL bytes)");
  // An alias inside the node it names is an endless value, which yaml-cpp builds as a cycle:
  // it used to be walked until the stack overflowed. The error names the node aliased.
  const std::string endless = "an alias refers to a node that contains it (an endless value)";
  CHECK(error_of([] { parse_yaml("&a [*a]\n", "s.yaml"); }) == "s.yaml:1:1: " + endless);
  CHECK(error_of([] { parse_yaml("a: &a {b: *a}\n", "m.yaml"); }) == "m.yaml:1:4: " + endless);
  CHECK(error_of([] { parse_yaml("a: &a {b: [1, {c: *a}]}\n", "d.yaml"); }) ==
        "d.yaml:1:4: " + endless);
  // The same node aliased twice side by side is no cycle.
  const ConfigNode twice = parse_yaml("x: &a {b: 1}\ny: [*a, *a]\n", "t.yaml");
  REQUIRE(find_path(twice, "y") != nullptr);
  CHECK(find_path(twice, "y")->items().size() == 2);
}

TEST_CASE("config tree: a key glued to its value by ':' without a space is an error",
          "[config][tree]") {
  // YAML reads `int16:0.25` as one key with no value; a null reads as an unset key, so the
  // entry would silently vanish.
  const std::string glued = "precisions: {int8: 1, int16:0.25}\n";
  CHECK(error_of([&] { parse_yaml(glued, "p.yaml"); }) ==
        "p.yaml:" + position_of(glued, "int16") +
            ": int16:0.25: a key with no value; YAML needs a space after ':' (write 'int16: "
            "0.25')");
  const std::string lone = "memory: {model:hbm}\n";
  CHECK_THAT(error_of([&] { parse_yaml(lone, "m.yaml"); }),
             Catch::StartsWith("m.yaml:" + position_of(lone, "model")) &&
                 Catch::Contains("(write 'model: hbm')"));
  // Written with the space, or quoted, a key may still hold a ':' or be unset.
  const ConfigNode spaced = parse_yaml("precisions: {int8: 1, int16: 0.25}\n", "ok.yaml");
  REQUIRE(find_path(spaced, "precisions.int16") != nullptr);
  CHECK(find_path(spaced, "precisions.int16")->text() == "0.25");
  const ConfigNode quoted = parse_yaml("m: {\"a:b\": ~, c: }\n", "q.yaml");
  CHECK(find_path(quoted, "m")->entries().size() == 2);
}

TEST_CASE("config tree: a stray ',' is an error, not an endless stream of empty documents",
          "[config][tree]") {
  // yaml-cpp 0.7 starts empty documents forever on these (jbeder/yaml-cpp#1040): before the
  // guard, parse_yaml never returned (CTest's timeout for this binary bounds a regression).
  CHECK(error_of([] { parse_yaml(",", "c.yaml"); }) == "c.yaml:1:1: invalid YAML: unexpected ','");
  CHECK(error_of([] { parse_yaml("\n\n  ,\n", "c.yaml"); }) ==
        "c.yaml:3:3: invalid YAML: unexpected ','");
  CHECK(error_of([] { parse_yaml("[1],", "c.yaml"); }) ==
        "c.yaml:1:4: invalid YAML: unexpected ','");
  CHECK(error_of([] { parse_yaml("- a\n,\n", "c.yaml"); }) ==
        "c.yaml:2:1: invalid YAML: unexpected ','");
  ConfigNode root = ConfigNode::map(SourceLocation{"x.yaml", 1, 1});
  CHECK(error_of([&] { apply_override(root, "core.mxu.rows=,"); }) ==
        "--set core.mxu.rows=,: core.mxu.rows: invalid YAML at column 1 of the value: "
        "unexpected ','");
  // A second document is still named as one, where it starts to hold something.
  CHECK(error_of([] { parse_yaml("a: 1\n---\n", "m.yaml"); }) ==
        "m.yaml:3:1: more than one YAML document ('---' starts another); a config is one document");
}

TEST_CASE("config tree: empty, scalar and missing files are rejected at load", "[config][tree]") {
  TempDir dir;
  const std::string empty = dir.write("empty.yaml", "");
  CHECK(error_of([&] { load_config_file(empty); }) ==
        empty + ":1:1: expected a YAML mapping of keys at the top level; the file is empty");
  const std::string scalar = dir.write("scalar.yaml", "just some words\n");
  CHECK(error_of([&] { load_config_file(scalar); }) ==
        scalar + ":1:1: expected a YAML mapping of keys at the top level; found a scalar or list");
  const std::string missing = dir.path("missing.yaml");
  CHECK(error_of([&] { load_config_file(missing); }) == missing + ": no such file");
  const std::string huge = dir.write("huge.yaml", "a: [" + std::string(1100000, '1') + "]\n");
  CHECK(error_of([&] { load_config_file(huge); }) ==
        huge + ": '" + huge + "' is larger than 1 MiB, more than any config holds");
  CHECK(error_of([&] { load_config_file(dir.path("")); }) ==
        dir.path("") + ": '" + dir.path("") + "' is a directory, not a config file");
}

TEST_CASE("config tree: extends merges deeply, replaces scalars and lists, null deletes",
          "[config][tree][extends]") {
  TempDir dir;
  dir.write("base/grand.yaml", "g: 1\nsection: {x: 1, y: 2, z: 3}\nlist: [1, 2, 3]\n");
  dir.write("base/parent.yaml", "extends: grand.yaml\nsection: {y: 20}\np: parent\n");
  const std::string child = dir.write(
      "child.yaml", "extends: base/parent.yaml\nsection: {z: 30, w: 40}\nlist: [9]\ng: null\n");
  const ConfigNode root = load_config_file(child);
  CHECK(text_at(root, "section.x") == "1");   // from the grandparent
  CHECK(text_at(root, "section.y") == "20");  // parent over grandparent
  CHECK(text_at(root, "section.z") == "30");  // child over both
  CHECK(text_at(root, "section.w") == "40");
  CHECK(text_at(root, "p") == "parent");
  REQUIRE(find_path(root, "list")->items().size() == 1);  // lists replace, not append
  // null removes an inherited key: it stays as a null (which readers take as absent) where the
  // key was, so an error about the removed key can name the line that removed it.
  REQUIRE(find_path(root, "g") != nullptr);
  CHECK(find_path(root, "g")->is_null());
  CHECK(find_path(root, "g")->where().file == child);
  CHECK(find_path(root, "extends") == nullptr);
  // A value keeps the location of the file that wrote it.
  CHECK(find_path(root, "section.x")->where().file == dir.path("base/grand.yaml"));
  CHECK(find_path(root, "section.z")->where().file == child);
}

TEST_CASE("config tree: extends works inside a section and with a list of files",
          "[config][tree][extends]") {
  TempDir dir;
  dir.write("mem/a.yaml", "clock: 1 GHz\nrows: 10\n");
  dir.write("mem/b.yaml", "rows: 20\ncols: 5\n");
  const std::string chip =
      dir.write("chip.yaml", "memory:\n  hbm:\n    extends: [mem/a.yaml, mem/b.yaml]\n    cols: 7\n");
  const ConfigNode root = load_config_file(chip);
  CHECK(text_at(root, "memory.hbm.clock") == "1 GHz");
  CHECK(text_at(root, "memory.hbm.rows") == "20");  // later file wins
  CHECK(text_at(root, "memory.hbm.cols") == "7");   // own keys win
}

TEST_CASE("config tree: a cycle of extends and a missing base are named where written",
          "[config][tree][extends]") {
  TempDir dir;
  const std::string a_text = "extends: b.yaml\nx: 1\n";
  const std::string b_text = "y: 2\nextends: a.yaml\n";
  const std::string a = dir.write("a.yaml", a_text);
  const std::string b = dir.write("b.yaml", b_text);
  CHECK(error_of([&] { load_config_file(a); }) ==
        b + ":" + position_of(b_text, "a.yaml") + ": extends: cycle of extends: a.yaml -> b.yaml -> a.yaml");
  const std::string self_text = "extends: self.yaml\n";
  const std::string self = dir.write("self.yaml", self_text);
  CHECK(error_of([&] { load_config_file(self); }) ==
        self + ":1:10: extends: cycle of extends: self.yaml -> self.yaml");
  const std::string orphan_text = "x: 1\nextends: nowhere.yaml\n";
  const std::string orphan = dir.write("orphan.yaml", orphan_text);
  CHECK(error_of([&] { load_config_file(orphan); }) ==
        orphan + ":" + position_of(orphan_text, "nowhere") + ": extends: '" +
            dir.path("nowhere.yaml") + "': no such file");
  const std::string bad = dir.write("bad.yaml", "extends: {a: 1}\n");
  CHECK(error_of([&] { load_config_file(bad); }) ==
        bad + ":1:10: extends: expected a file path or a list of paths");
}

TEST_CASE("config tree: --set overrides, creates, replaces and removes keys", "[config][tree][set]") {
  ConfigNode root = parse_yaml("core:\n  mxu:\n    rows: 128\n    precisions: {int8: 1, bf16: 1}\n", "c.yaml");
  apply_override(root, "core.mxu.rows=64");
  CHECK(text_at(root, "core.mxu.rows") == "64");
  CHECK(find_path(root, "core.mxu.rows")->where().file == "--set core.mxu.rows=64");
  apply_override(root, "core.vpu.lanes=8");  // a new section is created on the way
  CHECK(text_at(root, "core.vpu.lanes") == "8");
  apply_override(root, "core.mxu.precisions={int8: 2}");  // a mapping value replaces whole
  CHECK(find_path(root, "core.mxu.precisions")->entries().size() == 1);
  CHECK(text_at(root, "core.mxu.precisions.int8") == "2");
  apply_override(root, "core.mxu.rows=null");  // kept as a null, which reads as absent
  CHECK(find_path(root, "core.mxu.rows")->is_null());
  CHECK(find_path(root, "core.mxu.rows")->where().file == "--set core.mxu.rows=null");
  apply_override(root, "core.mxu=null");
  apply_override(root, "core.mxu.rows=32");  // a removed section is made again
  CHECK(text_at(root, "core.mxu.rows") == "32");
  apply_override(root, "clock=940 MHz");
  CHECK(text_at(root, "clock") == "940 MHz");
}

TEST_CASE("config tree: a mapping given to --set extends files as a file's mapping does",
          "[config][tree][set][extends]") {
  TempDir dir;
  const std::string base = dir.write("mem/hbm3.yaml", "standard: hbm3\nrows: 10\nstacks: 1\n");
  ConfigNode root =
      parse_yaml("memory:\n  hbm:\n    standard: hbm2\n    rows: 20\n    cols: 4\n", "c.yaml");
  apply_override(root, "memory.hbm={extends: " + base + ", stacks: 2}");
  CHECK(text_at(root, "memory.hbm.standard") == "hbm3");
  CHECK(text_at(root, "memory.hbm.rows") == "10");
  CHECK(text_at(root, "memory.hbm.stacks") == "2");         // its own keys win
  CHECK(find_path(root, "memory.hbm.cols") == nullptr);     // the section is replaced whole
  CHECK(find_path(root, "memory.hbm.extends") == nullptr);  // resolved, not left as a key
  CHECK(error_of([&] {
          apply_override(root, "memory.hbm={extends: " + dir.path("no.yaml") + "}");
        }).find("extends: '" + dir.path("no.yaml") + "': no such file") != std::string::npos);
  // A merged section's keys are all its own: they would override every value the file sets.
  CHECK(error_of([&] { apply_override(root, "memory.hbm.extends=" + base); }) ==
        "--set memory.hbm.extends=" + base +
            ": memory.hbm.extends: give extends inside a mapping that replaces the section, e.g. "
            "--set 'memory.hbm={extends: " +
            base + ", ...}'");
  CHECK(error_of([&] { apply_override(root, "extends=" + base); }) ==
        "--set extends=" + base +
            ": extends: a chip's own extends belongs in its file, not in --set");
}

TEST_CASE("config tree: malformed --set is rejected with the assignment named", "[config][tree][set]") {
  ConfigNode root = parse_yaml("core:\n  mxu: {rows: 1}\nclock: 1 GHz\n", "c.yaml");
  CHECK(error_of([&] { apply_override(root, "core.mxu.rows"); }) ==
        "--set core.mxu.rows: expected key.path=value");
  CHECK(error_of([&] { apply_override(root, "core.mxu.rows="); }) ==
        "--set core.mxu.rows=: core.mxu.rows: missing value after '=' (write null to remove the key)");
  CHECK(error_of([&] { apply_override(root, "core..rows=1"); }) ==
        "--set core..rows=1: core..rows: not a key path (expected names joined by '.')");
  CHECK(error_of([&] { apply_override(root, "=1"); }) ==
        "--set =1: not a key path (expected names joined by '.')");
  CHECK(error_of([&] { apply_override(root, "clock.x=1"); }) ==
        "--set clock.x=1: clock.x: 'clock' holds a value, not a section of keys");
  // The value's YAML error is placed within the value, not as if the assignment were a file.
  CHECK(error_of([&] { apply_override(root, "core.mxu.rows=[1,"); }) ==
        "--set core.mxu.rows=[1,: core.mxu.rows: invalid YAML at column 1 of the value: "
        "end of sequence flow not found");
  CHECK(error_of([&] { apply_override(root, "core.mxu.rows=,"); }) ==
        "--set core.mxu.rows=,: core.mxu.rows: invalid YAML at column 1 of the value: "
        "unexpected ','");
  // What is wrong with well-formed YAML keeps its own words and the key it is about (the second
  // `a` is the value's 8th character).
  CHECK(error_of([&] { apply_override(root, "core.mxu={a: 1, a: 2}"); }) ==
        "--set core.mxu={a: 1, a: 2}: core.mxu: at column 8 of the value, key 'a': duplicate "
        "key (each key may appear once)");
}

TEST_CASE("config tree: to_yaml output parses back to the same tree", "[config][tree]") {
  const std::string text = "name: \"x: y\"\ncore:\n  mxu: {rows: 8, precisions: {int8: 1}}\nl: [a, b]\n";
  const ConfigNode root = parse_yaml(text, "t.yaml");
  const ConfigNode again = parse_yaml(to_yaml(root), "again.yaml");
  CHECK(text_at(again, "name") == "x: y");
  CHECK(text_at(again, "core.mxu.rows") == "8");
  CHECK(text_at(again, "core.mxu.precisions.int8") == "1");
  CHECK(find_path(again, "l")->items().size() == 2);
}
