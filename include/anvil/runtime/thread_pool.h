// The runtime's thread pool: one persistent set of workers that every parallel loop shares,
// both anvil's own C++ code and compiled kernels (through AnvilParallelLaunch in c_abi.h).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "anvil/support/function_ref.h"

namespace anvil {

// Threads a parallel region uses, the calling thread included (always >= 1).
// Throws Error if ANVIL_NUM_THREADS is set to something that is not a valid thread count.
int num_threads();

// Sets the threads later parallel regions use; n <= 0 restores default_num_threads(). Waits for
// a launch running on another thread to finish. Throws Error inside a parallel region.
void set_num_threads(int n);

// ANVIL_NUM_THREADS if set, otherwise the physical cores this process may run on (hardware
// threads when the topology cannot be read).
int default_num_threads();

// Whether the calling thread is running a task of a parallel region. Parallel calls made there
// run serially on the calling thread, so nesting never deadlocks or oversubscribes.
bool in_parallel_region();

// Runs fn(task_id, num_tasks) for every task_id in [0, num_tasks), num_tasks 0 meaning
// num_threads(). The calling thread runs task 0 and helps with the rest; tasks are handed out
// in order to whichever thread is free. Returns when all have finished. If tasks throw, tasks
// not yet started are skipped and the first exception is rethrown here.
// If another thread is already running a launch, this one runs serially on the calling thread.
void parallel_launch(int num_tasks, FunctionRef<void(int task_id, int num_tasks)> fn);

// Splits [0, n) into contiguous chunks of near-equal size, at most one per thread and each of
// at least min_chunk iterations (except when n is smaller), and runs fn(begin, end) on every
// chunk in parallel. Errors behave as in parallel_launch.
void parallel_for(int64_t n, FunctionRef<void(int64_t begin, int64_t end)> fn,
                  int64_t min_chunk = 1);

namespace detail {

// Parses a thread count such as ANVIL_NUM_THREADS's value: a decimal integer in [1, 1024].
// Throws Error naming `source` (e.g. "ANVIL_NUM_THREADS") and the text otherwise.
int parse_thread_count(std::string_view text, std::string_view source);

// Distinct (physical_package_id, core_id) pairs among cpu_ids, read from
// <sysfs_cpu_dir>/cpu<N>/topology/; 0 if none of them can be read.
int count_physical_cores(const std::string& sysfs_cpu_dir, std::span<const int> cpu_ids);

}  // namespace detail
}  // namespace anvil
