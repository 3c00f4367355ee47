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

// Runs `iterations` rounds of kAccumulators independent FMAs on 16-lane vectors and returns a
// value that depends on them, so the compiler cannot drop the work.
__attribute__((target("avx512f,fma"), noinline)) float fma_chains_avx512(long iterations) {
  __m512 acc[kAccumulators];
  for (int i = 0; i < kAccumulators; ++i) acc[i] = _mm512_set1_ps(float(i) * 1e-3f);
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (long it = 0; it < iterations; ++it) {
    for (int i = 0; i < kAccumulators; ++i) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
    asm volatile("" : "+v"(acc[0]), "+v"(acc[1]), "+v"(acc[2]), "+v"(acc[3]));
  }
  __m512 total = acc[0];
  for (int i = 1; i < kAccumulators; ++i) total = _mm512_add_ps(total, acc[i]);
  float lanes[16];
  _mm512_storeu_ps(lanes, total);
  float sum = 0;
  for (float l : lanes) sum += l;
  return sum;
}

__attribute__((target("avx2,fma"), noinline)) float fma_chains_avx2(long iterations) {
  __m256 acc[kAccumulators];
  for (int i = 0; i < kAccumulators; ++i) acc[i] = _mm256_set1_ps(float(i) * 1e-3f);
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  for (long it = 0; it < iterations; ++it) {
    for (int i = 0; i < kAccumulators; ++i) acc[i] = _mm256_fmadd_ps(acc[i], a, b);
    asm volatile("" : "+v"(acc[0]), "+v"(acc[1]), "+v"(acc[2]), "+v"(acc[3]));
  }
  __m256 total = acc[0];
  for (int i = 1; i < kAccumulators; ++i) total = _mm256_add_ps(total, acc[i]);
  float lanes[8];
  _mm256_storeu_ps(lanes, total);
  float sum = 0;
  for (float l : lanes) sum += l;
  return sum;
}

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
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    double flops = 2.0 * lanes * kAccumulators * double(iterations) * threads;
    best = std::max(best, flops / seconds * 1e-9);
  }
  return best;
}

}  // namespace anvil::bench
