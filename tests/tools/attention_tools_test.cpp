// tests/tools/attention_tools_test.cpp — `tessel-check attention` and `tessel-bench
// attention`, run as a user runs them: .npy files written here, the outputs
// read back and checked against a float64 attention computed here (not the
// support reference the tool itself uses); bad inputs give exit 1 and one line;
// a tiny bench sweep writes JSON whose rows are checked.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
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

class AttentionTools : public tool_test {};

bool gpu_build() { return support::default_device().kind != device_kind::host; }

// An attention problem with its inputs as the tool will read them (after the
// file's own rounding and the --dtype rounding).
struct problem {
  int B, Lq, Lk, H, Hk, D;
  bool causal;
  double scale;
  std::vector<double> q, k, v;  // [b, s, h, d], rounded
};

struct expected {
  std::vector<double> out;  // [b, q_len, h, d]
  std::vector<double> lse;  // [b, h, q_len]; -inf for rows that see no key
};

// float64 attention, written from the definition: softmax over visible keys
// (causal: j <= i + Lk − Lq), kv head h / (H / Hk).
expected attention64(const problem& p) {
  expected e;
  e.out.assign(std::size_t(p.B) * p.Lq * p.H * p.D, 0.0);
  e.lse.assign(std::size_t(p.B) * p.H * p.Lq, -std::numeric_limits<double>::infinity());
  for (int b = 0; b < p.B; ++b)
    for (int h = 0; h < p.H; ++h)
      for (int i = 0; i < p.Lq; ++i) {
        const int hk = h / (p.H / p.Hk);
        std::vector<double> s;
        for (int j = 0; j < p.Lk; ++j) {
          if (p.causal && j > i + p.Lk - p.Lq) break;
          double dot = 0;
          for (int d = 0; d < p.D; ++d)
            dot += p.q[((std::size_t(b) * p.Lq + i) * p.H + h) * p.D + d] *
                   p.k[((std::size_t(b) * p.Lk + j) * p.Hk + hk) * p.D + d];
          s.push_back(p.scale * dot);
        }
        if (s.empty()) continue;
        const double mx = *std::max_element(s.begin(), s.end());
        double sum = 0;
        for (double& x : s) sum += (x = std::exp(x - mx));
        e.lse[(std::size_t(b) * p.H + h) * p.Lq + i] = mx + std::log(sum);
        for (std::size_t j = 0; j < s.size(); ++j)
          for (int d = 0; d < p.D; ++d)
            e.out[((std::size_t(b) * p.Lq + i) * p.H + h) * p.D + d] +=
                s[j] / sum * p.v[((std::size_t(b) * p.Lk + j) * p.Hk + hk) * p.D + d];
      }
  return e;
}

double relative_error(const std::vector<float>& got, const std::vector<double>& want) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (!std::isfinite(got[i])) return INFINITY;
    num += (got[i] - want[i]) * (got[i] - want[i]);
    den += want[i] * want[i];
  }
  return std::sqrt(num / den);
}

// Checks the tool's O and L files against attention64(p); `tol` on O's relative error.
void expect_outputs(const std::string& o_path, const std::string& l_path, const problem& p, double tol) {
  const expected e = attention64(p);
  const npy_array o = read_npy(o_path), l = read_npy(l_path);
  ASSERT_EQ(o.type, npy_type::f32);
  ASSERT_EQ(l.type, npy_type::f32);
  ASSERT_EQ(o.shape, (std::vector<std::int64_t>{p.B, p.Lq, p.H, p.D}));
  ASSERT_EQ(l.shape, (std::vector<std::int64_t>{p.B, p.H, p.Lq}));
  EXPECT_LT(relative_error(o.values, e.out), tol);
  int empty_rows = 0;
  for (std::size_t r = 0; r < e.lse.size(); ++r) {
    if (std::isinf(e.lse[r])) {
      ++empty_rows;
      EXPECT_TRUE(std::isinf(l.values[r]) && l.values[r] < 0) << "row " << r << ": " << l.values[r];
      const std::size_t b = r / (std::size_t(p.H) * p.Lq), h = r / p.Lq % p.H, i = r % p.Lq;
      for (int d = 0; d < p.D; ++d) EXPECT_EQ(o.values[((b * p.Lq + i) * p.H + h) * p.D + d], 0.0f);
    } else {
      EXPECT_NEAR(l.values[r], e.lse[r], 1e-3) << "row " << r;
    }
  }
  const int want_empty = p.causal ? p.B * p.H * std::max(0, p.Lq - p.Lk) : 0;
  EXPECT_EQ(empty_rows, want_empty);
}

