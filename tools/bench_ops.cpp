// tools/bench_ops.cpp — the registry of tessel-bench ops and the shared timing loop.
#include "bench_ops.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

#include "device_buffer.hpp"

namespace tessel::tools {

const std::vector<bench_op>& bench_ops() {
  static const std::vector<bench_op> ops = {
      {"gemm",
       "[--shapes S1,S2,... | --shape MxNxK ...] [--trans nn,nt,tn,tt|all | --trans-a --trans-b]\n"
       "      [--out f32|input[,...]] [--batch N[,...]] [--stream default|own]",
       {{"--shapes", true, true}, {"--shape", true, true}, {"--trans-a", false}, {"--trans-b", false},
        {"--trans", true, true}, {"--out", true, true}, {"--batch", true, true}, {"--stream", true}},
       bench_gemm},
      {"attention",
       "[--seqs 1024,4096] [--head-dim 64,128] [--heads H] [--kv-heads H] [--batch B | --tokens T]\n"
       "      [--causal | --both] [--peer-max-gib G]",
       {{"--seqs", true}, {"--head-dim", true}, {"--heads", true}, {"--kv-heads", true}, {"--batch", true},
        {"--tokens", true}, {"--causal", false}, {"--both", false}, {"--peer-max-gib", true}},
       bench_attention},
  };
  return ops;
}

double time_calls(const device& dev, contender& c, int inner) {
  support::synchronize(dev);
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < inner; ++i) c.call();
  support::synchronize(dev);
  const auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::milli>(t1 - t0).count() / inner;
}

void calibrate(const device& dev, contender& c, double min_sample_ms) {
  time_calls(dev, c, 1);  // warm-up: first-touch, library initialisation, kernel loading
  const double one = time_calls(dev, c, 1);
  c.inner = one >= min_sample_ms ? 1 : int(std::min(1000.0, std::ceil(min_sample_ms / std::max(one, 1e-6))));
}

void interleave(const device& dev, std::vector<contender*> cs, int rounds, const std::function<void(int)>& progress) {
  for (int r = 0; r < rounds; ++r) {
    if (progress) progress(r);
    for (std::size_t i = 0; i < cs.size(); ++i) {
      contender& c = *cs[r % 2 ? cs.size() - 1 - i : i];
      c.samples.push_back(time_calls(dev, c, c.inner));
    }
  }
}

void map_pages(const device& dev, support::device_buffer& buffer) {
  if (dev.kind == device_kind::host && buffer.bytes() > 0) std::memset(buffer.data(), 0xFF, buffer.bytes());
}

double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace tessel::tools
