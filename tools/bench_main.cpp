// tools/bench_main.cpp — tessel-bench: time tessel ops against a peer library.
//
// Lets the peer library choose its kernels first (peer_library.hpp: it may
// re-execute the process), parses the common options, prints the machine
// description and the peer library's facts, runs the op named by the first
// word (bench_ops.hpp), writes --json. Exit status: 0 all checks passed, 1 a
// check failed or an error, 2 a bad command line.
#include <stdexcept>
#include <oneapi/tbb/info.h>

#include <cstdio>
#include <new>

#include "bench_ops.hpp"
#include "device_buffer.hpp"
#include "output_file.hpp"
#include "peer_library.hpp"
#include "tessel/tessel.hpp"

// TESSEL_TOOLS_VERSION and TESSEL_TOOLS_COMPILER come from tools/CMakeLists.txt.

namespace tessel::tools {
namespace {

const std::vector<option_spec> common_options = {
    {"--dtype", true}, {"--threads", true}, {"--repeat", true}, {"--json", true}, {"--tol", true},
    {"--rotate-mib", true}, {"--min-sample-ms", true}};

std::string usage() {
  std::string u = "usage:\n";
  for (const auto& op : bench_ops())
    u += std::string("  tessel-bench ") + op.name + " " + op.usage +
         "\n      [--dtype fp32|fp16|bf16[,...]] [--threads N[,...]] [--repeat R] [--json FILE] [--tol T]\n"
         "      [--rotate-mib MiB] [--min-sample-ms MS]\n";
  u += "(tessel-bench --help for details)\n";
  return u;
}

const char details[] =
    "\n"
    "gemm: tessel::gemm against the build's peer (OpenBLAS sgemm on CPU, cuBLAS GemmEx / GemmStridedBatchedEx\n"
    "  on CUDA, none on HIP) on the same inputs. --shapes S,... are square sizes, --shape MxNxK (repeatable)\n"
    "  any; default --shapes 1024,2048,4096. --out f32|input (list): C in fp32 (default) or the input type;\n"
    "  --trans nn,nt,tn,tt|all: op(A), op(B) (nt = a @ b.T); --batch N (list): a strided batch of N products.\n"
    "  --stream default|own (GPU builds): both contenders on the legacy default stream (default) or on one\n"
    "  non-blocking stream of the bench's own (where a GPU launches a kernel to overlap the one before it).\n"
    "attention: tessel::attention, layout [batch, seq, heads, head_dim], seq_q = seq_kv = each of --seqs\n"
    "  (default 1024,4096), --head-dim list (default 64,128), --heads (default 8), --kv-heads (default heads;\n"
    "  must divide heads), --batch (default 1) or --tokens T (batch = max(1, T / seq)); --causal, or --both\n"
    "  for non-causal and causal rows. FLOPs = 4*batch*heads*seq^2*head_dim, halved when causal. Peer on CPU:\n"
    "  an unfused attention (OpenBLAS sgemm, fp32 softmax, sgemm; one (batch, head) at a time) on the same\n"
    "  values widened to fp32; it needs seq^2 floats, so rows above --peer-max-gib (default 6) skip it and\n"
    "  say so. GPU builds: no peer (bench/attention_vs_sdpa.py compares with SDPA), --dtype default bf16,\n"
    "  fp32 refused. Checked: tessel vs peer on all of out and vs float64 on 32 sampled query rows; --tol\n"
    "  defaults per dtype (bf16 1e-2, fp16 2e-3, fp32 1e-5). Column +MiB: tessel's peak RSS growth in\n"
    "  its first call (CPU).\n"
    "OpenBLAS (CPU builds): OPENBLAS_CORETYPE, when set, is used as given. When it is unset, the CPU has\n"
    "  AVX-512F and OpenBLAS picked a core without AVX-512 kernels (e.g. Haswell, as a release older than the\n"
    "  CPU may), tessel-bench sets OPENBLAS_CORETYPE=SkylakeX and re-executes itself, so the peer runs its\n"
    "  AVX-512 sgemm. The header and the JSON meta name the config, the core OpenBLAS runs and where\n"
    "  OPENBLAS_CORETYPE came from (peer_openblas_config, peer_openblas_corename, peer_openblas_coretype).\n"
    "--dtype      input types to sweep (default fp32)\n"
    "--threads    CPU builds: thread counts to sweep for tessel and the peer (default: all cores)\n"
    "--repeat     timed rounds per contender (default 7); the table shows the median\n"
    "--json       also write the rows and the machine description to FILE (checked before the run;\n"
    "             replaced at the end, whole: written to a temporary beside it, then renamed)\n"
    "--tol        correctness check threshold on the relative error (default 1e-3)\n"
    "--rotate-mib input sets are rotated until they span this much memory (default 256)\n"
    "--min-sample-ms  calls are batched until one sample takes this long (default 1)\n"
    "exit status: 0 all checks ok, 1 a check failed or an error, 2 bad command line.\n";

std::vector<dtype> parse_dtypes(const std::string& list) {
  std::vector<dtype> out;
  for (const auto& w : split(list, ',', "--dtype")) out.push_back(parse_dtype(w));
  return out;
}

int run(int argc, char** argv) {
  std::vector<std::string> words(argv + 1, argv + argc);
  if (words.empty()) throw usage_error("no op given");
  const std::string name = words[0];
  words.erase(words.begin());
  if (name == "-h" || name == "--help" || name == "help") {
    std::fputs(usage().c_str(), stdout);
    std::fputs(details, stdout);
    return 0;
  }
  const bench_op* op = nullptr;
  for (const auto& o : bench_ops())
    if (name == o.name) op = &o;
  if (!op) throw usage_error("unknown op '" + name + "'");
  std::vector<option_spec> spec = common_options;
  spec.insert(spec.end(), op->options.begin(), op->options.end());
  const parsed_args args = parse_args(words, spec);

  bench_report report;
  bench_env env;
  env.report = &report;
  env.dev = support::default_device();
  env.gpu = env.dev.kind != device_kind::host;
  env.repeat = int(args.integer("--repeat", 7, 1, 1000));
  env.tol = args.number("--tol", 1e-3);
  env.rotate_bytes = double(args.integer("--rotate-mib", 256, 0, 1 << 16)) * (1 << 20);
  env.min_sample_ms = args.number("--min-sample-ms", 1.0);
  if (env.tol < 0 || env.min_sample_ms < 0) throw usage_error("'--tol' and '--min-sample-ms' must be >= 0");
  env.dtypes = parse_dtypes(args.str("--dtype", "fp32"));
  const int all_threads = tbb::info::default_concurrency();
  if (args.has("--threads")) {
    if (env.gpu) throw usage_error("'--threads' applies to CPU builds only (this build runs on the GPU)");
    for (const auto& w : split(args.str("--threads"), ',', "--threads"))
      env.threads.push_back(int(parse_integer(w, "--threads", 1, 4096)));
  } else {
    env.threads = {env.gpu ? 0 : all_threads};
  }

  output_set outputs;  // checked now, replaced at the end (an existing file is untouched until then)
  if (args.has("--json")) outputs.add("--json", args.str("--json"));
  const std::string dev_desc = support::device_description();
  std::printf("tessel-bench %s — tessel %s, backends: %s, device %s:%d: %s\n", op->name, TESSEL_TOOLS_VERSION,
              built_backends(), device_name(env.dev.kind), env.dev.index, dev_desc.c_str());
  std::printf("host: %s, %d hardware threads; tessel cpu isa: %s; compiler: %s\n", cpu_model().c_str(), all_threads,
              cpu_isa(), TESSEL_TOOLS_COMPILER);
  const std::vector<bench::library_fact> peer_facts = bench::peer_library_facts();
  for (const auto& [key, value] : peer_facts) std::printf("%s: %s\n", key.c_str(), value.c_str());
  std::printf("date: %s\n", utc_now().c_str());
  std::printf("timing: wall clock (steady_clock) between device syncs around a batch of calls (>= %.2g ms);\n"
              "  warm-up call first; tessel and peer alternate, %d rounds each (order flipped every round); median\n",
              env.min_sample_ms, env.repeat);
  report.add_meta("tool", "tessel-bench");
  report.add_meta("op", op->name);
  report.add_meta("tessel_version", TESSEL_TOOLS_VERSION);
  report.add_meta("date_utc", utc_now());
  report.add_meta("device", std::string(device_name(env.dev.kind)) + ":" + std::to_string(env.dev.index));
  report.add_meta("device_description", dev_desc);  // GPU builds: name and driver version
  report.add_meta("host_cpu", cpu_model());
  report.add_meta("hardware_threads", all_threads);
  report.add_meta("built_backends", built_backends());
  report.add_meta("tessel_cpu_isa", cpu_isa());
  report.add_meta("compiler", TESSEL_TOOLS_COMPILER);
  for (const auto& [key, value] : peer_facts) report.add_meta(key, value);
  report.add_meta("timing", "median over rounds; steady_clock between device syncs; calls batched to >= min_sample_ms");
  report.add_meta("rounds", env.repeat);
  report.add_meta("min_sample_ms", env.min_sample_ms);
  report.add_meta("rotate_mib", env.rotate_bytes / (1 << 20));
  report.add_meta("tol", env.tol);

  const int status = op->run(args, env);
  if (outputs.has("--json")) {
    outputs.write("--json", report.json());
    outputs.commit();
    std::printf("wrote %s\n", args.str("--json").c_str());
  }
  if (status != 0) std::printf("some results FAILED their correctness check\n");
  return status;
}

}  // namespace

void bench_env::require_device() const {
  if (!support::device_available())
    throw std::runtime_error(std::string("this build's device (") + device_name(dev.kind) +
                             ") is not available: " + support::device_description());
#if defined(TESSEL_CUDA_CHECK_ONLY)
  throw std::runtime_error("this build's CUDA code is compiled with few optimisations, to be checked, not timed "
                           "(TESSEL_CUDA_CHECK_ONLY=ON): configure without it to benchmark");
#endif
}

}  // namespace tessel::tools

int main(int argc, char** argv) {
  using namespace tessel::tools;
  tessel::bench::choose_peer_library(argv);  // first: it may re-execute the process (peer_library.hpp)
  try {
    return run(argc, argv);
  } catch (const usage_error& e) {
    std::fprintf(stderr, "tessel-bench: %s\n%s", e.what(), usage().c_str());
    return 2;
  } catch (...) {
    return report_failure("tessel-bench");
  }
}
