// tests/tools/npy_test.cpp — the .npy reader and writer of tools/npy.hpp.
//
// Valid files are made by the writer and by hand, byte for byte as numpy's
// np.save / np.lib.format.write_array write them (checked against numpy 2.4
// when the tests were written; the tests do not need numpy). Malformed files
// must give an npy_error naming the file, on one line — never another
// exception, never a crash, never an allocation sized by a lying header.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "npy.hpp"
#include "npy_corpus.hpp"
#include "tessel/core/element.hpp"

namespace tessel::tools {
namespace {

using namespace corpus;

npy_array parse(const std::string& img, const std::string& name = "x.npy") {
  return parse_npy(reinterpret_cast<const unsigned char*>(img.data()), img.size(), name);
}

// ---------------------------------------------------------------- valid files

TEST(Npy, WriterMatchesNumpyBytes) {
  const std::vector<float> v = iota(6, 0.5f);
  EXPECT_EQ(npy_image(npy_type::f32, {2, 3}, v), npy_bytes(1, dict23, f32_bytes(v)));
  // numpy's spelling of 1-d and 0-d shapes: "(5,)" and "()".
  EXPECT_EQ(npy_image(npy_type::f32, {5}, iota(5)),
            npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }", f32_bytes(iota(5))));
  EXPECT_EQ(npy_image(npy_type::f32, {}, {3.5f}),
            npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }", f32_bytes({3.5f})));
  // The header block numpy writes for a 2-d float32 array is exactly 128 bytes.
  EXPECT_EQ(npy_image(npy_type::f32, {2, 3}, v).size(), 128u + 24u);
}

TEST(Npy, ReadsHandBuiltNumpyFiles) {
  const std::vector<float> v = {1.5f, -2.0f, 0.25f, 1e-3f, -7.0f, 65504.0f};
  const npy_array a = parse(npy_bytes(1, dict23, f32_bytes(v)));
  EXPECT_EQ(a.type, npy_type::f32);
  EXPECT_EQ(a.shape, (std::vector<std::int64_t>{2, 3}));
  EXPECT_FALSE(a.fortran_order);
  EXPECT_EQ(a.values, v);

  // float16: 1.0, -2.0, the smallest subnormal, 65504, -inf, 0.5
  const npy_array h = parse(npy_bytes(1, "{'descr': '<f2', 'fortran_order': False, 'shape': (3, 2), }",
                                      u16_bytes({0x3c00, 0xc000, 0x0001, 0x7bff, 0xfc00, 0x3800})));
  EXPECT_EQ(h.type, npy_type::f16);
  ASSERT_EQ(h.count(), 6u);
  EXPECT_EQ(h.values[0], 1.0f);
  EXPECT_EQ(h.values[1], -2.0f);
  EXPECT_EQ(h.values[2], std::ldexp(1.0f, -24));
  EXPECT_EQ(h.values[3], 65504.0f);
  EXPECT_TRUE(std::isinf(h.values[4]) && h.values[4] < 0);
  EXPECT_EQ(h.values[5], 0.5f);
}

TEST(Npy, ReadsVersions2And3) {
  const std::vector<float> v = iota(6);
  for (int major : {2, 3}) {
    const npy_array a = parse(npy_bytes(major, dict23, f32_bytes(v)));
    EXPECT_EQ(a.major_version, major);
    EXPECT_EQ(a.shape, (std::vector<std::int64_t>{2, 3}));
    EXPECT_EQ(a.values, v);
  }
  // Version 3.0 allows UTF-8 in the header (here in an unpadded, otherwise valid header).
  EXPECT_NO_THROW(parse(npy_bytes(3, dict23, f32_bytes(v))));
}

TEST(Npy, HeaderSpellingVariants) {
  const std::string data = f32_bytes(iota(6));
  for (const std::string& dict : {
           std::string("{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (2, 3)}"),
           std::string("{'shape': (2,3), 'fortran_order': False, 'descr': '<f4'}"),
           std::string("{ 'descr' : '<f4' , 'fortran_order' : False , 'shape' : ( 2 , 3 , ) , }"),
           std::string("{'descr': '=f4', 'fortran_order': False, 'shape': (2L, 3L), }"),
       }) {
    SCOPED_TRACE(dict);
    const npy_array a = parse(npy_bytes(1, dict, data));
    EXPECT_EQ(a.shape, (std::vector<std::int64_t>{2, 3}));
    EXPECT_EQ(a.values, iota(6));
  }
  // No padding at all, and a header that is not 64-aligned: still valid.
  EXPECT_EQ(parse(npy_bytes(1, dict23, data, false)).values, iota(6));
}

TEST(Npy, FortranOrderIsTransposedOnRead) {
  // numpy: np.asfortranarray([[0, 1, 2], [3, 4, 5]]) stores 0 3 1 4 2 5.
  const npy_array a = parse(npy_bytes(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }",
                                      f32_bytes({0, 3, 1, 4, 2, 5})));
  EXPECT_TRUE(a.fortran_order);
  EXPECT_EQ(a.values, (std::vector<float>{0, 1, 2, 3, 4, 5}));

