// Replays a run's timeline-engine channel calls (models/hbm/dram_recording.h) on the chip's
// DRAM spec: the engine's wall time apart from the rest of the run, and whether every piece is
// decided as recorded. Record with (one command line)
//   TPUSIM_DRAM_RECORD=run.rec tpusim run -c tpu-v4i -w gpt2-small-decode
//     --set memory.model=hbm --set memory.hbm.controller.engine=timeline
// then
//   dram_replay run.rec configs/chips/tpu-v4i.yaml --set memory.model=hbm
//     --set memory.hbm.controller.engine=timeline [--reps 5]
// Exit 0 when every piece matches, 1 when some differ (the engine decides otherwise), 2 on bad
// input.

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "models/hbm/dram_recording.h"
#include "sim/config/chip_config.h"

int main(int argc, char** argv) {
  using namespace tpusim;
  if (argc < 3) {
    std::fprintf(stderr,
                 "usage: dram_replay RECORDING CHIP.yaml [--set key=value]... [--reps N]\n");
    return 2;
  }
  std::vector<std::string> overrides;
  int reps = 5;
  for (int i = 3; i < argc; ++i) {
    const std::string arg = argv[i];
    if ((arg == "--set" || arg == "--reps") && i + 1 < argc) {
      const std::string value = argv[++i];
      if (arg == "--set") {
        overrides.push_back(value);
        continue;
      }
      char* end = nullptr;
      const long n = std::strtol(value.c_str(), &end, 10);
      if (*end != '\0' || n < 1 || n > 1000) {
        std::fprintf(stderr, "dram_replay: --reps %s: expected a count from 1 to 1000\n",
                     value.c_str());
        return 2;
      }
      reps = static_cast<int>(n);
    } else {
      std::fprintf(stderr, "dram_replay: unexpected argument '%s'\n", arg.c_str());
      return 2;
    }
  }
  try {
    const config::ChipConfig chip = config::load_chip_config(argv[2], overrides);
    const models::DramRecording recording(argv[1]);
    models::DramReplay best;
    for (int r = 0; r < reps; ++r) {
      const models::DramReplay replay = recording.replay(chip.spec.memory.hbm);
      if (r == 0 || replay.seconds < best.seconds) best = replay;
    }
    std::printf("%llu serves, %llu settles, %llu releases on %u channels\n",
                static_cast<unsigned long long>(best.serves),
                static_cast<unsigned long long>(best.settles),
                static_cast<unsigned long long>(best.releases), recording.channels());
    std::printf("wall %.1f ms (min of %d), %.1f ns per piece, %.2f M pieces/s\n",
                best.seconds * 1e3, reps,
                best.seconds * 1e9 / double(std::max<std::uint64_t>(1, best.serves)),
                double(best.serves) / best.seconds / 1e6);
    std::printf("mismatches %llu\n", static_cast<unsigned long long>(best.mismatches));
    return best.mismatches == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dram_replay: %s\n", e.what());
    return 2;
  }
}
