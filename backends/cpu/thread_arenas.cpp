// tessel/cpu/thread_arenas.cpp — run_on_threads (launch.hpp): the oneTBB arenas
// that bound a call's threads, kept per calling thread and thread count.
//
// Per calling thread, so that two threads calling tessel at once never queue
// on one arena's external slot; an arena is built the first time a thread asks
// for its count and lives until that thread exits. Worker threads are shared
// by all arenas (oneTBB's), so an idle arena holds none.
#include <memory>
#include <vector>

#include <tbb/task_arena.h>

#include "tessel/cpu/launch.hpp"

namespace tessel::cpu {

void run_on_threads(int threads, void (*fn)(void*), void* arg) {
  struct kept {
    int threads;
    std::unique_ptr<tbb::task_arena> arena;
  };
  thread_local std::vector<kept> arenas;  // one per thread count this thread asked for (a few)
  tbb::task_arena* arena = nullptr;
  for (kept& k : arenas)
    if (k.threads == threads) arena = k.arena.get();
  if (!arena) {
    arenas.push_back({threads, std::make_unique<tbb::task_arena>(threads)});
    arena = arenas.back().arena.get();
  }
  arena->execute([&] { fn(arg); });
}

}  // namespace tessel::cpu
