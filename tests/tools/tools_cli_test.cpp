// tests/tools/tools_cli_test.cpp — the tessel-check and tessel-bench binaries, run
// as a user runs them: exit status and messages for bad files and bad command
// lines, and results checked against an independent float64 product.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "device_buffer.hpp"
#include "npy.hpp"
#include "tool_test.hpp"
#include "tessel/core/element.hpp"

namespace tessel::tools {
namespace {

class ToolsCli : public tool_test {};

TEST_F(ToolsCli, CheckRefusesBadFilesWithOneLine) {
  std::mt19937 rng(3);
  write_npy(path("b.npy"), npy_type::f32, {6, 4}, random_values(24, rng));
  write_npy(path("a_badk.npy"), npy_type::f32, {5, 7}, random_values(35, rng));
  write_npy(path("a_1d.npy"), npy_type::f32, {6}, random_values(6, rng));
  const std::string good = npy_image(npy_type::f32, {5, 6}, random_values(30, rng));
  write_bytes("truncated.npy", good.substr(0, good.size() - 3));
  write_bytes("magic.npy", "PK\x03\x04 this is a zip file");
  auto with_descr = [&](const std::string& descr) {
    std::string img = good;
    img.replace(img.find("<f4"), 3, descr);
    return img;
  };
  write_bytes("f8.npy", with_descr("<f8"));
  write_bytes("be.npy", with_descr(">f4"));
  write_bytes("i4.npy", with_descr("<i4"));
  std::string lying = good;
  lying.replace(lying.find("(5, 6)"), 6, "(9999999999, 99999)");  // same length, ~4 PB declared
  write_bytes("lying.npy", lying.substr(0, std::min(lying.size(), std::size_t(200))));

  const std::vector<std::pair<std::string, std::string>> cases = {
      {"truncated.npy", "truncated data"}, {"magic.npy", "magic"},       {"f8.npy", "'<f8'"},
      {"be.npy", "big-endian"},            {"i4.npy", "'<i4'"},          {"a_1d.npy", "2-D"},
      {"a_badk.npy", "has 5 rows, expected K = 4"},    {"missing.npy", "cannot open"}, {"lying.npy", "truncated data"}};
  for (const auto& [file, phrase] : cases) {
    SCOPED_TRACE(file);
    const std::string a = file == "a_badk.npy" ? path("b.npy") : path(file);
    const std::string b = file == "a_badk.npy" ? path("a_badk.npy") : path("b.npy");
    const result r = check("gemm --a '" + a + "' --b '" + b + "'");
    EXPECT_EQ(r.status, 1) << r.output;
    EXPECT_NE(r.output.find(file), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(phrase), std::string::npos) << r.output;
    EXPECT_EQ(count_lines(r.output), 1) << r.output;
  }
  // The same files to compare.
  const result r = check("compare '" + path("be.npy") + "' '" + path("b.npy") + "'");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.output.find("big-endian"), std::string::npos) << r.output;
}

TEST_F(ToolsCli, BadCommandLinesExit2WithUsage) {
  for (const char* args : {"", "frobnicate", "gemm --m 4 --n 4 --k 4 --bogus", "gemm --m 4 --n 4 --k",
                                 "gemm --m 4 --n four --k 4", "gemm --m 4 --n 4 --k 4 --alpha 1e999",
                                 "gemm --m 4 --n 4 --k 4 --dtype fp8", "gemm --m 4 --n 4", "gemm --m -3 --n 4 --k 4",
                                 "gemm --a x.npy", "gemm --a x.npy --b y.npy --m 3", "gemm --m 4 --n 4 --k 4 --trans-a=1",
                                 "compare onlyone.npy", "compare a.npy b.npy --tol abc"}) {
    SCOPED_TRACE(args);
    const result r = check(args);
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_NE(r.output.find("usage:"), std::string::npos) << r.output;
  }
  EXPECT_EQ(check("--help").status, 0);
  for (const char* args : {"", "softmax", "gemm --bogus", "gemm --shape 4x4", "gemm --shapes 0", "gemm --repeat x",
                           "gemm --dtype int8", "gemm --shape 4x4x4 --repeat", "attention --seqs 0",
                           "attention --head-dim 32", "attention --causal --both", "attention --batch 2 --tokens 64",
                           "attention --heads 6 --kv-heads 4", "gemm --trans xn", "gemm --trans nt --trans-b",
                           "gemm --out bf16", "gemm --batch 0", "gemm --batch 2,x", "gemm --stream foo"}) {
    SCOPED_TRACE(args);
    const result r = bench(args);
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_NE(r.output.find("usage:"), std::string::npos) << r.output;
  }
  EXPECT_EQ(bench("--help").status, 0);
}

// D = alpha·A·Bᵀ + beta·C with bf16-rounded A, B from files, checked against
// a float64 product computed here from the same rounded values.
TEST_F(ToolsCli, CheckGemmFromFilesWritesTheDeviceResult) {
  SKIP_WITHOUT_DEVICE();
  std::mt19937 rng(5);
  const int Z = 2, M = 19, N = 13, K = 37;
  const std::vector<float> a = random_values(std::size_t(Z * M * K), rng), b = random_values(std::size_t(N * K), rng),
                           c = random_values(std::size_t(Z * M * N), rng);
  write_npy(path("a.npy"), npy_type::f32, {Z, M, K}, a);
  write_npy(path("b.npy"), npy_type::f16, {N, K}, b);  // float16 file: rounded once more to bf16 below
  write_npy(path("c.npy"), npy_type::f32, {Z, M, N}, c);
  const result r = check("gemm --a '" + path("a.npy") + "' --b '" + path("b.npy") + "' --c '" + path("c.npy") +
                         "' --alpha 0.5 --beta -2 --trans-b --dtype bf16 --out '" + path("d.npy") + "'");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("tolerance 1.0e-03: ok"), std::string::npos) << r.output;