  // 3-d: element (i, j, k) of shape (2, 3, 4) sits at i + 2*j + 6*k in Fortran order.
  std::vector<float> fdata(24), expect(24);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) {
        const float v = float(100 * i + 10 * j + k);
        fdata[std::size_t(i + 2 * j + 6 * k)] = v;
        expect[std::size_t((i * 3 + j) * 4 + k)] = v;
      }
  const npy_array b =
      parse(npy_bytes(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3, 4), }", f32_bytes(fdata)));
  EXPECT_EQ(b.values, expect);
}

TEST(Npy, WriterRoundTripsAllRanksAndTypes) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-4, 4);
  const std::vector<std::vector<std::int64_t>> shapes = {{}, {7}, {3, 5}, {2, 3, 4}, {2, 1, 3, 2}, {0, 4}, {3, 0, 2}};
  for (const auto& shape : shapes)
    for (npy_type t : {npy_type::f32, npy_type::f16}) {
      std::size_t n = 1;
      for (auto d : shape) n *= std::size_t(d);
      std::vector<float> v(n);
      for (auto& x : v) x = t == npy_type::f16 ? to_float(to_fp16(u(rng))) : u(rng);  // representable values
      const npy_array a = parse(npy_image(t, shape, v));
      EXPECT_EQ(a.type, t);
      EXPECT_EQ(a.shape, shape);
      EXPECT_EQ(a.values, v);
    }
}

TEST(Npy, FileRoundTripAndFileErrors) {
  const auto dir = std::filesystem::temp_directory_path() / ("tessel_npy_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "a.npy").string();
  write_npy(path, npy_type::f32, {4, 3}, iota(12));
  const npy_array a = read_npy(path);
  EXPECT_EQ(a.shape, (std::vector<std::int64_t>{4, 3}));
  EXPECT_EQ(a.values, iota(12));
  // A file larger than the 1 MiB read chunk.
  std::vector<float> big(600000);
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = float(i % 1000) - 500.0f;
  write_npy(path, npy_type::f32, {600, 1000}, big);
  EXPECT_EQ(read_npy(path).values, big);

  auto expect_error = [](const std::string& p, const std::string& phrase) {
    try {
      read_npy(p);
      ADD_FAILURE() << "no error for " << p;
    } catch (const npy_error& e) {
      const std::string w = e.what();
      EXPECT_EQ(w.rfind(p + ": ", 0), 0u) << w;
      EXPECT_NE(w.find(phrase), std::string::npos) << w;
    }
  };
  expect_error((dir / "missing.npy").string(), "cannot open");
  expect_error(dir.string(), "directory");
  std::ofstream((dir / "short.npy").string(), std::ios::binary) << npy_bytes(1, dict23, f32_bytes(iota(5)));
  expect_error((dir / "short.npy").string(), "truncated data");
  std::filesystem::remove_all(dir);
}

// ------------------------------------------------------------ malformed files

TEST(Npy, MalformedFilesGiveOneLineErrors) {
  for (const bad_case& c : bad_cases()) {
    SCOPED_TRACE(c.what);
    try {
      parse(c.image, "bad.npy");
      ADD_FAILURE() << "accepted: " << c.what;
    } catch (const npy_error& e) {
      const std::string w = e.what();
      EXPECT_EQ(w.rfind("bad.npy: ", 0), 0u) << w;
      EXPECT_NE(w.find(c.phrase), std::string::npos) << w;
      EXPECT_EQ(w.find('\n'), std::string::npos) << w;
      EXPECT_LT(w.size(), 300u) << w;  // header fragments are quoted short
    } catch (const std::exception& e) {
      ADD_FAILURE() << "wrong exception type: " << e.what();
    }
  }
}

// Every prefix of a valid file is refused cleanly.
TEST(Npy, EveryTruncationIsRefused) {
  const std::string good = npy_bytes(1, dict23, f32_bytes(iota(6)));
  for (std::size_t n = 0; n < good.size(); ++n) {
    SCOPED_TRACE(n);
    EXPECT_THROW(parse(good.substr(0, n)), npy_error);
  }
}

// Inputs that are not regular files are refused by what they are, at once:
// a FIFO with no writer must not block the open, /dev/zero is not "empty".
TEST(Npy, NonRegularFilesAreRefusedWithoutBlocking) {
  const auto dir = std::filesystem::temp_directory_path() / ("tessel_npy_special_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string fifo = (dir / "fifo.npy").string(), empty = (dir / "empty.npy").string(),
                    link = (dir / "zero.npy").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::ofstream(empty).close();
  std::filesystem::create_symlink("/dev/zero", link);
  const std::pair<std::string, std::string> cases[] = {
      {fifo, "is not a regular file (a FIFO)"},
      {"/dev/zero", "is not a regular file (a character device)"},
      {link, "is not a regular file (a character device)"},
      {dir.string(), "is a directory"},
      {empty, "empty file"},
  };
  for (const auto& [p, phrase] : cases) {
    SCOPED_TRACE(p);
    try {
      read_npy(p);
      ADD_FAILURE() << "accepted";
    } catch (const npy_error& e) {
      const std::string w = e.what();
      EXPECT_EQ(w.rfind(p + ": ", 0), 0u) << w;
      EXPECT_NE(w.find(phrase), std::string::npos) << w;
    }
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tessel::tools
