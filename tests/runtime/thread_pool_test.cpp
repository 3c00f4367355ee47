#include "anvil/runtime/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "anvil/runtime/c_abi.h"
#include "anvil/support/error.h"
#include "support/test_util.h"

namespace anvil {
namespace {

using anvil::testing::CommandResult;
using anvil::testing::run_command;
using anvil::testing::ScratchDir;

// Every test leaves the pool at its default size.
class ThreadPoolTest : public ::testing::Test {
 protected:
  void TearDown() override { set_num_threads(0); }
};

int64_t parallel_sum(int64_t n) {
  std::atomic<int64_t> total{0};
  parallel_for(n, [&](int64_t begin, int64_t end) {
    int64_t local = 0;
    for (int64_t i = begin; i < end; ++i) local += i;
    total += local;
  });
  return total.load();
}

TEST_F(ThreadPoolTest, SumsAreCorrectWithOneTwoAndFourThreads) {
  constexpr int64_t n = 1'000'003;
  for (int threads : {1, 2, 4}) {
    set_num_threads(threads);
    EXPECT_EQ(num_threads(), threads);
    EXPECT_EQ(parallel_sum(n), n * (n - 1) / 2) << threads << " threads";
  }
}

TEST_F(ThreadPoolTest, ParallelForCoversEachIndexOnceInEvenChunks) {
  for (int threads : {1, 2, 4}) {
    set_num_threads(threads);
    for (int64_t n : {int64_t(1), int64_t(3), int64_t(7), int64_t(1000)}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      std::mutex mutex;
      std::vector<int64_t> chunk_sizes;
      parallel_for(n, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) hits[size_t(i)]++;
        std::lock_guard lock(mutex);
        chunk_sizes.push_back(end - begin);
      });
      for (int64_t i = 0; i < n; ++i)
        EXPECT_EQ(hits[size_t(i)].load(), 1) << "n=" << n << " i=" << i;
      EXPECT_EQ(int64_t(chunk_sizes.size()), std::min<int64_t>(n, threads));
      auto [smallest, largest] = std::minmax_element(chunk_sizes.begin(), chunk_sizes.end());
      EXPECT_LE(*largest - *smallest, 1);
    }
  }
}

TEST_F(ThreadPoolTest, ParallelForHonoursMinChunkAndEmptyRanges) {
  set_num_threads(4);
  std::atomic<int> calls{0};
  parallel_for(0, [&](int64_t, int64_t) { calls++; });
  parallel_for(-5, [&](int64_t, int64_t) { calls++; });
  EXPECT_EQ(calls.load(), 0);
  parallel_for(
      100,
      [&](int64_t begin, int64_t end) {
        EXPECT_GE(end - begin, 40);
        calls++;
      },
      /*min_chunk=*/40);
  EXPECT_EQ(calls.load(), 2);
}

TEST_F(ThreadPoolTest, ParallelLaunchRunsEveryTaskExactlyOnce) {
  set_num_threads(2);
  for (int tasks : {1, 2, 3, 7, 64}) {
    std::vector<std::atomic<int>> runs(static_cast<size_t>(tasks));
    std::atomic<int> wrong_count{0};
    parallel_launch(tasks, [&](int task, int count) {
      if (count != tasks) wrong_count++;
      runs[size_t(task)]++;
    });
    EXPECT_EQ(wrong_count.load(), 0);
    for (int t = 0; t < tasks; ++t) EXPECT_EQ(runs[size_t(t)].load(), 1) << t << " of " << tasks;
  }
  std::atomic<int> default_tasks{0};
  parallel_launch(0, [&](int, int count) {
    EXPECT_EQ(count, 2);
    default_tasks++;
  });
  EXPECT_EQ(default_tasks.load(), 2);
  EXPECT_THROW(parallel_launch(-1, [](int, int) {}), Error);
}

