// tessel/cuda/attention_launch.hpp — the visitors that ops::attention_dispatch
// calls with the kernel it picked for a call: launch it on a stream, or ask
// whether the TMA schedule can take the call (tensor maps describe q, k and v).
// Shared by the backend's entry (attention.cu) and the tests that launch a
// configuration directly. Include only from CUDA translation units.
#pragma once
#include <cuda_runtime.h>

#include "tessel/cuda/launch.hpp"

namespace tessel::cuda {

struct attention_launcher {
  cudaStream_t stream;
  template <class Tag, class Problem> void operator()(Tag, const Problem& problem) const {
    using K = typename Tag::type;
    launch<K, K::warps * warp_lanes>(K::shape(problem), K::prepare(problem), stream);
  }
};

struct attention_tma_applies {
  bool& ok;
  template <class Tag, class Problem> void operator()(Tag, const Problem& problem) const {
    using K = typename Tag::type;
    ok = K::schedule::template supports<typename K::op>(problem);
  }
};

}  // namespace tessel::cuda
