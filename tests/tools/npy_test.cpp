// tests/tools/npy_test.cpp — the .npy reader and writer of tools/npy.hpp.
//
// Valid files are made by the writer and by hand, byte for byte as numpy's
// np.save / np.lib.format.write_array write them (checked against numpy 2.4
// when the tests were written; the tests do not need numpy). Malformed files
// must give an npy_error naming the file, on one line — never another
// exception, never a crash, never an allocation sized by a lying header.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "npy.hpp"
#include "tessel/core/element.hpp"

namespace tessel::tools {
namespace {

// A .npy image as numpy writes it: magic, version, header length, the dict
// padded with spaces to a multiple of 64 bytes (with the preamble) and a newline.
std::string npy_bytes(int major, const std::string& dict, const std::string& data, bool pad = true) {
  const std::size_t pre = major == 1 ? 10 : 12;
  std::string h = dict;
  if (pad) {
    const std::size_t total = (pre + h.size() + 1 + 63) / 64 * 64;
    h.append(total - pre - h.size() - 1, ' ');
  }
  h += '\n';
  std::string out = "\x93NUMPY";
  out += char(major);
  out += char(0);
  out += char(h.size() & 0xff);
  out += char((h.size() >> 8) & 0xff);
  if (major != 1) {
    out += char((h.size() >> 16) & 0xff);
    out += char((h.size() >> 24) & 0xff);
  }
  return out + h + data;
}

std::string f32_bytes(const std::vector<float>& v) {
  std::string s;
  for (float f : v) {
    const std::uint32_t u = float_bits(f);
    for (int b = 0; b < 4; ++b) s += char((u >> (8 * b)) & 0xff);
  }
  return s;
}

std::string u16_bytes(const std::vector<std::uint16_t>& v) {
  std::string s;
  for (auto u : v) {
    s += char(u & 0xff);
    s += char(u >> 8);
  }
  return s;
}

npy_array parse(const std::string& img, const std::string& name = "x.npy") {
  return parse_npy(reinterpret_cast<const unsigned char*>(img.data()), img.size(), name);
}

std::vector<float> iota(std::size_t n, float scale = 1.0f) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = float(i) * scale - 3.0f;
  return v;
}

const std::string dict23 = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";

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

struct bad_case {
  const char* what;
  std::string image;
  const char* phrase;  // must appear in the message
};

std::vector<bad_case> bad_cases() {
  const std::string d6 = f32_bytes(iota(6));
  const std::string good = npy_bytes(1, dict23, d6);
  auto with = [&](const std::string& dict) { return npy_bytes(1, dict, d6); };
  std::string bad_version = good;
  bad_version[6] = 4;
  std::string bad_minor = good;
  bad_minor[7] = 1;
  std::string long_header = good;  // header length 0xffff, far past the end of the file
  long_header[8] = char(0xff);
  long_header[9] = char(0xff);
  std::string huge_v2 = npy_bytes(2, dict23, d6);
  huge_v2[8] = huge_v2[9] = huge_v2[10] = huge_v2[11] = char(0xff);
  return {
      {"empty file", "", "empty file"},
      {"bad magic", std::string("\x93NUMPZ\x01\x00", 8) + good.substr(8), "magic"},
      {"text file", "hello, this is not numpy data at all", "magic"},
      {"truncated magic", "\x93NUM", "truncated"},
      {"truncated preamble", good.substr(0, 9), "truncated"},
      {"version 4.0", bad_version, "version 4.0"},
      {"version 1.1", bad_minor, "version 1.1"},
      {"truncated header", good.substr(0, 40), "truncated header"},
      {"header length past the end", long_header, "truncated header"},
      {"implausible v2 header length", huge_v2, "implausible"},
      {"truncated data", good.substr(0, good.size() - 1), "truncated data"},
      {"no data", good.substr(0, 128), "truncated data"},
      {"extra data", good + "xyzw", "unexpected bytes after the data"},
      {"not a dict", with("['descr', '<f4']"), "not a Python dict"},
      {"unterminated dict", with("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)"), "expected ','"},
      {"missing shape", with("{'descr': '<f4', 'fortran_order': False}"), "no 'shape'"},
      {"missing descr", with("{'fortran_order': False, 'shape': (2, 3)}"), "no 'descr'"},
      {"missing fortran_order", with("{'descr': '<f4', 'shape': (2, 3)}"), "no 'fortran_order'"},
      {"unknown key", with("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'x': 1}"), "unexpected key"},
      {"duplicate key", with("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)}"), "twice"},
      {"unterminated string", with("{'descr: '<f4', 'fortran_order': False, 'shape': (2, 3)}"), "expected ':'"},
      {"unquoted key", with("{descr: '<f4', 'fortran_order': False, 'shape': (2, 3)}"), "quoted key"},
      {"bad bool", with("{'descr': '<f4', 'fortran_order': maybe, 'shape': (2, 3)}"), "True or False"},
      {"shape as list", with("{'descr': '<f4', 'fortran_order': False, 'shape': [2, 3]}"), "tuple"},
      {"shape with text", with("{'descr': '<f4', 'fortran_order': False, 'shape': (2, x)}"), "dimension"},
      {"float dim", with("{'descr': '<f4', 'fortran_order': False, 'shape': (2.5, 3)}"), "expected ','"},
      {"negative dim", with("{'descr': '<f4', 'fortran_order': False, 'shape': (-2, 3)}"), "negative"},
      {"dim over 64 bits", with("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999, 3)}"),
       "overflows"},
      {"huge dims, tiny file", with("{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776, 1099511627776)}"),
       "truncated data"},
      {"huge 1-d dim", with("{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904,)}"),
       "truncated data"},
      {"garbage after dict", with(dict23 + " junk"), "after the header dict"},
      {"descr <f8", with("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3)}"), "'<f8'"},
      {"descr >f4", with("{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3)}"), "big-endian"},
      {"descr <i4", with("{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3)}"), "'<i4'"},
      {"descr |f4", with("{'descr': '|f4', 'fortran_order': False, 'shape': (2, 3)}"), "'|'"},
      {"descr <c8", with("{'descr': '<c8', 'fortran_order': False, 'shape': (2, 3)}"), "unsupported dtype"},
      {"descr |u1", with("{'descr': '|u1', 'fortran_order': False, 'shape': (2, 3)}"), "unsupported dtype"},
      {"structured descr", with("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2, 3)}"), "structured"},
      {"non-ASCII v1 header", with("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } \xc3\xa9"),
       "not ASCII"},
  };
}

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

// Random byte corruption never crashes and never throws anything but npy_error.
TEST(Npy, CorruptedBytesNeverCrash) {
  const std::string good = npy_bytes(1, dict23, f32_bytes(iota(6)));
  std::mt19937 rng(11);
  for (int trial = 0; trial < 3000; ++trial) {
    std::string img = good;
    const int flips = 1 + int(rng() % 4);
    for (int f = 0; f < flips; ++f) img[rng() % 128] = char(rng() & 0xff);  // corrupt the preamble or header
    try {
      parse(img);
    } catch (const npy_error&) {
    } catch (const std::exception& e) {
      ADD_FAILURE() << "trial " << trial << ": " << e.what();
    }
  }
}

}  // namespace
}  // namespace tessel::tools
