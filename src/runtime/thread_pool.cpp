// The persistent worker pool behind parallel_launch, parallel_for and AnvilParallelLaunch.
//
// One launch at a time owns the pool. The launching thread writes the job, publishes it under a
// new generation number and runs tasks itself; workers notice the new generation (spinning
// briefly, then sleeping on a condition variable), claim task ids with a compare-and-swap that
// also checks the generation, and count finished tasks. The launch waits only for tasks that
// were claimed, never for a worker that is slow to wake. It touches only atomics unless some
// thread has gone to sleep, so back-to-back kernels pay neither locks nor allocations.
#include "anvil/runtime/thread_pool.h"

#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "anvil/runtime/c_abi.h"
#include "anvil/support/error.h"

namespace anvil {
namespace {

constexpr int kMaxThreads = 1024;
// How long an idle thread spins before sleeping. Long enough to cover the gap between
// consecutive kernels of one inference, a serial kernel between two parallel ones included
// (waking a sleeping worker costs tens of microseconds on a virtual machine; 300 instead of
// 20 us took 1-5% off ResNet-18/50 on two threads in interleaved runs), short enough not to
// burn a core for long when the pool idles.
constexpr auto kSpinDuration = std::chrono::microseconds(300);
// Chunks per thread of a compiled parallel loop (AnvilParallelLaunch with no task count).
constexpr int kChunksPerThread = 4;

// True on pool workers always, and on a launching thread while it runs its share of tasks.
thread_local bool t_in_parallel_region = false;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Marks the calling thread as inside a parallel region for the guard's lifetime.
class RegionGuard {
 public:
  RegionGuard() : previous_(std::exchange(t_in_parallel_region, true)) {}
  ~RegionGuard() { t_in_parallel_region = previous_; }
  RegionGuard(const RegionGuard&) = delete;
  RegionGuard& operator=(const RegionGuard&) = delete;

 private:
  bool previous_;
};

// Spin-then-sleep waiting on a condition that another thread makes true. The notifier takes the
// mutex only when a waiter has actually gone to sleep.
//
// Why no wakeup is lost: a sleeper increments sleepers_ and then re-checks the condition; the
// notifier changes the state and then reads sleepers_. All four are sequentially consistent, so
// either the sleeper sees the new state or the notifier sees the sleeper. In the latter case the
// sleeper holds the mutex from its increment until it is inside cv_.wait, and the notifier
// acquires the mutex before notifying, so the notification reaches it.
class Waiter {
 public:
  template <typename Ready>
  void wait(Ready ready) {
    if (ready()) return;
    auto deadline = std::chrono::steady_clock::now() + kSpinDuration;
    for (unsigned i = 1;; ++i) {
      cpu_relax();
      if (ready()) return;
      if (i % 64 == 0 && std::chrono::steady_clock::now() >= deadline) break;
    }
    std::unique_lock lock(mutex_);
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    while (!ready()) cv_.wait(lock);
    sleepers_.fetch_sub(1, std::memory_order_relaxed);
  }

  // Call after the (sequentially consistent) change that makes waiters' conditions true.
  void notify_all() {
    if (sleepers_.load(std::memory_order_seq_cst) == 0) return;
    { std::lock_guard lock(mutex_); }
    cv_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::atomic<int> sleepers_{0};
};

using TaskFn = FunctionRef<void(int, int)>;

class ThreadPool {
 public:
  static ThreadPool& instance() {
    static ThreadPool pool;
    return pool;
  }

  ~ThreadPool() {
    acquire();
    stop_workers();
  }

  int num_threads() {
    int n = num_threads_.load(std::memory_order_acquire);
    if (n > 0) return n;
    int fallback = default_num_threads();
    int expected = 0;
    // Another thread may have set a count meanwhile; its choice wins.
    if (num_threads_.compare_exchange_strong(expected, fallback)) return fallback;
    return expected;
  }