double bf(double x) { return to_float(to_bf16(float(x))); }
double hf(double x) { return to_float(to_fp16(float(x))); }

// GQA (4 heads over 2), causal with q_len > kv_len (17 rows per head see no
// key), bf16 compute from a float32 Q/V and a float16 K file, explicit scale.
TEST_F(AttentionTools, CheckFromFilesGqaCausalWithLse) {
  SKIP_WITHOUT_DEVICE();
  std::mt19937 rng(11);
  problem p{2, 37, 20, 4, 2, 64, true, 0.2, {}, {}, {}};
  const std::vector<float> q = random_values(std::size_t(p.B) * p.Lq * p.H * p.D, rng),
                           k = random_values(std::size_t(p.B) * p.Lk * p.Hk * p.D, rng),
                           v = random_values(std::size_t(p.B) * p.Lk * p.Hk * p.D, rng);
  write_npy(path("q.npy"), npy_type::f32, {p.B, p.Lq, p.H, p.D}, q);
  write_npy(path("k.npy"), npy_type::f16, {p.B, p.Lk, p.Hk, p.D}, k);
  write_npy(path("v.npy"), npy_type::f32, {p.B, p.Lk, p.Hk, p.D}, v);
  for (float x : q) p.q.push_back(bf(x));
  for (float x : k) p.k.push_back(bf(hf(x)));
  for (float x : v) p.v.push_back(bf(x));
  const result r = check("attention --q " + quoted("q.npy") + " --k " + quoted("k.npy") + " --v " + quoted("v.npy") +
                         " --dtype bf16 --causal --scale 0.2 --out " + quoted("o.npy") + " --lse " + quoted("l.npy"));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("tolerance out 1.0e-02, lse 1.0e-03: ok"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("device vs cpu"), std::string::npos) << r.output;
  expect_outputs(path("o.npy"), path("l.npy"), p, 1e-2);
}

// fp32 (CPU backend only), multi-query, kv_len > q_len with causal: every row
// sees kv_len − q_len + i + 1 keys. head_dim 128, default scale.
TEST_F(AttentionTools, CheckFromFilesFp32MqaCausal) {
  SKIP_WITHOUT_DEVICE();
  std::mt19937 rng(12);
  problem p{1, 5, 33, 3, 1, 128, true, 1.0 / std::sqrt(128.0), {}, {}, {}};
  const std::vector<float> q = random_values(std::size_t(p.Lq) * p.H * p.D, rng),
                           k = random_values(std::size_t(p.Lk) * p.D, rng), v = random_values(std::size_t(p.Lk) * p.D, rng);
  write_npy(path("q.npy"), npy_type::f32, {p.B, p.Lq, p.H, p.D}, q);
  write_npy(path("k.npy"), npy_type::f32, {p.B, p.Lk, p.Hk, p.D}, k);
  write_npy(path("v.npy"), npy_type::f32, {p.B, p.Lk, p.Hk, p.D}, v);
  p.q.assign(q.begin(), q.end());
  p.k.assign(k.begin(), k.end());
  p.v.assign(v.begin(), v.end());
  const std::string args = "attention --q " + quoted("q.npy") + " --k " + quoted("k.npy") + " --v " +
                           quoted("v.npy") + " --causal --out " + quoted("o.npy") + " --lse " + quoted("l.npy");
  const result r = check(args);
  if (gpu_build()) {  // fp32 attention exists on the CPU backend only: refused, clearly
    EXPECT_EQ(r.status, 1) << r.output;
    EXPECT_NE(r.output.find("fp32 attention runs on the CPU backend only"), std::string::npos) << r.output;
    EXPECT_EQ(count_lines(r.output), 1) << r.output;
    return;
  }
  ASSERT_EQ(r.status, 0) << r.output;
  expect_outputs(path("o.npy"), path("l.npy"), p, 1e-5);
}

