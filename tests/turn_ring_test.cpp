// tests/turn_ring_test.cpp — the consumers' turns (core/turn_ring.hpp) on
// emulated arrival-counting barriers, on the host.
//
// Each unit is a thread that brackets its blocks of every work unit as the
// contract says (begin / end around each block, end_of_work after the work
// unit), with random delays between its calls, so that units race ahead of
// each other. The barriers count arrivals as sm90's named barriers do: a
// barrier of 256 threads completes when 256 have arrived, by a wait (bar.sync:
// arrive, then wait for this completion) or a pass (bar.arrive: arrive and go
// on), whoever sent them; a unit is one warpgroup, 128 threads. The policy
// waits on its own barrier and passes to the next unit's, as sm90's does.
// Must hold: the blocks run one at a time in ring order (unit 0, 1, .. of
// block j, then block j + 1, over the work units in turn), no wait is left
// hanging, and no arrival is left over when every unit is done.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "seed.hpp"
#include "tessel/core/turn_ring.hpp"

namespace tessel::test {
namespace {

// Barriers of `count` threads that count arrivals, not arrivers.
class arrival_barriers {
 public:
  static constexpr int lanes = 128, count = 256;  // a unit is a warpgroup; a turn meets two
  void arrive(int id) {
    std::lock_guard<std::mutex> lock(m_);
    add(bars_[id]);
  }
  // False where the barrier did not complete within the limit (a stuck ring).
  bool sync(int id) {
    std::unique_lock<std::mutex> lock(m_);
    one& b = bars_[id];
    const long phase = b.completions;
    add(b);
    return cv_.wait_for(lock, std::chrono::seconds(5), [&] { return b.completions != phase || stuck_; }) && !stuck_;
  }
  void give_up() {
    std::lock_guard<std::mutex> lock(m_);
    stuck_ = true;
    cv_.notify_all();
  }
  int left_over(int id) {
    std::lock_guard<std::mutex> lock(m_);
    return bars_[id].arrived;
  }

 private:
  struct one {
    int arrived = 0;
    long completions = 0;
  };
  void add(one& b) {
    b.arrived += lanes;
    if (b.arrived >= count) {
      b.arrived -= count;
      ++b.completions;
      cv_.notify_all();
    }
  }
  std::mutex m_;
  std::condition_variable cv_;
  std::array<one, 16> bars_{};
  bool stuck_ = false;
};

struct unit_context {
  int index;
  arrival_barriers* bars;
  bool* failed;
  int unit_index() const { return index; }
};

// sm90's turns (backends/cuda/tile_ops_sm90.hpp) on the emulated barriers:
// wait on one's own, pass to the next unit's.
struct emulated_turns {
  template <int Units, class U> static void turn_wait(U& u) {
    if (!u.bars->sync(u.index)) {
      *u.failed = true;
      u.bars->give_up();
    }
  }
  template <int Units, class U> static void turn_pass(U& u) { u.bars->arrive((u.index + 1) % Units); }
};

struct entry {
  int work, block, unit;
  bool operator==(const entry& o) const { return work == o.work && block == o.block && unit == o.unit; }
};

template <int Units> void run_ring(const std::vector<int>& blocks, std::uint64_t seed) {
  using ring = turn_ring<emulated_turns, Units>;
  arrival_barriers bars;
  std::mutex log_mutex;
  std::vector<entry> log;
  std::atomic<int> inside{0};
  std::atomic<bool> overlap{false};
  std::array<bool, Units> failed{};
  std::vector<std::thread> threads;
  for (int u = 0; u < Units; ++u)
    threads.emplace_back([&, u] {
      std::mt19937_64 rng(seed + 7919 * u);
      auto jitter = [&] {  // mostly nothing, sometimes a yield, now and then up to 300 µs
        const int r = int(rng() % 16);
        if (r == 0) std::this_thread::sleep_for(std::chrono::microseconds(rng() % 300));
        else if (r < 4) std::this_thread::yield();
      };
      unit_context ctx{u, &bars, &failed[std::size_t(u)]};
      for (int w = 0; w < int(blocks.size()) && !failed[std::size_t(u)]; ++w) {
        for (int j = 0; j < blocks[std::size_t(w)] && !failed[std::size_t(u)]; ++j) {
          ring::begin(ctx, j);
          if (failed[std::size_t(u)]) break;
          if (inside.fetch_add(1) != 0) overlap = true;
          {
            std::lock_guard<std::mutex> lock(log_mutex);
            log.push_back({w, j, u});
          }
          jitter();
          inside.fetch_sub(1);
          ring::end(ctx);
          jitter();
        }
        jitter();  // the epilogue
        ring::end_of_work(ctx, blocks[std::size_t(w)]);
      }
    });
  for (auto& t : threads) t.join();
  const std::string what = std::to_string(Units) + " units, seed " + std::to_string(seed);
  for (int u = 0; u < Units; ++u) ASSERT_FALSE(failed[std::size_t(u)]) << what << ": unit " << u << " waited in vain";
  EXPECT_FALSE(overlap) << what << ": two units inside a block at once";
  std::vector<entry> expected;
  for (int w = 0; w < int(blocks.size()); ++w)
    for (int j = 0; j < blocks[std::size_t(w)]; ++j)
      for (int u = 0; u < Units; ++u) expected.push_back({w, j, u});
  ASSERT_EQ(log.size(), expected.size()) << what;
  for (std::size_t i = 0; i < log.size(); ++i)
    ASSERT_TRUE(log[i] == expected[i]) << what << ": entry " << i << " is work " << log[i].work << " block "
                                       << log[i].block << " unit " << log[i].unit << ", expected work "
                                       << expected[i].work << " block " << expected[i].block << " unit "
                                       << expected[i].unit;
  for (int u = 0; u < Units; ++u) EXPECT_EQ(bars.left_over(u), 0) << what << ": arrivals left at barrier " << u;
}

// Work units of 0 .. 5 steps (attention: steps + 1 blocks, none without steps).
std::vector<int> random_blocks(std::mt19937_64& rng, int n) {
  std::vector<int> blocks;
  for (int i = 0; i < n; ++i) {
    const int steps = int(rng() % 6);
    blocks.push_back(steps > 0 ? steps + 1 : 0);
  }
  return blocks;
}

TEST(TurnRing, TwoUnitsRaceInTurn) {
  std::mt19937_64 rng(case_seed("turn-ring-2"));
  for (int run = 0; run < 6; ++run) run_ring<2>(random_blocks(rng, 24), rng());
}

TEST(TurnRing, ThreeUnitsRaceInTurn) {
  std::mt19937_64 rng(case_seed("turn-ring-3"));
  for (int run = 0; run < 6; ++run) run_ring<3>(random_blocks(rng, 24), rng());
}

// One block a work unit (attention has two or more; the contract allows
// one), back to back: unit 0's passes after one work unit's block and after
// the next one's follow each other closest.
TEST(TurnRing, OneBlockWorkUnits) {
  std::mt19937_64 rng(case_seed("turn-ring-one"));
  run_ring<2>(std::vector<int>(64, 1), rng());
  run_ring<3>(std::vector<int>(64, 1), rng());
}

}  // namespace
}  // namespace tessel::test
