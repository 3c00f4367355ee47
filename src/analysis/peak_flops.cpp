#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "anvil/analysis/peak.h"
#include "anvil/runtime/c_abi.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>
#define ANVIL_PEAK_X86 1
#endif

namespace anvil::analysis {
namespace {

// Each loop iteration does kChains independent FMAs (named variables, so that they live in
// registers), enough to cover the FMA latency on every pipe: the loop runs at the FMA
// throughput. acc = acc * a + b with |a| < 1 converges and never overflows or reaches denormals.
// Every chain starts from its own value: chains that start equal compute equal values, and a
// compiler merges them into one (the loop then measures one FMA's latency, not the throughput).
constexpr int kChains = 12;
constexpr float kScale = 0.999f;
constexpr float kShift = 0.001f;

// The loop of one instruction set, its twelve chains spelled out: declares them, steps each
// `iterations` times, and leaves their sum in `sum`.
#define ANVIL_CHAIN_LOOP(Vec, set1, step, add)                                              \
  const Vec a = set1(kScale), b = set1(kShift);                                             \
  Vec c0 = set1(0.f), c1 = set1(1.f), c2 = set1(2.f), c3 = set1(3.f), c4 = set1(4.f),       \
      c5 = set1(5.f), c6 = set1(6.f), c7 = set1(7.f), c8 = set1(8.f), c9 = set1(9.f),       \
      c10 = set1(10.f), c11 = set1(11.f);                                                   \
  for (int64_t i = 0; i < iterations; ++i) {                                                \
    c0 = step(c0, a, b), c1 = step(c1, a, b), c2 = step(c2, a, b), c3 = step(c3, a, b);     \
    c4 = step(c4, a, b), c5 = step(c5, a, b), c6 = step(c6, a, b), c7 = step(c7, a, b);     \
    c8 = step(c8, a, b), c9 = step(c9, a, b), c10 = step(c10, a, b), c11 = step(c11, a, b); \
  }                                                                                         \
  Vec sum = add(add(add(add(c0, c1), add(c2, c3)), add(add(c4, c5), add(c6, c7))),          \
                add(add(c8, c9), add(c10, c11)))

template <typename Vec, size_t kLanes>
float sum_lanes(const Vec& v) {
  alignas(64) float lanes[kLanes];
  std::memcpy(lanes, &v, sizeof(lanes));
  float total = 0;
  for (float x : lanes) total += x;
  return total;
}

#ifdef ANVIL_PEAK_X86
__attribute__((target("avx512f"))) float fma_loop_avx512(int64_t iterations) {
  ANVIL_CHAIN_LOOP(__m512, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_add_ps);
  return sum_lanes<__m512, 16>(sum);
}

__attribute__((target("avx2,fma"))) float fma_loop_avx2(int64_t iterations) {
  ANVIL_CHAIN_LOOP(__m256, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_add_ps);
  return sum_lanes<__m256, 8>(sum);
}

// AVX-512 BF16: each vdpbf16ps adds two bf16 products into each of 16 float lanes, 64 FLOPs.
// The chain loop's float constants are read as pairs of bfloat16 (0.999f's halves are about
// 0.996 and -0.24, 0.001f's about 0.001 and 7e-28), so each step adds about 0.001 to every
// lane: the chains stay finite and normal.
__attribute__((target("avx512f,avx512bf16"))) inline __m512 dot_bf16_step(__m512 c, __m512 a,
                                                                          __m512 b) {
  return _mm512_dpbf16_ps(c, (__m512bh)a, (__m512bh)b);
}

__attribute__((target("avx512f,avx512bf16"))) float dot_loop_avx512_bf16(int64_t iterations) {
  ANVIL_CHAIN_LOOP(__m512, _mm512_set1_ps, dot_bf16_step, _mm512_add_ps);
  return sum_lanes<__m512, 16>(sum);
}

// Without FMA a multiply and an add are two instructions for the same two FLOPs.
inline __m128 mul_add_sse2(__m128 x, __m128 a, __m128 b) { return _mm_add_ps(_mm_mul_ps(x, a), b); }

float mul_add_loop_sse2(int64_t iterations) {
  ANVIL_CHAIN_LOOP(__m128, _mm_set1_ps, mul_add_sse2, _mm_add_ps);
  return sum_lanes<__m128, 4>(sum);
}
#endif

inline float scalar_set1(float x) { return x; }
inline float scalar_mul_add(float x, float a, float b) { return x * a + b; }
inline float scalar_add(float x, float y) { return x + y; }

float scalar_loop(int64_t iterations) {
  ANVIL_CHAIN_LOOP(float, scalar_set1, scalar_mul_add, scalar_add);
  return sum;
}

#undef ANVIL_CHAIN_LOOP

using LoopFn = float (*)(int64_t);

// The widest loop this CPU runs that is no wider than max_vector_bits.
LoopFn choose_loop(int max_vector_bits, PeakMeasurement& m) {
#ifdef ANVIL_PEAK_X86
  __builtin_cpu_init();
  if (max_vector_bits >= 512 && __builtin_cpu_supports("avx512f")) {
    m.vector_bits = 512;
    m.isa = "AVX-512";
    return fma_loop_avx512;
  }
  if (max_vector_bits >= 256 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    m.vector_bits = 256;
    m.isa = "AVX2+FMA";
    return fma_loop_avx2;
  }
  if (max_vector_bits >= 128) {
    m.vector_bits = 128;
    m.isa = "SSE2";
    return mul_add_loop_sse2;
  }
#endif
  (void)max_vector_bits;
  m.vector_bits = 32;
  m.isa = "scalar";
  return scalar_loop;
}

// Seconds for every thread to run `iterations` of the loop, started together.
double timed_run(LoopFn loop, int64_t iterations, int threads) {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<float> sinks(size_t(threads), 0.0f);
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      ready.fetch_add(1);
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
      sinks[size_t(t)] = loop(iterations);
    });
  }
  while (ready.load() < threads) std::this_thread::yield();
  auto start = std::chrono::steady_clock::now();
  go.store(true, std::memory_order_release);
  for (std::thread& w : workers) w.join();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // The sums keep the loops from being optimized away; they are finite by construction.
  float total = 0;
  for (float s : sinks) total += s;
  if (total != total) seconds = -1;
  return seconds;
}