TEST_F(AttentionTools, CheckRandomMode) {
  SKIP_WITHOUT_DEVICE();
  const result r = check("attention --q-len 19 --kv-len 40 --heads 4 --kv-heads 2 --head-dim 128 --batch 2 "
                         "--dtype fp16 --causal --seed 4 --lse " + quoted("l.npy"));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("seed 4"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("tolerance out 2.0e-03"), std::string::npos) << r.output;
  const npy_array l = read_npy(path("l.npy"));
  EXPECT_EQ(l.shape, (std::vector<std::int64_t>{2, 4, 19}));
  for (float x : l.values) EXPECT_TRUE(std::isfinite(x));
}

TEST_F(AttentionTools, CheckRefusesBadInputsWithOneLine) {
  std::mt19937 rng(13);
  auto file = [&](const std::string& name, std::vector<std::int64_t> shape, npy_type t = npy_type::f32) {
    std::size_t n = 1;
    for (auto d : shape) n *= std::size_t(d);
    write_npy(path(name), t, shape, random_values(n, rng));
  };
  file("q.npy", {1, 8, 6, 64});
  file("k.npy", {1, 9, 2, 64});
  file("v.npy", {1, 9, 2, 64});
  file("k4.npy", {1, 9, 4, 64});  // 4 kv heads do not divide 6
  file("v4.npy", {1, 9, 4, 64});
  file("q3.npy", {8, 6, 64});     // rank 3
  file("q32.npy", {1, 8, 6, 32}); // head_dim 32
  file("k32.npy", {1, 9, 2, 32});
  file("vlen.npy", {1, 10, 2, 64});
  file("kb.npy", {2, 9, 2, 64});
  {  // a float64 file: numpy's '<f8'
    std::string img = npy_image(npy_type::f32, {1, 9, 2, 64}, random_values(9 * 2 * 64, rng));
    img.replace(img.find("<f4"), 3, "<f8");
    std::ofstream(path("k64.npy"), std::ios::binary) << img;
  }
  struct bad {
    const char *q, *k, *v, *phrase, *names;
  };
  const bad cases[] = {
      {"q.npy", "k4.npy", "v4.npy", "heads do not divide the 6 heads", "k4.npy"},
      {"q3.npy", "k.npy", "v.npy", "must be 4-D [batch, seq, heads, head_dim], got shape [8, 6, 64]", "q3.npy"},
      {"q32.npy", "k32.npy", "v.npy", "head_dim 32", "q32.npy"},
      {"q.npy", "k64.npy", "v.npy", "'<f8'", "k64.npy"},
      {"q.npy", "k.npy", "vlen.npy", "expected the shape of K [1, 9, 2, 64]", "vlen.npy"},
      {"q.npy", "kb.npy", "v.npy", "expected [1, kv_len, kv_heads, 64]", "kb.npy"},
      {"q.npy", "k.npy", "missing.npy", "cannot open", "missing.npy"},
  };
  for (const bad& c : cases) {
    SCOPED_TRACE(c.phrase);
    const result r = check("attention --q " + quoted(c.q) + " --k " + quoted(c.k) + " --v " + quoted(c.v) +
                           " --dtype bf16");
    EXPECT_EQ(r.status, 1) << r.output;
    EXPECT_NE(r.output.find(c.phrase), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(c.names), std::string::npos) << r.output;
    EXPECT_EQ(count_lines(r.output), 1) << r.output;
  }
  // Bad command lines: exit 2 with the usage text.
  for (const char* args : {"attention", "attention --q x.npy", "attention --q-len 8 --heads 6 --kv-heads 4",
                           "attention --q-len 8 --head-dim 32", "attention --q-len 8 --dtype fp8",
                           "attention --q-len 8 --scale -1", "attention --q a --k b --v c --q-len 3"}) {
    SCOPED_TRACE(args);
    const result r = check(args);
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_NE(r.output.find("usage:"), std::string::npos) << r.output;
  }
}

