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
#include <functional>
#include <string>
#include <vector>

#include "bench_report.hpp"
#include "cli.hpp"
#include "tessel/tensor.hpp"

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

}  // namespace tessel::tools
