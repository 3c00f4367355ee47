// A 1024x1024x1024 float32 matrix product written in TE, scheduled with the
// schedule primitives (register tile, packing of B panels via cache_read +
// compute_at, vectorize, unroll, parallel), compiled through LLVM, and timed
// against the machine's measured FP32 peak on the same threads.
//
//   build/matmul_bench [--threads 2] [--size 1024] [--repeat 20] [--row-block 256]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "anvil/analysis/peak.h"
#include "anvil/codegen/llvm.h"
#include "anvil/runtime/tensor.h"
#include "anvil/runtime/thread_pool.h"
#include "anvil/te/te.h"
#include "anvil/tir/functor.h"
#include "anvil/tir/printer.h"
#include "anvil/tir/schedule.h"
#include "anvil/tir/transform.h"

namespace {

using namespace anvil;
using tir::PrimExpr;

struct Options {
  int threads = 2;
  int64_t size = 1024;
  int repeat = 20;
  // Register tile (rows x vector columns) and the depth of one packed panel of B.
  int64_t tile_rows = 4, tile_cols = 64, panel_depth = 128;
  // Rows of A per outer block (0: none). With a block, the loops run block by block, so the
  // block's rows of A stay in L2 while every column panel passes over them.
  int64_t row_block = 256;
  // Steps of the reduction unrolled inside the register tile (1: none).
  int64_t unroll_k = 1;
  bool print_ir = false;   // print the scheduled and the lowered function
  bool print_asm = false;  // print the generated assembly
  bool pack_a = false;     // also copy each row tile of A into a contiguous buffer
};

int read_read_index(const tir::PrimFunc& func, const std::string& block, const std::string& buf) {
  int index = -1;
  tir::pre_order_visit(func->body, nullptr, [&](const tir::Stmt& s) {
    const auto* b = tir::as<tir::BlockNode>(s);
    if (!b || b->name != block) return;
    for (size_t i = 0; i < b->reads.size(); ++i)
      if (b->reads[i].buffer->name == buf) index = int(i);
  });
  if (index < 0) throw Error("block '" + block + "' does not read '" + buf + "'");
  return index;
}

tir::PrimFunc scheduled_matmul(const Options& o) {
  const int64_t n = o.size;
  te::Tensor a = te::placeholder({n, n}, DataType::float32(), "A");
  te::Tensor b = te::placeholder({n, n}, DataType::float32(), "B");
  tir::IterVar k = te::reduce_axis(PrimExpr(n), "k");
  te::Tensor c = te::compute(
      {n, n},
      [&](const std::vector<tir::Var>& i) {
        return tir::sum(a(i[0], k.var) * b(k.var, i[1]), {k});
      },
      "C");
  tir::Schedule s(te::create_prim_func({a, b, c}, "matmul"));

  tir::BlockRV block = s.get_block("C");
  std::vector<tir::LoopRV> loops = s.get_loops(block);
  std::vector<tir::LoopRV> i;
  if (o.row_block > 0)
    i = s.split(loops[0], {nullptr, PrimExpr(o.row_block / o.tile_rows), PrimExpr(o.tile_rows)});
  else
    i = s.split(loops[0], {nullptr, PrimExpr(o.tile_rows)});
  auto j = s.split(loops[1], {nullptr, PrimExpr(o.tile_cols)});
  auto kk = s.split(loops[2], {nullptr, PrimExpr(o.panel_depth)});
  // Column panels outermost (one per task), then panel depth, then row tiles: each packed
  // panel of B (panel_depth x tile_cols) is reused by every row tile while it sits in L1/L2.
  // A row block, when asked for, goes outside all of them.
  if (o.row_block > 0)
    s.reorder({i[0], j[0], kk[0], i[1], kk[1], i[2], j[1]});
  else
    s.reorder({j[0], kk[0], i[0], kk[1], i[1], j[1]});
  tir::LoopRV row_tile = i[i.size() - 2], row = i.back();
  if (o.unroll_k > 1) {
    auto k_steps = s.split(kk[1], {nullptr, PrimExpr(o.unroll_k)});
    s.reorder({k_steps[0], row, k_steps[1], j[1]});
    s.unroll(k_steps[1]);
  }
  tir::BlockRV init = s.decompose_reduction(block, kk[0]);
  tir::BlockRV packed = s.cache_read(block, read_read_index(s.func(), "C", "B"), "global");
  s.compute_at(packed, kk[0]);
  // The rows of A one row tile needs, copied next to each other: read in place they sit a
  // whole matrix row apart, and that stride maps them all onto the same few L1 sets.
  std::optional<tir::BlockRV> packed_a;
  if (o.pack_a) {
    packed_a = s.cache_read(block, read_read_index(s.func(), "C", "A"), "global");
    s.compute_at(*packed_a, row_tile);
  }

  s.unroll(row);
  s.vectorize(j[1]);
  s.parallel(o.row_block > 0 ? s.fuse({i[0], j[0]}) : j[0]);
  std::vector<tir::LoopRV> init_loops = s.get_loops(init);
  s.vectorize(init_loops.back());
  std::vector<tir::LoopRV> pack_loops = s.get_loops(packed);
  s.vectorize(pack_loops.back());
  if (packed_a) s.vectorize(s.get_loops(*packed_a).back());
  return s.func();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--print-ir" || flag == "--print-asm" || flag == "--pack-a") {
      (flag == "--print-ir" ? o.print_ir : flag == "--pack-a" ? o.pack_a : o.print_asm) = true;
      --i;
      continue;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "matmul_bench: flag '%s' needs a value\n", flag.c_str());
      return 2;
    }
    int64_t value = std::atoll(argv[i + 1]);
    if (flag == "--threads")
      o.threads = int(value);
    else if (flag == "--size")
      o.size = value;
    else if (flag == "--repeat")
      o.repeat = int(value);
    else if (flag == "--tile-rows")
      o.tile_rows = value;
    else if (flag == "--tile-cols")
      o.tile_cols = value;
    else if (flag == "--panel-depth")
      o.panel_depth = value;
    else if (flag == "--row-block")
      o.row_block = value;
    else if (flag == "--unroll-k")
      o.unroll_k = value;
    else {
      std::fprintf(stderr, "matmul_bench: unknown flag '%s'\n", flag.c_str());
      return 2;
    }
  }
  try {
    set_num_threads(o.threads);
    auto compile_start = std::chrono::steady_clock::now();
    tir::PrimFunc scheduled = scheduled_matmul(o);
    tir::PrimFunc lowered = tir::transform::lower(scheduled);
    if (o.print_ir)
      std::printf("%s\n%s\n", tir::print(scheduled).c_str(), tir::print(lowered).c_str());
    if (o.print_asm)
      std::printf("%s\n", codegen::emit_assembly({lowered}, codegen::Target::host()).c_str());
    Module module = codegen::jit_compile({lowered});
    double compile_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - compile_start).count();
    PackedFunc matmul = module.function("matmul");

    const int64_t n = o.size;
    Tensor a = Tensor::zeros({n, n}, DataType::float32());
    Tensor b = Tensor::zeros({n, n}, DataType::float32());
    Tensor c = Tensor::zeros({n, n}, DataType::float32());
    std::mt19937 rng(0);
    std::uniform_real_distribution<float> dist(-1, 1);
    for (float* p : {static_cast<float*>(a.data()), static_cast<float*>(b.data())})
      for (int64_t e = 0; e < n * n; ++e) p[e] = dist(rng);

    matmul(a, b, c);  // warm-up, and the result to check
    const float* pa = static_cast<const float*>(a.data());
    const float* pb = static_cast<const float*>(b.data());
    const float* pc = static_cast<const float*>(c.data());
    double worst = 0;
    for (int sample = 0; sample < 2000; ++sample) {
      int64_t r = rng() % n, col = rng() % n;
      double expect = 0;
      for (int64_t kk = 0; kk < n; ++kk) expect += double(pa[r * n + kk]) * pb[kk * n + col];
      worst = std::max(worst, std::fabs(expect - pc[r * n + col]) / (1 + std::fabs(expect)));
    }
    if (worst > 1e-4) {
      std::fprintf(stderr, "matmul_bench: wrong result (relative error %.3g)\n", worst);
      return 1;
    }

    std::vector<double> times;
    for (int r = 0; r < o.repeat; ++r) {
      auto start = std::chrono::steady_clock::now();
      matmul(a, b, c);
      times.push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    double seconds = median(times);
    double gflops = 2.0 * double(n) * n * n / seconds * 1e-9;
    analysis::PeakMeasurement peak =
        analysis::measure_peak_flops(codegen::Target::host().vector_bits(), o.threads);
    std::printf("matmul %lldx%lldx%lld float32, %d threads\n", (long long)n, (long long)n,
                (long long)n, o.threads);
    std::printf("  compile (schedule + lower + LLVM): %.2f s\n", compile_s);
    std::printf("  median of %d runs: %.3f ms = %.1f GFLOP/s\n", o.repeat, seconds * 1e3, gflops);
    std::printf("  measured FP32 peak on %d threads (%s): %.1f GFLOP/s\n", o.threads,
                peak.isa.c_str(), peak.gflops);
    std::printf("  fraction of peak: %.1f%%\n", 100.0 * gflops / peak.gflops);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "matmul_bench: %s\n", e.what());
    return 1;
  }
}
