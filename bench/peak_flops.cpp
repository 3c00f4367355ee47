#include "peak_flops.h"

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace anvil::bench {
namespace {

constexpr int kAccumulators = 12;  // enough independent chains to hide FMA latency

// kAccumulators named chains, written out so that every one lives in a register.
#define ANVIL_FMA_CHAINS(V, FMA, ADD)                                                       \
  V a0 = seed, a1 = seed, a2 = seed, a3 = seed, a4 = seed, a5 = seed, a6 = seed, a7 = seed, \
    a8 = seed, a9 = seed, a10 = seed, a11 = seed;                                           \
  for (long it = 0; it < iterations; ++it) {                                                \
    a0 = FMA(a0, m, c);                                                                     \
    a1 = FMA(a1, m, c);                                                                     \
    a2 = FMA(a2, m, c);                                                                     \
    a3 = FMA(a3, m, c);                                                                     \
    a4 = FMA(a4, m, c);                                                                     \
    a5 = FMA(a5, m, c);                                                                     \
    a6 = FMA(a6, m, c);                                                                     \
    a7 = FMA(a7, m, c);                                                                     \
    a8 = FMA(a8, m, c);                                                                     \
    a9 = FMA(a9, m, c);                                                                     \
    a10 = FMA(a10, m, c);                                                                   \
    a11 = FMA(a11, m, c);                                                                   \
  }                                                                                         \
  V total = ADD(ADD(ADD(ADD(a0, a1), ADD(a2, a3)), ADD(ADD(a4, a5), ADD(a6, a7))),          \
                ADD(ADD(a8, a9), ADD(a10, a11)));

// Runs `iterations` rounds of kAccumulators independent FMAs on 16-lane vectors and returns a
// value that depends on all of them, so the compiler cannot drop the work.
__attribute__((target("avx512f,fma"), noinline)) float fma_chains_avx512(long iterations) {
  const __m512 seed = _mm512_set1_ps(1e-3f), m = _mm512_set1_ps(0.999999f),
               c = _mm512_set1_ps(1e-7f);
  ANVIL_FMA_CHAINS(__m512, _mm512_fmadd_ps, _mm512_add_ps)
  float lanes[16];
  _mm512_storeu_ps(lanes, total);
  float sum = 0;
  for (float l : lanes) sum += l;
  return sum;
}

__attribute__((target("avx2,fma"), noinline)) float fma_chains_avx2(long iterations) {
  const __m256 seed = _mm256_set1_ps(1e-3f), m = _mm256_set1_ps(0.999999f),
               c = _mm256_set1_ps(1e-7f);
  ANVIL_FMA_CHAINS(__m256, _mm256_fmadd_ps, _mm256_add_ps)
  float lanes[8];
  _mm256_storeu_ps(lanes, total);
  float sum = 0;
  for (float l : lanes) sum += l;
  return sum;
}

#undef ANVIL_FMA_CHAINS

}  // namespace

double measure_peak_gflops(int threads) {
  const bool avx512 = __builtin_cpu_supports("avx512f");
  const int lanes = avx512 ? 16 : 8;
  const long iterations = 40'000'000;
  double best = 0;
  for (int trial = 0; trial < 3; ++trial) {
    std::atomic<float> sink{0};
    auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t)
      workers.emplace_back([&] {
        float v = avx512 ? fma_chains_avx512(iterations) : fma_chains_avx2(iterations);
        sink.store(v, std::memory_order_relaxed);
      });
    for (auto& w : workers) w.join();
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    double flops = 2.0 * lanes * kAccumulators * double(iterations) * threads;
    best = std::max(best, flops / seconds * 1e-9);
  }
  return best;
}

}  // namespace anvil::bench
