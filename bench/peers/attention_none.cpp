// bench/peers/attention_none.cpp — GPU builds (cuda, hip): no attention peer in
// tessel-bench; bench/attention_vs_sdpa.py compares against PyTorch SDPA instead.
#include "attention_peer.hpp"

namespace tessel::bench {

std::unique_ptr<attention_peer> make_attention_peer() { return nullptr; }

}  // namespace tessel::bench