  const npy_array d = read_npy(path("d.npy"));
  ASSERT_EQ(d.shape, (std::vector<std::int64_t>{Z, M, N}));
  auto bf = [](float x) { return double(to_float(to_bf16(x))); };
  double num = 0, den = 0;
  for (int z = 0; z < Z; ++z)
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        double s = 0;
        for (int k = 0; k < K; ++k)
          s += bf(a[std::size_t((z * M + i) * K + k)]) * bf(to_float(to_fp16(b[std::size_t(j * K + k)])));
        const double ref = 0.5 * s - 2.0 * double(c[std::size_t((z * M + i) * N + j)]);
        const double got = d.values[std::size_t((z * M + i) * N + j)];
        num += (got - ref) * (got - ref);
        den += ref * ref;
      }
  EXPECT_LT(std::sqrt(num / den), 1e-5);
}

TEST_F(ToolsCli, CheckGemmRandomAndMismatchedShapes) {
  SKIP_WITHOUT_DEVICE();
  const result r = check("gemm --m 33 --n 17 --k 65 --batch 2 --trans-a --dtype fp16 --seed 9");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("seed 9"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("device vs cpu"), std::string::npos) << r.output;

  std::mt19937 rng(8);
  write_npy(path("a.npy"), npy_type::f32, {3, 4, 5}, random_values(60, rng));
  write_npy(path("b.npy"), npy_type::f32, {2, 5, 6}, random_values(60, rng));
  write_npy(path("c.npy"), npy_type::f32, {4, 6}, random_values(24, rng));
  const result batch = check("gemm --a '" + path("a.npy") + "' --b '" + path("b.npy") + "'");
  EXPECT_EQ(batch.status, 1) << batch.output;
  EXPECT_NE(batch.output.find("batch 2 does not match batch 3"), std::string::npos) << batch.output;
  write_npy(path("b.npy"), npy_type::f32, {5, 6}, random_values(30, rng));
  const result cshape = check("gemm --a '" + path("a.npy") + "' --b '" + path("b.npy") + "' --c '" + path("c.npy") +
                              "' --beta 1");
  EXPECT_EQ(cshape.status, 1) << cshape.output;
  EXPECT_NE(cshape.output.find("expected [3, 4, 6]"), std::string::npos) << cshape.output;
}

TEST_F(ToolsCli, CompareReportsAndThresholds) {
  std::mt19937 rng(4);
  std::vector<float> y = random_values(50, rng), x = y;
  write_npy(path("y.npy"), npy_type::f32, {5, 10}, y);
  write_npy(path("same.npy"), npy_type::f32, {5, 10}, x);
  x[7] += 0.5f;  // ‖x − y‖/‖y‖ ≈ 0.5 / sqrt(50/3) ≈ 0.12
  write_npy(path("x.npy"), npy_type::f32, {5, 10}, x);
  write_npy(path("other.npy"), npy_type::f32, {10, 5}, x);

  result r = check("compare '" + path("same.npy") + "' '" + path("y.npy") + "' --tol 0");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("relative error 0.000e+00"), std::string::npos) << r.output;
  r = check("compare '" + path("x.npy") + "' '" + path("y.npy") + "'");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("FAIL"), std::string::npos) << r.output;
  EXPECT_EQ(check("compare '" + path("x.npy") + "' '" + path("y.npy") + "' --tol 0.5").status, 0);
  r = check("compare '" + path("other.npy") + "' '" + path("y.npy") + "'");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("differs"), std::string::npos) << r.output;
  // A NaN is never within tolerance.
  x[3] = std::nanf("");
  write_npy(path("nan.npy"), npy_type::f32, {5, 10}, x);
  EXPECT_EQ(check("compare '" + path("nan.npy") + "' '" + path("y.npy") + "' --tol 1e9").status, 1);
}

TEST_F(ToolsCli, BenchSmallSweepChecksAndWritesJson) {
  SKIP_WITHOUT_DEVICE();
  const result r = bench("gemm --shape 48x40x56 --shape 33x17x9 --dtype fp32,bf16 --repeat 3 --rotate-mib 1 "
                         "--min-sample-ms 0.2 --json '" + path("b.json") + "'");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("48x40x56"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("tessel/peer"), std::string::npos) << r.output;
  std::ifstream f(path("b.json"));
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string json = ss.str();
  int rows = 0;
  for (std::size_t p = 0; (p = json.find("\"check\": \"ok\"", p)) != std::string::npos; ++p) ++rows;
  EXPECT_EQ(rows, 4) << json;
  for (const char* key : {"\"meta\"", "\"rows\"", "\"tessel_cpu_isa\"", "\"device_description\"", "\"compiler\"",
                          "\"date_utc\"", "\"tessel_tflops\"", "\"err_vs_fp64\""})
    EXPECT_NE(json.find(key), std::string::npos) << key;
}

