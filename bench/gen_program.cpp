// Writes a synthetic .tasm program of about N instructions for benchmarking `tpusim exec`: a
// double-buffered stream of tiles per core (DMA loads, weight loads, matmuls, a vector op,
// semaphores), the shape a lowered GEMM or conv layer has. Usage: gen_program N CORES > out.tasm

#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: gen_program INSTRUCTIONS CORES > program.tasm\n");
    return 2;
  }
  const long target = std::atol(argv[1]);
  const int cores = std::atoi(argv[2]);
  if (target <= 0 || cores <= 0) {
    std::fprintf(stderr, "gen_program: INSTRUCTIONS and CORES must be positive\n");
    return 2;
  }
  // Each tile below is 11 instructions.
  const long tiles_per_core = target / 11 / cores;
  std::printf("; %ld tiles per core x %d cores, 11 instructions per tile\n", tiles_per_core, cores);
  std::printf(".op 0 matmul \"bench\"\n");
  for (int c = 0; c < cores; ++c) {
    std::printf(".core %d\n", c);
    for (long i = 0; i < tiles_per_core; ++i) {
      const int buf = static_cast<int>(i % 2);
      const long hbm = (static_cast<long>(c) * tiles_per_core + i) * 65536 % (1L << 30);
      // Buffer `buf` is free once the MXU has signalled s(2+buf) for the tile before.
      if (i >= 2) std::printf("sem.wait dma%d s%d\n", buf, 2 + buf);
      std::printf("load dma%d dst=vmem:%d src=hbm:%ld elem=32768\n", buf, buf * 65536, hbm);
      std::printf("load dma%d dst=vmem:%d src=hbm:%ld elem=32768\n", buf, buf * 65536 + 32768,
                  hbm + 32768);
      std::printf("sem.signal dma%d s%d\n", buf, buf);
      std::printf("sem.wait mxu0 s%d\n", buf);
      std::printf("mxu.lw mxu0 src=vmem:%d k=128 n=128 dtype=bf16\n", buf * 65536 + 32768);
      std::printf("mxu.mm mxu0 src=vmem:%d dst=accmem:0 m=128 k=128 n=128 dtype=bf16%s\n",
                  buf * 65536, i > 0 ? " accumulate" : "");
      std::printf("sem.signal mxu0 s%d\n", 2 + buf);
      std::printf("sem.signal mxu0 s4\n");
      std::printf("sem.wait vpu s4\n");
      std::printf("vpu.relu dtype=fp32 shape=[8,128] dst=accmem:65536 a=accmem:0\n");
    }
    // Release the DMA waits the last two tiles would have consumed.
    std::printf("halt\n");
  }
  return 0;
}