TEST_F(ThreadPoolTest, TasksReallyRunOnSeveralThreads) {
  set_num_threads(2);
  // Task 0 (always the caller's) waits until another thread has started task 1.
  std::atomic<bool> task1_started{false};
  std::thread::id task0_thread, task1_thread;
  bool saw_task1 = false;
  parallel_launch(2, [&](int task, int) {
    if (task == 1) {
      task1_thread = std::this_thread::get_id();
      task1_started = true;
      return;
    }
    task0_thread = std::this_thread::get_id();
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!task1_started && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
    saw_task1 = task1_started;
  });
  EXPECT_TRUE(saw_task1);
  EXPECT_EQ(task0_thread, std::this_thread::get_id());
  EXPECT_NE(task1_thread, task0_thread);
}

TEST_F(ThreadPoolTest, ManySmallLaunchesLoseNothing) {
  for (auto [threads, launches] : {std::pair{2, 10000}, std::pair{4, 2000}}) {
    set_num_threads(threads);
    std::atomic<int64_t> counter{0};
    for (int i = 0; i < launches; ++i) {
      parallel_launch(threads, [&](int task, int) { counter += task + 1; });
    }
    EXPECT_EQ(counter.load(), int64_t(launches) * threads * (threads + 1) / 2) << threads;
  }
}

TEST_F(ThreadPoolTest, LaunchesAfterIdlePeriodsWakeSleepingWorkers) {
  set_num_threads(2);
  for (int i = 0; i < 5; ++i) {
    // Long enough for the workers to stop spinning and go to sleep.
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_EQ(parallel_sum(1000), 1000 * 999 / 2);
  }
}

TEST_F(ThreadPoolTest, NestedParallelForRunsSeriallyWithoutDeadlock) {
  set_num_threads(2);
  EXPECT_FALSE(in_parallel_region());
  constexpr int64_t rows = 16, cols = 1001;
  std::vector<int64_t> row_sums(rows, 0);
  std::atomic<int> nested_flag_missing{0};
  parallel_for(rows, [&](int64_t begin, int64_t end) {
    if (!in_parallel_region()) nested_flag_missing++;
    for (int64_t r = begin; r < end; ++r) {
      std::atomic<int64_t> sum{0};
      std::atomic<int> inner_chunks{0};
      parallel_for(cols, [&](int64_t b, int64_t e) {
        inner_chunks++;
        for (int64_t c = b; c < e; ++c) sum += r * cols + c;
      });
      // Nested work is not split: one chunk, on this thread.
      if (inner_chunks != 1) nested_flag_missing++;
      row_sums[size_t(r)] = sum;
    }
  });
  EXPECT_EQ(nested_flag_missing.load(), 0);
  EXPECT_FALSE(in_parallel_region());
  for (int64_t r = 0; r < rows; ++r)
    EXPECT_EQ(row_sums[size_t(r)], r * cols * cols + cols * (cols - 1) / 2) << r;
  // A nested parallel_launch runs every task too.
  std::atomic<int> inner_runs{0};
  parallel_launch(2, [&](int, int) { parallel_launch(3, [&](int, int) { inner_runs++; }); });
  EXPECT_EQ(inner_runs.load(), 6);
}

TEST_F(ThreadPoolTest, ExceptionInAWorkerTaskReachesTheCaller) {
  set_num_threads(2);
  try {
    parallel_launch(4, [](int task, int) {
      if (task == 3) throw_error("task ", task, " failed");
    });
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "task 3 failed");
  }
  // The pool keeps working afterwards.
  EXPECT_EQ(parallel_sum(10000), 10000 * 9999 / 2);
}

TEST_F(ThreadPoolTest, ExceptionInTheCallersTaskReachesTheCaller) {
  set_num_threads(2);
  EXPECT_THROW(parallel_launch(2,
                               [](int task, int) {
                                 if (task == 0) throw std::runtime_error("caller task");
                               }),
               std::runtime_error);
  EXPECT_EQ(parallel_sum(100), 4950);
}

