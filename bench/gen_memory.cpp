// Writes a memory-bound .tasm program for benchmarking the memory path of `tpusim exec`:
//   stream  BYTES read as one sequential stream, the DMA engines taking turns in 4 KiB blocks
//   gather  BYTES read as 64 B elements 260 KiB + 64 B apart: every element in another DRAM row
//           (a random-access pattern without a random-number generator in the ISA)
// Usage: gen_memory stream|gather BYTES ENGINES > out.tasm

#include <cstdio>
#include <cstdlib>
#include <cstring>

int main(int argc, char** argv) {
  if (argc != 4 || (std::strcmp(argv[1], "stream") != 0 && std::strcmp(argv[1], "gather") != 0)) {
    std::fprintf(stderr, "usage: gen_memory stream|gather BYTES ENGINES > program.tasm\n");
    return 2;
  }
  const bool stream = std::strcmp(argv[1], "stream") == 0;
  const long long bytes = std::atoll(argv[2]);
  const int engines = std::atoi(argv[3]);
  const long long vmem = 16ll << 20;  // tpu-v4i vector memory; the loads wrap around it
  if (bytes <= 0 || engines <= 0) {
    std::fprintf(stderr, "gen_memory: BYTES and ENGINES must be positive\n");
    return 2;
  }
  std::printf("; %s of %lld bytes over %d DMA engines\n.op 0 load \"%s\"\n.core 0\n", argv[1],
              bytes, engines, argv[1]);
  const long long per_engine = bytes / engines;
  if (stream) {
    // One descriptor per engine per pass through vector memory.
    const long long block = 4096, pass = vmem / engines;
    for (long long done = 0; done < per_engine; done += pass) {
      const long long n = (per_engine - done < pass ? per_engine - done : pass) / block;
      for (int e = 0; e < engines; ++e) {
        const long long src = (done * engines) + e * block;
        std::printf(
            "load dma%d dst=vmem:%lld src=hbm:%lld elem=%lld count=[%lld] "
            "src_stride=[%lld] dst_stride=[%lld]\n",
            e, e * block, src, block, n, engines * block, engines * block);
      }
    }
  } else {
    const long long elem = 64, stride = 260 * 1024 + 64, per_descriptor = 16384;
    long long issued = 0;
    for (long long done = 0; done < per_engine; done += per_descriptor * elem) {
      for (int e = 0; e < engines; ++e, ++issued) {
        const long long src = (issued % 4) * 16 * 1024 * 1024 * 1024 / 16 + e * 64 * 7;
        std::printf(
            "load dma%d dst=vmem:%lld src=hbm:%lld elem=%lld count=[%lld] "
            "src_stride=[%lld] dst_stride=[%lld]\n",
            e, e * per_descriptor * elem, src, elem, per_descriptor, stride, elem);
      }
    }
  }
  std::printf("halt\n");
  return 0;
}
