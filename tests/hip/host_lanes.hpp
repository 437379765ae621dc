// tests/hip/host_lanes.hpp — HIP contexts on the host: a lane, a block thread, a wavefront.
//
// host_ctx fills the tile-op context contract with values the test sets:
// lane() for warp-scope ops, thread()/threads() for block-scope copies. For
// ops that exchange values across lanes (shfl_xor), run_wave() runs a body once
// per lane, 64 host threads in lock step at every shfl_xor (a barrier before
// and after each exchange), as a wavefront executes it.
#pragma once
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace tessel::test {

class wave_exchange {
 public:
  float shfl_xor(int lane, float v, int mask) {
    slot_[lane] = v;
    barrier();
    const float r = slot_[lane ^ mask];
    barrier();
    return r;
  }

 private:
  void barrier() {
    std::unique_lock<std::mutex> lock(m_);
    const unsigned gen = generation_;
    if (++arrived_ == 64) {
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
    } else {
      cv_.wait(lock, [&] { return generation_ != gen; });
    }
  }
  std::mutex m_;
  std::condition_variable cv_;
  int arrived_ = 0;
  unsigned generation_ = 0;
  float slot_[64] = {};
};

struct host_ctx {
  int lane_ = 0, thread_ = 0, threads_ = 1;
  wave_exchange* wave = nullptr;
  int block_x() const { return 0; }
  int block_y() const { return 0; }
  int block_z() const { return 0; }
  int grid_z() const { return 1; }
  int warp() const { return thread_ / 64; }
  int lane() const { return lane_; }
  int thread() const { return thread_; }
  int threads() const { return threads_; }
  void sync() const {}
  float shfl_xor(float v, int mask) const { return wave->shfl_xor(lane_, v, mask); }
  char* smem() const { return nullptr; }
};

// body(ctx) once per lane of one wavefront, concurrently.
template <class Body> void run_wave(Body body) {
  wave_exchange wave;
  std::vector<std::thread> lanes;
  for (int l = 0; l < 64; ++l)
    lanes.emplace_back([&, l] {
      host_ctx ctx;
      ctx.lane_ = l;
      ctx.thread_ = l;
      ctx.threads_ = 64;
      ctx.wave = &wave;
      body(ctx);
    });
  for (auto& t : lanes) t.join();
}

}  // namespace tessel::test