TEST_F(ThreadPoolTest, FirstOfSeveralExceptionsWins) {
  set_num_threads(4);
  for (int round = 0; round < 50; ++round) {
    try {
      parallel_launch(8, [](int task, int) { throw_error("task ", task); });
      FAIL() << "no exception";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).rfind("task ", 0), 0u) << e.what();
    }
  }
}

TEST_F(ThreadPoolTest, SerialNestedExceptionsPropagate) {
  set_num_threads(2);
  EXPECT_THROW(parallel_for(10,
                            [](int64_t, int64_t) {
                              parallel_for(10, [](int64_t b, int64_t) {
                                if (b == 0) throw_error("inner");
                              });
                            }),
               Error);
}

TEST_F(ThreadPoolTest, SetNumThreadsInsideARegionIsAnError) {
  set_num_threads(2);
  std::atomic<int> errors{0};
  parallel_launch(2, [&](int, int) {
    try {
      set_num_threads(3);
    } catch (const Error&) {
      errors++;
    }
  });
  EXPECT_EQ(errors.load(), 2);
  EXPECT_EQ(num_threads(), 2);
  EXPECT_THROW(set_num_threads(100000), Error);
}

TEST_F(ThreadPoolTest, LaunchesFromSeveralApplicationThreads) {
  set_num_threads(2);
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&wrong, t] {
      for (int i = 0; i < 300; ++i) {
        int64_t n = 100 + t * 10 + i;
        if (parallel_sum(n) != n * (n - 1) / 2) wrong++;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
}

// ---- Thread count configuration ----

TEST(ThreadPoolConfigTest, ParsesThreadCounts) {
  EXPECT_EQ(detail::parse_thread_count("1", "ANVIL_NUM_THREADS"), 1);
  EXPECT_EQ(detail::parse_thread_count("16", "ANVIL_NUM_THREADS"), 16);
  for (const char* bad : {"", "0", "-2", "abc", "4x", " 4", "1025", "99999999999"}) {
    try {
      detail::parse_thread_count(bad, "ANVIL_NUM_THREADS");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()),
                std::string("ANVIL_NUM_THREADS must be a whole number of threads from 1 to 1024, "
                            "got '") +
                    bad + "'");
    }
  }
}

TEST(ThreadPoolConfigTest, EnvironmentSetsTheThreadCountOfANewProcess) {
  CommandResult r = run_command({"/usr/bin/env", "ANVIL_NUM_THREADS=3", ANVIL_THREAD_COUNT_PROBE});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "3\n");
  r = run_command({"/usr/bin/env", "ANVIL_NUM_THREADS=many", ANVIL_THREAD_COUNT_PROBE});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("ANVIL_NUM_THREADS must be a whole number of threads from 1 to 1024, got "
                       "'many'"),
            std::string::npos)
      << r.err;
  r = run_command({"/usr/bin/env", "-u", "ANVIL_NUM_THREADS", ANVIL_THREAD_COUNT_PROBE});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  int unset_default = std::stoi(r.out);
  EXPECT_GE(unset_default, 1);
  EXPECT_LE(unset_default, int(std::max(1u, std::thread::hardware_concurrency())));
}

TEST(ThreadPoolConfigTest, CountsPhysicalCoresFromSysfsTopology) {
  ScratchDir sysfs;
  // cpu0 and cpu1 are hyperthreads of one core; cpu2 is a second core; cpu3 sits in another
  // package with the same core id; cpu4 has no topology.
  std::vector<std::pair<int, int>> topology{{0, 0}, {0, 0}, {0, 1}, {1, 0}};
  for (size_t cpu = 0; cpu < topology.size(); ++cpu) {
    auto dir = sysfs / ("cpu" + std::to_string(cpu)) / "topology";
    std::filesystem::create_directories(dir);
    anvil::testing::write_file(dir / "physical_package_id",
                               std::to_string(topology[cpu].first) + "\n");
    anvil::testing::write_file(dir / "core_id", std::to_string(topology[cpu].second) + "\n");
  }
  std::string root = sysfs.path().string();
  EXPECT_EQ(detail::count_physical_cores(root, std::vector<int>{0, 1, 2, 3}), 3);
  EXPECT_EQ(detail::count_physical_cores(root, std::vector<int>{0, 1}), 1);
  EXPECT_EQ(detail::count_physical_cores(root, std::vector<int>{1, 2}), 2);
  EXPECT_EQ(detail::count_physical_cores(root, std::vector<int>{0, 4}), 2);
  EXPECT_EQ(detail::count_physical_cores(root, std::vector<int>{4, 5}), 0);
  EXPECT_EQ(detail::count_physical_cores(root + "/missing", std::vector<int>{0}), 0);
}