// Grows the run until it takes about 50 ms, then keeps the best of four runs of that length.
double best_seconds(LoopFn loop, int threads, int64_t& iterations) {
  iterations = 1 << 16;
  double seconds = timed_run(loop, iterations, threads);
  while (seconds < 0.05 && iterations < (int64_t(1) << 34)) {
    iterations *= 2;
    seconds = timed_run(loop, iterations, threads);
  }
  double best = seconds;
  for (int repeat = 0; repeat < 3; ++repeat)
    best = std::min(best, timed_run(loop, iterations, threads));
  return best;
}

}  // namespace

namespace {

#ifdef ANVIL_PEAK_X86
// CPUID leaf 7: AMX-BF16 is EDX bit 22, AMX-TILE bit 24.
bool cpu_has_amx_bf16() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
  return (edx >> 22 & 1) && (edx >> 24 & 1);
}

// Four independent accumulator tiles (0-3) fed by two data (4, 5) and two weight (6, 7) tiles:
// the register tile of the AMX convolutions. Operands of small bf16 values (0x3a83 ~ 0.001).
__attribute__((target("amx-tile,amx-bf16"))) float amx_loop_bf16(int64_t iterations) {
  alignas(64) unsigned char config[64] = {};
  config[0] = 1;
  for (int t = 0; t < 8; ++t) {
    config[16 + 2 * t] = 64;
    config[48 + t] = 16;
  }
  alignas(64) uint16_t operands[16 * 32];
  for (uint16_t& v : operands) v = 0x3a83;
  alignas(64) float sums[16 * 16];
  _tile_loadconfig(config);
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  _tile_loadd(4, operands, 64);
  _tile_loadd(5, operands, 64);
  _tile_loadd(6, operands, 64);
  _tile_loadd(7, operands, 64);
  for (int64_t i = 0; i < iterations; ++i) {
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
  _tile_stored(0, sums, 64);
  _tile_release();
  return sums[0];
}
#endif

}  // namespace

PeakMeasurement measure_amx_bf16_peak_flops(int threads) {
  PeakMeasurement m;
  m.threads = threads;
#ifdef ANVIL_PEAK_X86
  if (cpu_has_amx_bf16() && AnvilBackendRequestAMX() == 0) {
    m.vector_bits = 512;
    m.isa = "AMX-BF16";
    int64_t iterations = 0;
    const double best = best_seconds(amx_loop_bf16, threads, iterations);
    const double flops = 4.0 * 16384 * double(iterations) * threads;
    m.gflops = best > 0 ? flops / best / 1e9 : 0;
  }
#endif
  return m;
}

PeakMeasurement measure_bf16_peak_flops(int threads) {
  PeakMeasurement m;
  m.threads = threads;
#ifdef ANVIL_PEAK_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512bf16")) {
    m.vector_bits = 512;
    m.isa = "AVX-512 BF16";
    int64_t iterations = 0;
    const double best = best_seconds(dot_loop_avx512_bf16, threads, iterations);
    const double flops = 4.0 * 16 * double(kChains) * double(iterations) * threads;
    m.gflops = best > 0 ? flops / best / 1e9 : 0;
  }
#endif
  return m;
}

PeakMeasurement measure_peak_flops(int max_vector_bits, int threads) {
  PeakMeasurement m;
  m.threads = threads;
  LoopFn loop = choose_loop(max_vector_bits, m);
  const int lanes = std::max(m.vector_bits / 32, 1);
  int64_t iterations = 0;
  const double best = best_seconds(loop, threads, iterations);
  const double flops = 2.0 * double(kChains) * lanes * double(iterations) * threads;
  m.gflops = best > 0 ? flops / best / 1e9 : 0;
  return m;
}

}  // namespace anvil::analysis