  void set_num_threads(int n) {
    if (t_in_parallel_region)
      throw_error("set_num_threads cannot be called from inside a parallel region");
    if (n > kMaxThreads)
      throw_error("cannot use ", n, " threads: at most ", kMaxThreads, " are supported");
    if (n <= 0) n = default_num_threads();
    acquire();
    num_threads_.store(n, std::memory_order_release);
    // Workers of the old size go now; the next launch starts the new ones.
    stop_workers();
    release();
  }

  void launch(int num_tasks, TaskFn fn) {
    if (num_tasks == 1 && !t_in_parallel_region) {
      fn(0, 1);
      return;
    }
    if (t_in_parallel_region || !try_acquire()) {
      run_serially(num_tasks, fn);
      return;
    }
    // This thread owns the pool until release().
    struct Releaser {
      ThreadPool* pool;
      ~Releaser() { pool->release(); }
    } releaser{this};
    int workers_wanted = std::min(num_threads(), kMaxThreads) - 1;
    if (int(workers_.size()) != workers_wanted) {
      stop_workers();
      start_workers(workers_wanted);
    }
    if (workers_.empty()) {
      run_serially(num_tasks, fn);
      return;
    }

    // Prepare the job. The previous one is closed, so no worker can claim a task until the
    // publishing store below; the release store of the task count orders it after the close.
    job_fn_ = &fn;
    error_ = nullptr;
    has_error_.store(false, std::memory_order_relaxed);
    completed_.store(0, std::memory_order_relaxed);
    job_num_tasks_.store(num_tasks, std::memory_order_release);
    uint32_t generation = generation_of(work_.load(std::memory_order_relaxed)) + 1;
    // Publish with task 0 already taken: it is the caller's.
    work_.store(pack(generation, 1), std::memory_order_seq_cst);
    work_ready_.notify_all();

    {
      RegionGuard region;
      run_task(0, num_tasks);
      int completed_here = 1, count = 0;
      for (int task; (task = claim(generation, count)) >= 0; ++completed_here)
        run_task(task, num_tasks);
      completed_.fetch_add(completed_here, std::memory_order_seq_cst);
    }
    // Only workers that claimed a task are waited for; an idle or descheduled one never delays
    // the launch.
    all_done_.wait(
        [this, num_tasks] { return completed_.load(std::memory_order_seq_cst) == num_tasks; });
    // Close the job: a worker still holding an old view of work_ now fails to claim.
    work_.store(pack(generation, kClosed), std::memory_order_seq_cst);
    job_fn_ = nullptr;
    std::exception_ptr error = std::exchange(error_, nullptr);
    if (error) std::rethrow_exception(error);
  }

 private:
  // work_ packs the job generation (high half) with the next unclaimed task id (low half), so a
  // single compare-and-swap both claims a task and checks that the job is still the same one.
  static constexpr uint32_t kClosed = 0xffffffffu;
  static uint64_t pack(uint32_t generation, uint32_t next) {
    return uint64_t(generation) << 32 | next;
  }
  static uint32_t generation_of(uint64_t work) { return uint32_t(work >> 32); }
  static uint32_t next_of(uint64_t work) { return uint32_t(work); }

  ThreadPool() = default;

  static void run_serially(int num_tasks, TaskFn fn) {
    RegionGuard region;
    for (int i = 0; i < num_tasks; ++i) fn(i, num_tasks);
  }

  bool try_acquire() {
    bool expected = false;
    return busy_.compare_exchange_strong(expected, true, std::memory_order_acquire,
                                         std::memory_order_relaxed);
  }
  // Waits for a launch on another thread to finish; only set_num_threads and the destructor
  // wait here, launches never do.
  void acquire() {
    while (!try_acquire()) std::this_thread::yield();
  }
  void release() { busy_.store(false, std::memory_order_release); }

  // Requires ownership.
  void start_workers(int count) {
    uint32_t generation = generation_of(work_.load(std::memory_order_relaxed));
    try {
      for (int i = 0; i < count; ++i)
        workers_.emplace_back([this, i, generation] { worker_main(i + 1, generation); });
    } catch (...) {
      stop_workers();
      throw;
    }
  }