// The rows of a tessel-bench JSON file, each as its text.
std::vector<std::string> json_rows(const std::string& json) {
  std::vector<std::string> rows;
  std::size_t p = json.find("\"rows\": [");
  while (p != std::string::npos && (p = json.find("\n    {", p)) != std::string::npos) {
    const std::size_t end = json.find("\n    }", p);
    rows.push_back(json.substr(p, end - p));
    p = end;
  }
  return rows;
}
std::string field(const std::string& row, const std::string& key) {
  const std::size_t p = row.find("\"" + key + "\": ");
  if (p == std::string::npos) return "";
  const std::size_t b = p + key.size() + 4, e = row.find_first_of(",\n", b);
  return row.substr(b, e - b);
}
double number(const std::string& row, const std::string& key) {
  const std::string f = field(row, key);
  return f.empty() || f == "null" ? NAN : std::stod(f);
}

TEST_F(AttentionTools, BenchTinySweepChecksAndWritesJson) {
  SKIP_WITHOUT_DEVICE();
  const bool gpu = gpu_build();
  const result r = bench(std::string("attention --seqs 40,70 --head-dim 64 --heads 2 --kv-heads 1 --both --dtype ") +
                         (gpu ? "bf16" : "fp32,bf16") +
                         " --repeat 2 --rotate-mib 1 --min-sample-ms 0.2 --json " + quoted("b.json"));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("tessel/peer"), std::string::npos) << r.output;
  std::ifstream f(path("b.json"));
  std::stringstream ss;
  ss << f.rdbuf();
  const std::vector<std::string> rows = json_rows(ss.str());
  ASSERT_EQ(rows.size(), gpu ? 4u : 8u) << ss.str();
  int causal_rows = 0;
  for (const std::string& row : rows) {
    SCOPED_TRACE(row);
    EXPECT_EQ(field(row, "op"), "\"attention\"");
    EXPECT_EQ(field(row, "check"), "\"ok\"");
    const double L = number(row, "q_len");
    const bool causal = field(row, "causal") == "true";
    causal_rows += causal;
    EXPECT_EQ(number(row, "flops"), 4.0 * 1 * 2 * L * L * 64 * (causal ? 0.5 : 1.0));
    EXPECT_EQ(number(row, "kv_heads"), 1.0);
    EXPECT_GT(number(row, "tessel_ms"), 0.0);
    EXPECT_LT(number(row, "err_vs_fp64"), number(row, "tol"));
    EXPECT_EQ(number(row, "sampled_rows"), 32.0);
    if (gpu) {
      EXPECT_EQ(field(row, "peer"), "\"none\"");
    } else {  // the unfused OpenBLAS peer ran, agrees with tessel, and is itself right
      EXPECT_NE(field(row, "peer").find("unfused openblas"), std::string::npos);
      EXPECT_GT(number(row, "peer_ms"), 0.0);
      EXPECT_LT(number(row, "err_vs_peer"), number(row, "tol"));
      EXPECT_LT(number(row, "peer_err_vs_fp64"), 1e-5);
    }
  }
  EXPECT_EQ(causal_rows, int(rows.size()) / 2);
}

TEST_F(AttentionTools, BenchSkipsThePeerAboveItsMemoryLimit) {
  SKIP_WITHOUT_DEVICE();
  if (gpu_build()) GTEST_SKIP() << "GPU builds have no attention peer";
  const result r = bench("attention --seqs 64 --head-dim 128 --heads 1 --dtype fp32 --repeat 1 --peer-max-gib 0 "
                         "--rotate-mib 0 --json " + quoted("b.json"));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("peer skipped (needs 16."), std::string::npos) << r.output;  // 64·64·4 + 64·4 bytes
  EXPECT_NE(r.output.find(" KiB)"), std::string::npos) << r.output;
  std::ifstream f(path("b.json"));
  std::stringstream ss;
  ss << f.rdbuf();
  const std::vector<std::string> rows = json_rows(ss.str());
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(field(rows[0], "peer_ms"), "null");
  EXPECT_EQ(field(rows[0], "check"), "\"ok\"");
  EXPECT_EQ(number(rows[0], "tessel_calls_per_sample") >= 1, true);
}

}  // namespace
}  // namespace tessel::tools