// --out input, all four transposes and a strided batch: every row checked (16-bit outputs against
// the output type's rounding) and labelled in the JSON.
TEST_F(ToolsCli, BenchGemmOutputTypeTransposesAndBatch) {
  SKIP_WITHOUT_DEVICE();
  const result r = bench("gemm --shape 24x40x56 --dtype bf16,fp16 --out input,f32 --trans all --batch 3 --repeat 1 "
                         "--rotate-mib 1 --min-sample-ms 0.1 --json '" + path("b.json") + "'");
  ASSERT_EQ(r.status, 0) << r.output;
  std::ifstream f(path("b.json"));
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string json = ss.str();
  auto count = [&](const std::string& key) {
    int n = 0;
    for (std::size_t p = 0; (p = json.find(key, p)) != std::string::npos; ++p) ++n;
    return n;
  };
  EXPECT_EQ(count("\"check\": \"ok\""), 16) << json;  // 2 input types x 2 output types x 4 transposes
  EXPECT_EQ(count("\"batch\": 3"), 16) << json;
  for (const char* t : {"nn", "nt", "tn", "tt"}) EXPECT_EQ(count(std::string("\"trans\": \"") + t + "\""), 4) << t;
  EXPECT_EQ(count("\"dtype_out\": \"bf16\""), 4) << json;
  EXPECT_EQ(count("\"dtype_out\": \"fp16\""), 4) << json;
  EXPECT_EQ(count("\"dtype_out\": \"fp32\""), 8) << json;
  for (const char* key : {"\"dtype_in\"", "\"tessel_tflops\"", "\"peer_tflops\"", "\"ratio\"", "\"peer_call\"",
                          "\"peer_err_vs_fp64\"", "\"flops\""})
    EXPECT_EQ(count(key), 16) << key;
  // The flops cover the whole batch.
  EXPECT_NE(json.find("\"flops\": 322560"), std::string::npos) << json;  // 2*3*24*40*56
}

#if TESSEL_TOOLS_PEER_OPENBLAS && defined(__x86_64__)
// The OpenBLAS peer names its config, its core and where OPENBLAS_CORETYPE came from, in the header and
// the JSON; a caller's OPENBLAS_CORETYPE is used as given; left unset on an AVX-512 CPU, the peer runs
// AVX-512 kernels (OpenBLAS's own choice, or SkylakeX set by tessel-bench: peer_library_openblas.cpp).
TEST_F(ToolsCli, BenchNamesTheOpenBlasCoreAndRunsItsAvx512Kernels) {
  SKIP_WITHOUT_DEVICE();
  const std::string args =
      "gemm --shape 16x24x8 --repeat 1 --rotate-mib 1 --min-sample-ms 0.1 --json '" + path("b.json") + "'";
  auto meta = [](const std::string& json, const std::string& key) {
    const std::string k = "\"" + key + "\": \"";
    const std::size_t p = json.find(k);
    if (p == std::string::npos) return std::string("(missing)");
    const std::size_t b = p + k.size();
    return json.substr(b, json.find('"', b) - b);
  };

  result r = run(TESSEL_BENCH_EXE, args, "export OPENBLAS_CORETYPE=Haswell;");
  ASSERT_EQ(r.status, 0) << r.output;
  std::string json = read_bytes("b.json");
  const std::string config = meta(json, "peer_openblas_config");
  EXPECT_EQ(config.rfind("OpenBLAS", 0), 0u) << json;
  EXPECT_EQ(meta(json, "peer_openblas_coretype").rfind("Haswell, from the environment", 0), 0u) << json;
  if (config.find("DYNAMIC_ARCH") != std::string::npos) {
    EXPECT_EQ(meta(json, "peer_openblas_corename"), "Haswell");
  }
  EXPECT_NE(r.output.find("peer_openblas_corename: "), std::string::npos) << r.output;

  r = run(TESSEL_BENCH_EXE, args, "unset OPENBLAS_CORETYPE;");
  ASSERT_EQ(r.status, 0) << r.output;
  json = read_bytes("b.json");
  const std::string core = meta(json, "peer_openblas_corename"), source = meta(json, "peer_openblas_coretype");
  EXPECT_TRUE(source.rfind("unset: OpenBLAS's own choice", 0) == 0 ||
              source.rfind("SkylakeX, set by tessel-bench", 0) == 0) << json;
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && config.find("DYNAMIC_ARCH") != std::string::npos) {
    EXPECT_TRUE(core == "SkylakeX" || core == "Cooperlake" || core == "SapphireRapids") << json;
  }
}
#endif

}  // namespace
}  // namespace tessel::tools
