// The runtime's side of the kernel C ABI: last-error reporting and workspace memory.
// AnvilParallelLaunch lives with the thread pool.
#include "anvil/runtime/c_abi.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace {

thread_local std::string t_last_error;

// ---- Workspace ----
//
// Each block carries a header just before the pointer handed out, so any thread can free it and
// the cache knows its size. The header sits inside the alignment padding in front of the
// block: a block aligned to A (>= 64) starts A bytes into its allocation.

constexpr uint32_t kWorkspaceMagic = 0x616e7677;  // "anvw"
constexpr uint64_t kMinAlignment = 64;
constexpr uint64_t kMaxAlignment = uint64_t(1) << 20;
constexpr size_t kCachedBlocksPerThread = 8;

struct WorkspaceHeader {
  void* base;         // what aligned_alloc returned
  uint64_t capacity;  // usable bytes after the header's block pointer
  uint64_t alignment;
  uint32_t magic;
};
static_assert(sizeof(WorkspaceHeader) <= kMinAlignment);

WorkspaceHeader* header_of(void* block) {
  return reinterpret_cast<WorkspaceHeader*>(static_cast<char*>(block) - sizeof(WorkspaceHeader));
}

void release_block(void* block) {
  WorkspaceHeader* header = header_of(block);
  header->magic = 0;
  std::free(header->base);
}

// Recently freed blocks of this thread, reused by later allocations of at most their size.
struct WorkspaceCache {
  std::array<void*, kCachedBlocksPerThread> blocks{};
  size_t count = 0;

  ~WorkspaceCache() {
    for (size_t i = 0; i < count; ++i) release_block(blocks[i]);
  }

  // The smallest cached block that fits, removed from the cache; nullptr if none does.
  void* take(uint64_t nbytes, uint64_t alignment) {
    size_t best = count;
    for (size_t i = 0; i < count; ++i) {
      const WorkspaceHeader* h = header_of(blocks[i]);
      if (h->capacity < nbytes || h->alignment < alignment) continue;
      if (best == count || h->capacity < header_of(blocks[best])->capacity) best = i;
    }
    if (best == count) return nullptr;
    void* block = blocks[best];
    blocks[best] = blocks[--count];
    return block;
  }

  // Keeps block for reuse, evicting the smallest cached block when full.
  void give(void* block) {
    if (count < blocks.size()) {
      blocks[count++] = block;
      return;
    }
    size_t smallest = 0;
    for (size_t i = 1; i < count; ++i)
      if (header_of(blocks[i])->capacity < header_of(blocks[smallest])->capacity) smallest = i;
    if (header_of(blocks[smallest])->capacity >= header_of(block)->capacity) {
      release_block(block);
      return;
    }
    release_block(blocks[smallest]);
    blocks[smallest] = block;
  }
};

thread_local WorkspaceCache t_workspace_cache;

void set_error(const char* msg) { AnvilSetLastError(msg); }

// ---- AMX ----
//
// Linux keeps the AMX tile data out of a process's saved state until the process asks for it;
// a tile instruction before that faults. Empty on success, else why not.
std::string request_amx_permission() {
#if defined(__linux__) && defined(__x86_64__)
  constexpr long kArchGetXcompPerm = 0x1022, kArchReqXcompPerm = 0x1023;
  constexpr int kXfeatureTileData = 18;
  unsigned long permitted = 0;
  if (syscall(SYS_arch_prctl, kArchGetXcompPerm, &permitted) == 0 &&
      (permitted & (1ul << kXfeatureTileData)))
    return {};
  if (syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureTileData) == 0) return {};
  return std::string(
             "AMX: the operating system refused this process the AMX tile state "
             "(arch_prctl ARCH_REQ_XCOMP_PERM: ") +
         std::strerror(errno) +
         "); the CPU or kernel may lack AMX: build for a target without amx-tile "
         "(-mattr=-amx-tile)";
#else
  return "AMX: tile kernels run only on x86-64 Linux; build for a target without amx-tile";
#endif
}

}  // namespace

extern "C" {

void AnvilSetLastError(const char* msg) {
  try {
    if (msg) {
      t_last_error.assign(msg);
    } else {
      t_last_error.clear();
    }
  } catch (...) {
    // Out of memory while copying the message: keep whatever fits rather than throw into C.
    t_last_error.clear();
  }
}

const char* AnvilGetLastError(void) { return t_last_error.c_str(); }

void* AnvilBackendAllocWorkspace(uint64_t nbytes, uint64_t alignment) {
  if (alignment == 0) alignment = kMinAlignment;
  if ((alignment & (alignment - 1)) != 0 || alignment > kMaxAlignment) {
    set_error("AnvilBackendAllocWorkspace: alignment must be a power of two up to 1 MiB");
    return nullptr;
  }
  alignment = std::max(alignment, kMinAlignment);
  // Round sizes up so slightly different requests can share cached blocks.
  uint64_t capacity =
      (std::max<uint64_t>(nbytes, 1) + kMinAlignment - 1) / kMinAlignment * kMinAlignment;
  if (capacity < nbytes || capacity > (uint64_t(1) << 48)) {
    set_error("AnvilBackendAllocWorkspace: size too large");
    return nullptr;
  }
  if (void* block = t_workspace_cache.take(capacity, alignment)) return block;
  uint64_t total = (alignment + capacity + alignment - 1) / alignment * alignment;
  void* base = std::aligned_alloc(size_t(alignment), size_t(total));
  if (!base) {
    set_error("AnvilBackendAllocWorkspace: out of memory");
    return nullptr;
  }
  void* block = static_cast<char*>(base) + alignment;
  *header_of(block) = WorkspaceHeader{base, capacity, alignment, kWorkspaceMagic};
  return block;
}

int32_t AnvilBackendFreeWorkspace(void* ptr) {
  if (!ptr) return 0;
  if (reinterpret_cast<uintptr_t>(ptr) % kMinAlignment != 0 ||
      header_of(ptr)->magic != kWorkspaceMagic) {
    set_error("AnvilBackendFreeWorkspace: pointer was not returned by AnvilBackendAllocWorkspace");
    return -1;
  }
  t_workspace_cache.give(ptr);
  return 0;
}

int32_t AnvilBackendRequestAMX(void) {
  // The answer cannot change within a process: asked once, remembered (with its message).
  static const std::string refusal = request_amx_permission();
  if (refusal.empty()) return 0;
  set_error(refusal.c_str());
  return -1;
}

}  // extern "C"
