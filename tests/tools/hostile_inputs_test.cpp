// tests/tools/hostile_inputs_test.cpp — tessel-check against inputs meant to
// break it, run as a user runs it: every malformed .npy of the corpus
// (npy_corpus.hpp), files that are not regular files, shapes whose sizes are
// absurd behind a zero dimension, empty arrays, and NaN/inf inputs under
// --allow-nonfinite. A refusal is exit 1 and one line naming the file and the
// problem, with an existing --out byte for byte as it was and no temporary left.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "npy.hpp"
#include "npy_corpus.hpp"
#include "tool_test.hpp"

namespace tessel::tools {
namespace {

class HostileInputs : public tool_test {
 protected:
  void SetUp() override {
    tool_test::SetUp();
    std::mt19937 rng(21);
    write_npy(path("b.npy"), npy_type::f32, {3, 4}, random_values(12, rng));
    write_bytes("out.npy", previous_out);
  }

  // `args` must be refused: exit 1, one line naming `file` (a path in the
  // scratch folder, or as given) with `phrase`; out.npy and the folder untouched.
  void expect_refused(const std::string& args, const std::string& file, const std::string& phrase) {
    const result r = check(args);
    EXPECT_EQ(r.status, 1) << r.output;
    EXPECT_EQ(count_lines(r.output), 1) << r.output;
    EXPECT_NE(r.output.find(file), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(phrase), std::string::npos) << r.output;
    EXPECT_EQ(read_bytes("out.npy"), previous_out);
    EXPECT_EQ(hidden_files(), std::vector<std::string>{});
  }