  // Requires ownership, so no job is open.
  void stop_workers() {
    if (workers_.empty()) return;
    stopping_.store(true, std::memory_order_seq_cst);
    work_ready_.notify_all();
    for (std::thread& worker : workers_) worker.join();
    workers_.clear();
    stopping_.store(false, std::memory_order_relaxed);
  }

  // Claims the next task of job `generation`; -1 if that job has no unclaimed task left or is
  // no longer current. *num_tasks receives the job's task count.
  int claim(uint32_t generation, int& num_tasks) {
    uint64_t work = work_.load(std::memory_order_acquire);
    for (;;) {
      if (generation_of(work) != generation) return -1;
      // Reading a newer job's count implies the close of this job is visible, and the CAS
      // below then fails; so a claim never pairs a task id with the wrong count.
      num_tasks = job_num_tasks_.load(std::memory_order_acquire);
      if (next_of(work) >= uint32_t(num_tasks)) return -1;
      if (work_.compare_exchange_weak(work, work + 1, std::memory_order_acq_rel,
                                      std::memory_order_acquire))
        return int(next_of(work));
    }
  }

  // `generation` is the one current when the worker was created; passing it in (rather than
  // reading it at thread start) keeps a job posted right after the start from being missed.
  void worker_main(int index, uint32_t generation) {
    std::string thread_name = "anvil-worker-" + std::to_string(index);
    pthread_setname_np(pthread_self(), thread_name.substr(0, 15).c_str());
    t_in_parallel_region = true;
    uint32_t seen = generation;
    for (;;) {
      work_ready_.wait([this, seen] {
        return generation_of(work_.load(std::memory_order_seq_cst)) != seen ||
               stopping_.load(std::memory_order_seq_cst);
      });
      if (stopping_.load(std::memory_order_acquire)) return;
      seen = generation_of(work_.load(std::memory_order_acquire));
      int num_tasks = 0;
      for (int task; (task = claim(seen, num_tasks)) >= 0;) {
        run_task(task, num_tasks);
        // Nothing of the job may be touched after this increment: the launch may return.
        if (completed_.fetch_add(1, std::memory_order_seq_cst) + 1 == num_tasks)
          all_done_.notify_all();
      }
    }
  }

  void run_task(int task, int num_tasks) {
    // After a failure the remaining tasks are skipped: the launch fails anyway.
    if (has_error_.load(std::memory_order_relaxed)) return;
    try {
      (*job_fn_)(task, num_tasks);
    } catch (...) {
      if (!has_error_.exchange(true, std::memory_order_acq_rel)) error_ = std::current_exception();
    }
  }

  std::atomic<int> num_threads_{0};  // 0 until first needed, then resolved from the default
  std::atomic<bool> busy_{false};    // a launch, resize or shutdown owns the pool
  std::vector<std::thread> workers_;

