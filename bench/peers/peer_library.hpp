// bench/peers/peer_library.hpp — the peer library as a process-wide choice:
// what tessel-bench sets before the library picks its kernels, and what the
// library then says it runs.
//
// Contract: tessel-bench's main calls choose_peer_library(argv) before anything
// else, with main's argv. It may replace the process: the OpenBLAS peer (CPU
// builds) re-executes /proc/self/exe with the same argv and OPENBLAS_CORETYPE
// added when that variable is unset, the CPU has AVX-512F and OpenBLAS picked a
// core without AVX-512 kernels (OPENBLAS_CORETYPE is read once, when the
// library loads). An OPENBLAS_CORETYPE given by the caller is always used as
// given. choose_peer_library returns when nothing is to be replaced, or when the
// replacement fails (the run then goes on with the library's own choice, and
// the facts say so). peer_library_facts() are (key, value) pairs that the
// header prints and --json records under "meta": for OpenBLAS its config string,
// the core name it runs, and where OPENBLAS_CORETYPE came from. Builds whose
// peer has no such choice (cuda, hip) do nothing and return no facts.
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace tessel::bench {

void choose_peer_library(char** argv);

using library_fact = std::pair<std::string, std::string>;
std::vector<library_fact> peer_library_facts();

}  // namespace tessel::bench
