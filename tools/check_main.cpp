// tools/check_main.cpp — tessel-check: check tessel's results from the command line.
//
// Exit status: 0 within tolerance, 1 past it or a problem with the inputs or
// an output path (one line on stderr naming the file and the problem), 2 a bad
// command line (the message and the usage text on stderr).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <new>

#include "check.hpp"
#include "npy.hpp"
#include "tessel/tessel.hpp"

namespace tessel::tools {
namespace {

const char synopsis[] =
    "usage:\n"
    "  tessel-check gemm --a A.npy --b B.npy [--c C.npy --alpha X --beta Y] [--trans-a] [--trans-b]\n"
    "                    [--dtype fp32|fp16|bf16] [--out D.npy] [--tol T] [--threads N] [--allow-nonfinite]\n"
    "  tessel-check gemm --m M --n N --k K [--batch Z] [--alpha X --beta Y] [--trans-a] [--trans-b]\n"
    "                    [--dtype fp32|fp16|bf16] [--seed S] [--out D.npy] [--tol T] [--threads N]\n"
    "  tessel-check attention --q Q.npy --k K.npy --v V.npy [--dtype fp32|fp16|bf16] [--causal] [--scale S]\n"
    "                    [--out O.npy] [--lse L.npy] [--tol T] [--lse-tol T] [--threads N] [--allow-nonfinite]\n"
    "  tessel-check attention --q-len L [--kv-len L] [--batch B] [--heads H] [--kv-heads H] [--head-dim 64|128]\n"
    "                    [--dtype ...] [--causal] [--scale S] [--seed S] [--out O.npy] [--lse L.npy] [--tol T] ...\n"
    "  tessel-check compare X.npy Y.npy [--tol T]\n";
const char details[] =
    "\n"
    "gemm: D = alpha*op(A)*op(B) + beta*C with A, B float32 or float16 .npy files (2-D [rows, cols] or\n"
    "  3-D [batch, rows, cols]; fortran_order is honoured), or random inputs in [-1, 1) (seeded by --seed,\n"
    "  else $TESSEL_SEED, else at random; the seed is printed). A and B are rounded to --dtype (default\n"
    "  fp32), the type the kernel reads; C and D are float32. The product runs on this build's device and\n"
    "  on the CPU backend; each is compared with a float64 product of the same rounded inputs, and the two\n"
    "  with each other (relative Frobenius error). Exit 1 if any error exceeds --tol (default 1e-3).\n"
    "  --out writes the device's result as float32 .npy. --threads: CPU threads (default: all).\n"
    "attention: O = softmax(scale * Q K^T + mask) V per (batch, head) with Q [batch, q_len, heads, head_dim],\n"
    "  K and V [batch, kv_len, kv_heads, head_dim] float32 or float16 .npy files (kv_heads dividing heads:\n"
    "  grouped-query), or random inputs in [-1, 1) (--q-len required; defaults batch 1, heads 1, kv_heads =\n"
    "  heads, kv_len = q_len, head_dim 64). head_dim 64 or 128. Inputs are rounded to --dtype (default fp32;\n"
    "  fp32 attention exists on the CPU backend only); out has that type and is written as float32.\n"
    "  --causal masks key j for query i when j > i + kv_len - q_len (bottom-right); a row that sees no key\n"
    "  is zeros with LSE -inf. --scale defaults to 1/sqrt(head_dim). Runs on this build's device and on the\n"
    "  CPU backend; reports out's relative Frobenius error of each vs a float64 reference of the rounded\n"
    "  inputs and device vs CPU (exit 1 above --tol: default bf16 1e-2, fp16 2e-3, fp32 1e-5), and the\n"
    "  log-sum-exp's max abs error (exit 1 above --lse-tol, default 1e-3). --out writes the device's O\n"
    "  (float32 [batch, q_len, heads, head_dim]), --lse its LSE (float32 [batch, heads, q_len]).\n"
    "--allow-nonfinite (gemm, attention): inputs with NaN or inf. Without it any NaN/inf in a result makes\n"
    "  its error inf (FAIL). With it the NaN, +inf and -inf positions of the device's and the CPU's results\n"
    "  must be those of the float64 reference (mismatched positions are counted and printed), and the\n"
    "  errors are taken over the elements finite in both.\n"
    "outputs (--out, --lse): checked before any work (folder exists, not a device or folder, a file can be\n"
    "  created beside it); each written to a temporary file in the same folder, fsync'd, and renamed over\n"
    "  the target only once all are written: an existing file is replaced whole or left as it was.\n"
    "inputs: regular .npy files only; a FIFO, a device or a folder is refused (one line, exit 1).\n"
    "compare: prints ||X - Y||_F / ||Y||_F (||X||_F if Y is zero; inf if either holds NaN/inf) and\n"
    "  exits 1 if it exceeds --tol (default 1e-2: enough for bf16-rounded inputs against a float32\n"
    "  reference; use 1e-5 or so to compare float32 results). Shapes must be equal.\n"
    "exit status: 0 ok, 1 past tolerance, bad input file or output path, 2 bad command line.\n";

int compare(const parsed_args& args) {
  if (args.positional.size() != 2)
    throw usage_error("compare takes two files, got " + std::to_string(args.positional.size()));
  const double tol = args.number("--tol", default_compare_tol);
  if (tol < 0) throw usage_error("'--tol' must be >= 0");
  const npy_array x = read_npy(args.positional[0]);
  const npy_array y = read_npy(args.positional[1]);
  if (x.shape != y.shape)
    throw input_error(args.positional[0] + ": shape " + shape_string(x.shape) + " differs from " +
                      args.positional[1] + " " + shape_string(y.shape));
  double num = 0, den = 0, xn = 0, maxabs = 0;
  bool finite = true;
  for (std::size_t i = 0; i < x.count(); ++i) {
    const double a = x.values[i], b = y.values[i];
    finite = finite && std::isfinite(a) && std::isfinite(b);
    num += (a - b) * (a - b);
    den += b * b;
    xn += a * a;
    maxabs = std::max(maxabs, std::fabs(a - b));
  }
  const double err = !finite ? INFINITY : den > 0 ? std::sqrt(num / den) : std::sqrt(xn);
  std::printf("%s vs %s: shape %s, relative error %.3e (max |X - Y| %.3e), tolerance %.1e: %s\n",
              args.positional[0].c_str(), args.positional[1].c_str(), shape_string(x.shape).c_str(), err,
              finite ? maxabs : INFINITY, tol, err <= tol ? "ok" : "FAIL");
  if (!finite) std::printf("  (NaN or inf in the inputs)\n");
  return err <= tol ? 0 : 1;
}

int run(int argc, char** argv) {
  std::vector<std::string> words(argv + 1, argv + argc);
  if (words.empty()) throw usage_error("no command given");
  const std::string cmd = words[0];
  words.erase(words.begin());
  if (cmd == "-h" || cmd == "--help" || cmd == "help") {
    std::fputs(synopsis, stdout);
    std::fputs(details, stdout);
    return 0;
  }
  if (cmd == "gemm") return check_gemm(parse_args(words, check_gemm_options));
  if (cmd == "attention") return check_attention(parse_args(words, check_attention_options));
  if (cmd == "compare") return compare(parse_args(words, {{"--tol", true}}));
  throw usage_error("unknown command '" + cmd + "' (expected gemm, attention or compare)");
}

}  // namespace
}  // namespace tessel::tools

int main(int argc, char** argv) {
  using namespace tessel::tools;
  try {
    return run(argc, argv);
  } catch (const usage_error& e) {
    std::fprintf(stderr, "tessel-check: %s\n%s(tessel-check --help for details)\n", e.what(), synopsis);
    return 2;
  } catch (...) {
    return report_failure("tessel-check");
  }
}