  // The open job. job_fn_ and error_ are touched only by the owner and by threads holding a
  // claimed task of the job.
  const TaskFn* job_fn_ = nullptr;
  std::exception_ptr error_;  // written only by the thread that first set has_error_
  alignas(64) std::atomic<uint64_t> work_{pack(0, kClosed)};
  alignas(64) std::atomic<int> job_num_tasks_{0};
  std::atomic<bool> has_error_{false};
  std::atomic<bool> stopping_{false};
  alignas(64) std::atomic<int> completed_{0};
  Waiter work_ready_;
  Waiter all_done_;
};

std::vector<int> allowed_cpus() {
  std::vector<int> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
      if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

bool read_int_file(const std::string& path, int& value) {
  std::ifstream in(path);
  return bool(in >> value);
}

}  // namespace

namespace detail {

int parse_thread_count(std::string_view text, std::string_view source) {
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value < 1 ||
      value > kMaxThreads)
    throw_error(source, " must be a whole number of threads from 1 to ", kMaxThreads, ", got '",
                text, "'");
  return value;
}

int count_physical_cores(const std::string& sysfs_cpu_dir, std::span<const int> cpu_ids) {
  std::set<std::pair<int, int>> cores;
  int unreadable = 0;
  for (int cpu : cpu_ids) {
    std::string topology = sysfs_cpu_dir + "/cpu" + std::to_string(cpu) + "/topology/";
    int package = 0, core = 0;
    if (read_int_file(topology + "physical_package_id", package) &&
        read_int_file(topology + "core_id", core)) {
      cores.emplace(package, core);
    } else {
      ++unreadable;
    }
  }
  // A CPU whose topology is missing counts as a core of its own, unless nothing was readable.
  return cores.empty() ? 0 : int(cores.size()) + unreadable;
}

}  // namespace detail

int default_num_threads() {
  if (const char* env = std::getenv("ANVIL_NUM_THREADS"); env && *env)
    return detail::parse_thread_count(env, "ANVIL_NUM_THREADS");
  std::vector<int> cpus = allowed_cpus();
  int cores = detail::count_physical_cores("/sys/devices/system/cpu", cpus);
  if (cores <= 0)
    cores = cpus.empty() ? int(std::thread::hardware_concurrency()) : int(cpus.size());
  return std::clamp(cores, 1, kMaxThreads);
}

int num_threads() { return ThreadPool::instance().num_threads(); }

void set_num_threads(int n) { ThreadPool::instance().set_num_threads(n); }

bool in_parallel_region() { return t_in_parallel_region; }

void parallel_launch(int num_tasks, FunctionRef<void(int task_id, int num_tasks)> fn) {
  if (num_tasks < 0) throw_error("parallel_launch: negative task count ", num_tasks);
  if (num_tasks == 0) num_tasks = num_threads();
  ThreadPool::instance().launch(num_tasks, fn);
}

void parallel_for(int64_t n, FunctionRef<void(int64_t begin, int64_t end)> fn, int64_t min_chunk) {
  if (n <= 0) return;
  min_chunk = std::max<int64_t>(min_chunk, 1);
  int64_t max_tasks = t_in_parallel_region ? 1 : num_threads();
  int64_t tasks = std::clamp<int64_t>(n / min_chunk, 1, max_tasks);
  if (tasks <= 1) {
    fn(0, n);
    return;
  }
  // The first n % tasks chunks take one extra iteration.
  int64_t base = n / tasks, extra = n % tasks;
  parallel_launch(int(tasks), [&](int task, int) {
    int64_t begin = task * base + std::min<int64_t>(task, extra);
    int64_t end = begin + base + (task < extra ? 1 : 0);
    fn(begin, end);
  });
}

}  // namespace anvil

extern "C" int32_t AnvilParallelLaunch(AnvilParallelLambda body, void* closure, int32_t num_tasks) {
  try {
    if (!body) anvil::throw_error("AnvilParallelLaunch: body is null");
    if (num_tasks < 0) anvil::throw_error("AnvilParallelLaunch: negative task count ", num_tasks);
    if (num_tasks == 0) {
      // A few chunks per thread, claimed one at a time: when one core is slowed (a busy
      // neighbour, an interrupt), the others take over its remaining chunks instead of waiting
      // for a half that was fixed up front.
      const int threads = anvil::num_threads();
      num_tasks = anvil::in_parallel_region() ? 1
                  : threads > 1               ? threads * anvil::kChunksPerThread
                                              : 1;
    }
    anvil::parallel_launch(num_tasks, [&](int task, int count) {
      // A stale message on a worker must not be mistaken for this task's.
      AnvilSetLastError(nullptr);
      int32_t rc = body(task, count, closure);
      if (rc == 0) return;
      // The message lives in the last error of the thread that ran the task; carry it over.
      const char* message = AnvilGetLastError();
      if (*message) throw anvil::Error(message);
      anvil::throw_error("parallel task ", task, " of ", count, " failed with code ", rc);
    });
    return 0;
  } catch (const std::exception& e) {
    AnvilSetLastError(e.what());
  } catch (...) {
    AnvilSetLastError("AnvilParallelLaunch: unknown exception");
  }
  return -1;
}
