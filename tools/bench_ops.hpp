// tools/bench_ops.hpp — the ops tessel-bench knows, and what they share.
//
// Contract: an op is one entry of bench_ops(): a name (the sub-command), its
// own options and usage lines, and run(), which reads the common settings in
// bench_env, adds its table and rows to env.report, and returns 0 when every
// result passed its correctness check, 1 otherwise. Adding an op (attention)
// is one source file with its run() and one line in bench_ops.cpp.
// The timing helpers here are the ones every op should use, so that all ops
// time the same way: warm-up, calls batched to at least min_sample_ms between
// device synchronizations, contenders interleaved round by round, medians.
#pragma once
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "bench_report.hpp"
#include "cli.hpp"
#include "tessel/tensor.hpp"

namespace tessel::support {
class device_buffer;
}

namespace tessel::tools {

struct bench_env {
  device dev;                   // where the op runs: this build's device (the host in a CPU build)
  bool gpu = false;
  int repeat = 7;               // timed rounds per contender
  double tol = 1e-3;            // correctness check: FAIL above this relative error
  std::vector<dtype> dtypes;
  std::vector<int> threads;     // CPU builds: thread counts to sweep; GPU builds: {0}
  double rotate_bytes = 256.0 * (1 << 20);  // input sets are rotated until they span this much memory
  double min_sample_ms = 1.0;
  bench_report* report = nullptr;
  // Ops call this once their own options are checked (so a bad command line is
  // a usage error, exit 2, even where the device is missing): throws if the
  // build's device is not available (exit 1).
  void require_device() const;
};

struct bench_op {
  const char* name;
  const char* usage;  // the op's own option synopsis, e.g. "[--shapes 1024,2048 | --shape MxNxK ...]"
  std::vector<option_spec> options;
  int (*run)(const parsed_args& args, bench_env& env);
};

const std::vector<bench_op>& bench_ops();

int bench_gemm(const parsed_args& args, bench_env& env);
int bench_attention(const parsed_args& args, bench_env& env);

// One thing being timed: call() enqueues or runs one operation.
struct contender {
  std::function<void()> call;
  int inner = 1;                 // calls per sample, set by calibrate()
  std::vector<double> samples;   // ms per call, one per round
};

// Milliseconds per call of `inner` back-to-back calls between device syncs.
double time_calls(const device& dev, contender& c, int inner);
// Warm-up call, then a single timed call to choose `inner` (>= min_sample_ms per sample, at most 1000 calls).
void calibrate(const device& dev, contender& c, double min_sample_ms);
// `rounds` rounds; in each, every contender takes one sample, the order alternating between rounds.
// `progress` (may be empty) is called with the round number before each round.
void interleave(const device& dev, std::vector<contender*> cs, int rounds, const std::function<void(int)>& progress);
double median(std::vector<double> v);
// Writes every byte of a buffer on the host (0xFF: NaN in every float type), so that its pages are
// mapped before any timed call: an output buffer that a timed call wrote first would charge that call
// the page faults of its first touch (on a 2-core VM, a quarter of a 512^3 fp32 GEMM's time), and how
// many of a row's samples pay them would depend on the number of sets and rounds. A no-op for device
// memory (mapped when allocated).
void map_pages(const device& dev, support::device_buffer& buffer);
// The buffer set of a contender's i-th timed call, of `sets` rotated sets: tessel's call i reads set
// i % sets, the peer's (i + sets / 2) % sets. In lockstep (both reading set i in turn) the second of a
// round would find the inputs the first just read still in cache (L2 on a GPU, the last-level cache
// on a CPU), and as the order alternates between rounds each contender would be warm in every other
// round: its median would then depend on the parity of the round count. Half the sets apart, each
// reads inputs that neither contender has touched for sets / 2 calls (over half the rotated bytes).
inline std::size_t rotated_set(std::size_t i, std::size_t sets, bool peer) {
  return (i + (peer ? sets / 2 : 0)) % sets;
}

}  // namespace tessel::tools
