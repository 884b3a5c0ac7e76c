// Kernels of a known length, and one the host holds: the GPU's work in the
// CUDA demo, the CUDA benchmark and the GPU tests.
#pragma once

// Busy-waits `nanoseconds` on the GPU's global nanosecond timer.
static __device__ inline void SpinFor(unsigned long long nanoseconds) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < nanoseconds);
}

static __global__ void SpinKernel(unsigned long long nanoseconds) { SpinFor(nanoseconds); }

// Holds its stream until the host writes a non-zero word (mapped host memory).
static __global__ void WaitForHost(volatile unsigned long long* word) {
  while (*word == 0) {
  }
}