  const std::string previous_out = "the previous output, kept byte for byte";
};

TEST_F(HostileInputs, EveryMalformedNpyIsOneLineAndExit1) {
  int i = 0;
  for (const corpus::bad_case& c : corpus::bad_cases()) {
    SCOPED_TRACE(c.what);
    const std::string name = "bad" + std::to_string(i++) + ".npy";
    write_bytes(name, c.image);
    expect_refused("gemm --a " + quoted(name) + " --b " + quoted("b.npy") + " --out " + quoted("out.npy"), path(name),
                   c.phrase);
  }
}

TEST_F(HostileInputs, NonRegularInputsAreRefusedWithoutBlocking) {
  ASSERT_EQ(::mkfifo(path("fifo.npy").c_str(), 0600), 0);  // no writer: a blocking open would hang here
  write_bytes("empty.npy", "");
  std::filesystem::create_symlink("/dev/zero", path("zero.npy"));
  std::filesystem::create_directories(path("folder.npy"));
  const std::pair<std::string, std::string> cases[] = {
      {path("fifo.npy"), "is not a regular file (a FIFO)"},
      {"/dev/zero", "is not a regular file (a character device)"},
      {path("zero.npy"), "is not a regular file (a character device)"},
      {path("folder.npy"), "is a directory"},
      {path("empty.npy"), "empty file"},
      {path("missing.npy"), "cannot open"},
  };
  for (const auto& [file, phrase] : cases) {
    SCOPED_TRACE(file);
    expect_refused("gemm --a '" + file + "' --b " + quoted("b.npy") + " --out " + quoted("out.npy"), file, phrase);
    expect_refused("attention --q '" + file + "' --k " + quoted("b.npy") + " --v " + quoted("b.npy") + " --out " +
                       quoted("out.npy"),
                   file, phrase);
    expect_refused("compare " + quoted("b.npy") + " '" + file + "'", file, phrase);
  }
}

// Sizes that no file could hold, behind a zero dimension (the file is valid and
// empty): refused before anything is allocated or looped over.
TEST_F(HostileInputs, AbsurdSizesBehindAZeroAreRefused) {
  const std::int64_t huge = std::int64_t(1) << 40;
  write_npy(path("a_tall.npy"), npy_type::f32, {huge, 0}, {});
  write_npy(path("b_wide.npy"), npy_type::f32, {0, huge}, {});
  expect_refused("gemm --a " + quoted("a_tall.npy") + " --b " + quoted("b_wide.npy") + " --out " + quoted("out.npy"),
                 path("a_tall.npy"), "too large for a check");
  write_npy(path("q_heads.npy"), npy_type::f32, {1, 0, huge, 64}, {});
  write_npy(path("k_empty.npy"), npy_type::f32, {1, 0, 1, 64}, {});
  expect_refused("attention --q " + quoted("q_heads.npy") + " --k " + quoted("k_empty.npy") + " --v " +
                     quoted("k_empty.npy") + " --out " + quoted("out.npy"),
                 path("q_heads.npy"), "too large for a check");
}

// A note about one input (its NaNs, an unread C) waits until every input is
// read: a bad file after it is still the only line printed.
TEST_F(HostileInputs, NotesDoNotPrecedeAnError) {
  std::vector<float> a(12, 1.0f);
  a[5] = std::numeric_limits<float>::quiet_NaN();
  write_npy(path("a_nan.npy"), npy_type::f32, {4, 3}, a);
  write_bytes("bad.npy", "not numpy");
  expect_refused("gemm --a " + quoted("a_nan.npy") + " --b " + quoted("bad.npy") + " --out " + quoted("out.npy"),
                 path("bad.npy"), "magic");
  write_npy(path("c_wrong.npy"), npy_type::f32, {5, 5}, std::vector<float>(25, 0.0f));
  expect_refused("gemm --a " + quoted("a_nan.npy") + " --b " + quoted("b.npy") + " --c " + quoted("c_wrong.npy") +
                     " --out " + quoted("out.npy"),
                 path("c_wrong.npy"), "expected [4, 4]");
}

// Empty arrays are valid inputs (they once reached memcpy with a null pointer):
// the result has the empty shape, or is beta*C / zeros when K or kv_len is 0.
TEST_F(HostileInputs, EmptyArraysAreChecked) {
  SKIP_WITHOUT_DEVICE();
  std::mt19937 rng(22);
  write_npy(path("a05.npy"), npy_type::f32, {0, 5}, {});
  write_npy(path("b53.npy"), npy_type::f32, {5, 3}, random_values(15, rng));
  write_npy(path("a40.npy"), npy_type::f32, {4, 0}, {});
  write_npy(path("b03.npy"), npy_type::f32, {0, 3}, {});
  const std::vector<float> c = random_values(12, rng);
  write_npy(path("c43.npy"), npy_type::f32, {4, 3}, c);
  write_npy(path("a045.npy"), npy_type::f32, {0, 4, 5}, {});
  struct gemm_case {
    std::string args;
    std::vector<std::int64_t> shape;
  };
  const gemm_case cases[] = {
      {"--a " + quoted("a05.npy") + " --b " + quoted("b53.npy"), {0, 3}},
      {"--a " + quoted("a40.npy") + " --b " + quoted("b03.npy") + " --c " + quoted("c43.npy") + " --beta 2", {4, 3}},
      {"--a " + quoted("a045.npy") + " --b " + quoted("b53.npy"), {0, 4, 3}},
  };
  for (const gemm_case& g : cases) {
    SCOPED_TRACE(g.args);
    const result r = check("gemm " + g.args + " --out " + quoted("d.npy"));
    ASSERT_EQ(r.status, 0) << r.output;
    const npy_array d = read_npy(path("d.npy"));
    EXPECT_EQ(d.shape, g.shape);
    if (g.shape == std::vector<std::int64_t>{4, 3}) {
      for (std::size_t i = 0; i < c.size(); ++i) EXPECT_EQ(d.values[i], 2.0f * c[i]);
    }
  }

  write_npy(path("q.npy"), npy_type::f32, {1, 5, 2, 64}, random_values(640, rng));
  write_npy(path("q0.npy"), npy_type::f32, {1, 0, 2, 64}, {});
  write_npy(path("kv0.npy"), npy_type::f32, {1, 0, 2, 64}, {});
  const std::string dtype = support::default_device().kind == device_kind::host ? "" : " --dtype bf16";
  result r = check("attention --q " + quoted("q.npy") + " --k " + quoted("kv0.npy") + " --v " + quoted("kv0.npy") +
                   dtype + " --out " + quoted("o.npy") + " --lse " + quoted("l.npy"));
  ASSERT_EQ(r.status, 0) << r.output;
  for (float x : read_npy(path("o.npy")).values) EXPECT_EQ(x, 0.0f);  // no key: zeros, LSE -inf
  for (float x : read_npy(path("l.npy")).values) EXPECT_TRUE(std::isinf(x) && x < 0);
  r = check("attention --q " + quoted("q0.npy") + " --k " + quoted("q.npy") + " --v " + quoted("q.npy") + dtype +
            " --out " + quoted("o.npy"));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(read_npy(path("o.npy")).shape, (std::vector<std::int64_t>{1, 0, 2, 64}));
}

// --allow-nonfinite: NaN and inf in the inputs propagate as they do in float64
// (a NaN in A poisons its row of D, an inf in B its column with the signs of
// A's column), the positions agree, the finite rest is within tolerance.
// Without the flag the same run fails, as before.
TEST_F(HostileInputs, AllowNonfiniteComparesPositions) {
  SKIP_WITHOUT_DEVICE();
  std::mt19937 rng(23);
  const int M = 7, K = 9, N = 5;
  std::vector<float> a = random_values(M * K, rng), b = random_values(K * N, rng);
  a[2 * K + 3] = std::numeric_limits<float>::quiet_NaN();  // row 2 of D
  b[4 * N + 1] = std::numeric_limits<float>::infinity();   // column 1 of D
  write_npy(path("a.npy"), npy_type::f32, {M, K}, a);
  write_npy(path("b.npy"), npy_type::f32, {K, N}, b);
  const std::string args = "gemm --a " + quoted("a.npy") + " --b " + quoted("b.npy") + " --out " + quoted("d.npy");
  result r = check(args);
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("--allow-nonfinite compares"), std::string::npos) << r.output;
  r = check(args + " --allow-nonfinite");
  ASSERT_EQ(r.status, 0) << r.output;
  // Row 2 is NaN (N values), column 1 is ±inf elsewhere (M − 1 values).
  EXPECT_NE(r.output.find("0 mismatched positions (non-finite in both: 5 NaN"), std::string::npos) << r.output;
  const npy_array d = read_npy(path("d.npy"));
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      const float x = d.values[std::size_t(i * N + j)];
      if (i == 2) EXPECT_TRUE(std::isnan(x)) << i << "," << j;
      else if (j == 1) EXPECT_EQ(x, a[std::size_t(i * K + 4)] > 0 ? INFINITY : -INFINITY) << i << "," << j;
      else EXPECT_TRUE(std::isfinite(x)) << i << "," << j;
    }

