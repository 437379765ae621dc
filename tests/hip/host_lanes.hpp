// tests/hip/host_lanes.hpp — HIP contexts on the host: a lane, a block thread, a wavefront.
//
// host_ctx fills the tile-op context contract with values the test sets:
// lane() for warp-scope ops, thread()/threads() for block-scope copies. For
// ops that exchange values across lanes (shfl_xor), run_wave() runs a body once
// per lane, as a wavefront executes it: 64 fibers (ucontext) on the calling
// thread, in lock step at every shfl_xor (all lanes store their value, then
// all read their partner's, then all go on). One thread and no locks, so a
// wave step costs microseconds and runs the same under the sanitizers (the
// stack switches are announced to AddressSanitizer).
#pragma once
#include <ucontext.h>

#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <stdexcept>

#include "asan.hpp"  // (tests/)
#if TESSEL_TEST_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

namespace tessel::test {

class wave_exchange {
 public:
  static constexpr int lanes = 64;

  float shfl_xor(int lane, float v, int mask) {
    slot_[lane] = v;
    yield(lane);
    const float r = slot_[lane ^ mask];
    yield(lane);
    return r;
  }

  // body(lane) once per lane, each lane a fiber: a round resumes every lane in
  // turn until its next yield; all must yield (or all finish) in each round.
  void run(const std::function<void(int)>& body) {
    body_ = &body;
    char* stacks = stack_pool();
    for (int l = 0; l < lanes; ++l) {
      fiber& f = fibers_[l];
      f.done = false;
      f.fake_stack = nullptr;
      if (getcontext(&f.ctx) != 0) throw std::runtime_error("host_lanes: getcontext failed");
      f.ctx.uc_stack.ss_sp = stacks + std::size_t(l) * stack_bytes;
      f.ctx.uc_stack.ss_size = stack_bytes;
      f.ctx.uc_link = nullptr;
      makecontext(&f.ctx, reinterpret_cast<void (*)()>(&entry), 1, l);
    }
    for (int finished = 0; finished < lanes;) {
      for (int l = 0; l < lanes; ++l)
        if (!fibers_[l].done) resume(l);
      finished = 0;
      for (const fiber& f : fibers_) finished += f.done ? 1 : 0;
      if (finished != 0 && finished != lanes && !error_)
        error_ = std::make_exception_ptr(std::logic_error("host_lanes: lanes diverged (some finished, some wait)"));
      if (error_) break;
    }
    if (error_) std::rethrow_exception(error_);
  }

 private:
  static constexpr std::size_t stack_bytes = 256 * 1024;
  struct fiber {
    ucontext_t ctx;
    bool done = false;
    void* fake_stack = nullptr;  // AddressSanitizer's, while the fiber is switched out
  };

  static char* stack_pool() {  // one pool per thread, reused by every wave
    thread_local std::unique_ptr<char[]> pool(new char[lanes * stack_bytes]);
    return pool.get();
  }
  static wave_exchange*& current() {
    thread_local wave_exchange* w = nullptr;
    return w;
  }
  static void entry(int lane) {
    wave_exchange* w = current();
    w->arrived_in_fiber(lane);
    try {
      (*w->body_)(lane);
    } catch (...) {
      if (!w->error_) w->error_ = std::current_exception();
    }
    w->fibers_[lane].done = true;
    w->leave_fiber(lane, true);
  }

  void resume(int lane) {
    current() = this;
#if TESSEL_TEST_ASAN
    void* fake = nullptr;
    __sanitizer_start_switch_fiber(&fake, fibers_[lane].ctx.uc_stack.ss_sp, stack_bytes);
    swapcontext(&main_, &fibers_[lane].ctx);
    __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#else
    swapcontext(&main_, &fibers_[lane].ctx);
#endif
  }
  void yield(int lane) {
    leave_fiber(lane, false);
    arrived_in_fiber(lane);
  }
  void leave_fiber(int lane, bool exiting) {
#if TESSEL_TEST_ASAN
    __sanitizer_start_switch_fiber(exiting ? nullptr : &fibers_[lane].fake_stack, main_bottom_, main_size_);
#endif
    (void)exiting;
    swapcontext(&fibers_[lane].ctx, &main_);
  }
  void arrived_in_fiber(int lane) {
#if TESSEL_TEST_ASAN
    __sanitizer_finish_switch_fiber(fibers_[lane].fake_stack, &main_bottom_, &main_size_);
#endif
    (void)lane;
  }

  ucontext_t main_;
  fiber fibers_[lanes];
  const std::function<void(int)>* body_ = nullptr;
  std::exception_ptr error_;
  const void* main_bottom_ = nullptr;
  std::size_t main_size_ = 0;
  float slot_[lanes] = {};
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

// body(ctx) once per lane of one wavefront, in lock step at every shfl_xor.
template <class Body> void run_wave(Body body) {
  wave_exchange wave;
  wave.run([&](int l) {
    host_ctx ctx;
    ctx.lane_ = l;
    ctx.thread_ = l;
    ctx.threads_ = 64;
    ctx.wave = &wave;
    body(ctx);
  });
}

}  // namespace tessel::test