// ---- AnvilParallelLaunch ----

struct SumClosure {
  std::atomic<int64_t> total{0};
  std::atomic<int> seen_num_tasks{-1};
};

int32_t sum_task(int32_t task_id, int32_t num_tasks, void* closure) {
  auto* c = static_cast<SumClosure*>(closure);
  c->total += task_id + 1;
  c->seen_num_tasks = num_tasks;
  return 0;
}

int32_t failing_task(int32_t task_id, int32_t, void*) {
  if (task_id != 2) return 0;
  AnvilSetLastError("task 2 broke");
  return 5;
}

int32_t silent_failing_task(int32_t task_id, int32_t, void*) { return task_id == 1 ? 9 : 0; }

TEST_F(ThreadPoolTest, CAbiParallelLaunchRunsAllTasks) {
  set_num_threads(2);
  SumClosure closure;
  EXPECT_EQ(AnvilParallelLaunch(sum_task, &closure, 5), 0);
  EXPECT_EQ(closure.total.load(), 15);
  EXPECT_EQ(closure.seen_num_tasks.load(), 5);

  // The default: four chunks per thread, 8 tasks on 2 threads (1 + 2 + ... + 8 = 36).
  SumClosure defaults;
  EXPECT_EQ(AnvilParallelLaunch(sum_task, &defaults, 0), 0);
  EXPECT_EQ(defaults.seen_num_tasks.load(), 8);
  EXPECT_EQ(defaults.total.load(), 36);
  // With one thread the default is a single task.
  set_num_threads(1);
  SumClosure single;
  EXPECT_EQ(AnvilParallelLaunch(sum_task, &single, 0), 0);
  EXPECT_EQ(single.seen_num_tasks.load(), 1);
  EXPECT_EQ(single.total.load(), 1);
}

TEST_F(ThreadPoolTest, CAbiParallelLaunchReportsTheTaskError) {
  set_num_threads(2);
  for (int round = 0; round < 20; ++round) {
    AnvilSetLastError(nullptr);
    EXPECT_NE(AnvilParallelLaunch(failing_task, nullptr, 4), 0);
    EXPECT_STREQ(AnvilGetLastError(), "task 2 broke");
  }
  EXPECT_NE(AnvilParallelLaunch(silent_failing_task, nullptr, 2), 0);
  EXPECT_STREQ(AnvilGetLastError(), "parallel task 1 of 2 failed with code 9");
  EXPECT_NE(AnvilParallelLaunch(nullptr, nullptr, 2), 0);
  EXPECT_STREQ(AnvilGetLastError(), "AnvilParallelLaunch: body is null");
  EXPECT_NE(AnvilParallelLaunch(sum_task, nullptr, -3), 0);
}

TEST_F(ThreadPoolTest, CAbiNestedLaunchWithDefaultTasksIsOneTask) {
  set_num_threads(2);
  std::atomic<int> inner_num_tasks{0};
  parallel_launch(2, [&](int, int) {
    SumClosure inner;
    EXPECT_EQ(AnvilParallelLaunch(sum_task, &inner, 0), 0);
    inner_num_tasks += inner.seen_num_tasks.load();
  });
  EXPECT_EQ(inner_num_tasks.load(), 2);
}

}  // namespace
}  // namespace anvil