  // Attention: a NaN in q poisons its row; in k, every row that sees the key;
  // in v, one column of every row that sees the row of v (non-causal: all).
  const int L = 9, H = 2, D = 64;
  const std::string dtype = support::default_device().kind == device_kind::host ? "" : " --dtype bf16";
  for (const char* role : {"q", "k", "v"}) {
    SCOPED_TRACE(role);
    for (const char* name : {"q", "k", "v"}) {
      std::vector<float> x = random_values(std::size_t(L * H * D), rng);
      if (std::string(name) == role) x[std::size_t((3 * H + 1) * D + 5)] = std::numeric_limits<float>::quiet_NaN();
      write_npy(path(std::string(name) + ".npy"), npy_type::f32, {1, L, H, D}, x);
    }
    const std::string att = "attention --q " + quoted("q.npy") + " --k " + quoted("k.npy") + " --v " +
                            quoted("v.npy") + dtype + " --out " + quoted("o.npy") + " --lse " + quoted("l.npy");
    EXPECT_EQ(check(att).status, 1);
    r = check(att + " --allow-nonfinite");
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_NE(r.output.find("vs float64: 0 mismatched positions"), std::string::npos) << r.output;
    std::size_t nan = 0;
    for (float o : read_npy(path("o.npy")).values) nan += std::isnan(o);
    const std::size_t want = std::string(role) == "q" ? D : std::string(role) == "k" ? std::size_t(L * D) : L;
    EXPECT_EQ(nan, want);
  }
}

}  // namespace
}  // namespace tessel::tools
