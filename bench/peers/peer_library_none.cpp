// bench/peers/peer_library_none.cpp — GPU builds (cuda, hip): the peer library
// (cuBLAS, or none) has no process-wide kernel choice for tessel-bench to make.
#include "peer_library.hpp"

namespace tessel::bench {

void choose_peer_library(char**) {}

std::vector<library_fact> peer_library_facts() { return {}; }

}  // namespace tessel::bench
