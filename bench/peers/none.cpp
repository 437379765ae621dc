// bench/peers/none.cpp — builds without a GEMM peer (hip): tessel-bench prints "none".
#include "peer.hpp"

namespace tessel::bench {

std::unique_ptr<gemm_peer> make_gemm_peer() { return nullptr; }

}  // namespace tessel::bench
