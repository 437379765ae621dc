// tests/tools/npy_corpus.hpp — .npy images for the reader's tests: a builder
// for valid files byte for byte as numpy writes them, and the corpus of
// malformed files every reader entry point must refuse with one line
// (npy_test.cpp parses them in memory; npy_corpus_test.cpp feeds them to
// tessel-check as files; npy_fuzz_test.cpp mutates the valid ones).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "tessel/core/element.hpp"

namespace tessel::tools::corpus {

// A .npy image as numpy writes it: magic, version, header length, the dict
// padded with spaces to a multiple of 64 bytes (with the preamble) and a newline.
inline std::string npy_bytes(int major, const std::string& dict, const std::string& data, bool pad = true) {
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

inline std::string f32_bytes(const std::vector<float>& v) {
  std::string s;
  for (float f : v) {
    const std::uint32_t u = float_bits(f);
    for (int b = 0; b < 4; ++b) s += char((u >> (8 * b)) & 0xff);
  }
  return s;
}

inline std::string u16_bytes(const std::vector<std::uint16_t>& v) {
  std::string s;
  for (auto u : v) {
    s += char(u & 0xff);
    s += char(u >> 8);
  }
  return s;
}

inline std::vector<float> iota(std::size_t n, float scale = 1.0f) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = float(i) * scale - 3.0f;
  return v;
}

inline const std::string dict23 = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";

// Valid images of several kinds (versions, types, ranks, orders): the fuzz seeds.
inline std::vector<std::string> valid_images() {
  return {
      npy_bytes(1, dict23, f32_bytes(iota(6))),
      npy_bytes(2, "{'descr': '<f2', 'fortran_order': True, 'shape': (3, 2, 2), }",
                u16_bytes({0x3c00, 0xc000, 0x0001, 0x7bff, 0xfc00, 0x3800, 0x7e00, 0, 1, 2, 3, 4})),
      npy_bytes(3, "{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }", f32_bytes(iota(5))),
      npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }", f32_bytes({2.5f})),
      npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 7), }", ""),
      npy_bytes(1, "{'shape': (2L, 1, 2), 'descr': '=f4', 'fortran_order': True}", f32_bytes(iota(4)), false),
  };
}

struct bad_case {
  const char* what;
  std::string image;
  const char* phrase;  // must appear in the message
};

// `n` opening brackets: the nesting a recursive-descent parser would follow
// until its stack ran out (tools/npy.cpp's has no recursion; these keep it so).
inline std::string nested(char open, std::size_t n) { return std::string(n, open); }

// `text` with every '#' made a NUL byte.
inline std::string with_nuls(std::string text) {
  for (char& c : text)
    if (c == '#') c = '\0';
  return text;
}

inline std::vector<bad_case> bad_cases() {
  const std::string d6 = f32_bytes(iota(6));
  const std::string good = npy_bytes(1, dict23, d6);
  auto with = [&](const std::string& dict) { return npy_bytes(1, dict, d6); };
  auto with_v = [&](int major, const std::string& dict) { return npy_bytes(major, dict, d6); };
  auto shape = [&](const std::string& s) {
    return with("{'descr': '<f4', 'fortran_order': False, 'shape': " + s + "}");
  };
  auto descr = [&](const std::string& d) {
    return with("{'descr': " + d + ", 'fortran_order': False, 'shape': (2, 3)}");
  };
  auto fortran = [&](const std::string& f) {
    return with("{'descr': '<f4', 'fortran_order': " + f + ", 'shape': (2, 3)}");
  };
  auto version = [&](int major, int minor) {
    std::string s = good;
    s[6] = char(major);
    s[7] = char(minor);
    return s;
  };
  auto header_len = [&](std::string img, std::uint32_t len) {  // overwrite the length field
    const int bytes = img[6] == 1 ? 2 : 4;
    for (int b = 0; b < bytes; ++b) img[std::size_t(8 + b)] = char((len >> (8 * b)) & 0xff);
    return img;
  };
  std::string nul_pad = good;  // NUL padding where numpy pads with spaces
  for (std::size_t i = good.find('}') + 1; i + 1 < 128; ++i) nul_pad[i] = '\0';
  const std::string v2 = npy_bytes(2, dict23, d6), v3 = npy_bytes(3, dict23, d6);
  const std::string long_key(60000, 'k');
  return {
      // preamble
      {"empty file", "", "empty file"},
      {"bad magic", std::string("\x93NUMPZ\x01\x00", 8) + good.substr(8), "magic"},
      {"bad first magic byte", "\x94" + good.substr(1), "magic"},
      {"text file", "hello, this is not numpy data at all", "magic"},
      {"zip file", std::string("PK\x03\x04\x14\x00\x00\x00", 8) + good.substr(8), "magic"},
      {"truncated magic", "\x93NUM", "truncated"},
      {"magic only", "\x93NUMPY", "truncated"},
      {"truncated preamble", good.substr(0, 9), "truncated"},
      {"v2 preamble without its length", v2.substr(0, 10), "truncated"},
      {"version 4.0", version(4, 0), "version 4.0"},
      {"version 1.1", version(1, 1), "version 1.1"},
      {"version 0.0", version(0, 0), "version 0.0"},
      {"version 255.255", version(255, 255), "version 255.255"},
      // header length
      {"truncated header", good.substr(0, 40), "truncated header"},
      {"header length past the end", header_len(good, 0xffff), "truncated header"},
      {"v2 header length past the end", header_len(v2, 0x00100000), "truncated header"},
      {"v3 header length past the end", header_len(v3, 200), "truncated header"},
      {"implausible v2 header length", header_len(v2, 0xffffffffu), "implausible"},
      {"v2 header just over the limit", header_len(v2, (1u << 20) + 1), "implausible"},
      {"zero-length header", header_len(good, 0), "not a Python dict"},
      {"header length off by one (short)", header_len(good, 117), "unexpected bytes"},
      // the dict literal
      {"not a dict", with("['descr', '<f4']"), "not a Python dict"},
      {"header is a string", with("'descr'"), "not a Python dict"},
      {"header is a number", with("42"), "not a Python dict"},
      {"header is a tuple", with("('descr', '<f4')"), "not a Python dict"},
      {"header only spaces", with("      "), "not a Python dict"},
      {"byte-order mark before the dict", with_v(3, "\xef\xbb\xbf" + dict23), "not a Python dict"},
      {"unterminated dict", with("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)"), "expected ','"},
      {"unterminated tuple", with("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3"), "expected ','"},
      {"unterminated string", with("{'descr: '<f4', 'fortran_order': False, 'shape': (2, 3)}"), "expected ':'"},
      {"string to the end", with("{'descr': '<f4"), "unterminated string"},
      {"missing shape", with("{'descr': '<f4', 'fortran_order': False}"), "no 'shape'"},
      {"missing descr", with("{'fortran_order': False, 'shape': (2, 3)}"), "no 'descr'"},
      {"missing fortran_order", with("{'descr': '<f4', 'shape': (2, 3)}"), "no 'fortran_order'"},
      {"empty dict", with("{}"), "no 'descr'"},
      {"unknown key", with("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'x': 1}"), "unexpected key"},
      {"empty key", with("{'': 1, 'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)}"), "unexpected key"},
      {"very long key", with("{'" + long_key + "': 1}"), "unexpected key"},
      {"duplicate key", with("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)}"), "twice"},
      {"duplicate shape", with("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'shape': (2, 3)}"),
       "twice"},
      {"unquoted key", with("{descr: '<f4', 'fortran_order': False, 'shape': (2, 3)}"), "quoted key"},
      {"comma only", with("{,}"), "quoted key"},
      {"garbage after dict", with(dict23 + " junk"), "after the header dict"},
      {"two dicts", with(dict23 + dict23), "after the header dict"},
      {"NUL padding", nul_pad, "after the header dict"},
      {"NUL inside a key", with(with_nuls("{'de#scr': '<f4', 'fortran_order': False, 'shape': (2, 3)}")),
       "unexpected key"},
      {"NUL after the brace", with(with_nuls("{#'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)}")),
       "quoted key"},
      {"NUL in the descr", descr(with_nuls("'<f4#'")), "unsupported dtype"},
      {"deeply nested dicts", npy_bytes(2, nested('{', 200000), ""), "quoted key"},
      {"deeply nested tuples", npy_bytes(2, "{'descr': '<f4', 'fortran_order': False, 'shape': " +
                                                nested('(', 200000) + "}", ""),
       "expected a dimension"},
      {"deeply nested lists", npy_bytes(2, nested('[', 200000), ""), "not a Python dict"},
      {"nested dict as descr", descr("{'a': 1}"), "quoted dtype string"},
      // fortran_order
      {"bad bool", fortran("maybe"), "True or False"},
      {"bool as 1", fortran("1"), "True or False"},
      {"bool as string", fortran("'False'"), "True or False"},
      {"bool None", fortran("None"), "True or False"},
      {"bool prefix", fortran("Tru"), "True or False"},
      {"bool with suffix", fortran("Falsey"), "expected ','"},
      // shape
      {"shape as list", shape("[2, 3]"), "tuple"},
      {"shape as number", shape("6"), "tuple"},
      {"shape with text", shape("(2, x)"), "dimension"},
      {"nested shape tuple", shape("(2, (3, 4))"), "dimension"},
      {"float dim", shape("(2.5, 3)"), "expected ','"},
      {"plus sign", shape("(+2, 3)"), "dimension"},
      {"hex dim", shape("(0x2, 3)"), "expected ','"},
      {"double L", shape("(2LL, 3)"), "expected ','"},
      {"comma only shape", shape("(,)"), "dimension"},
      {"negative dim", shape("(-2, 3)"), "negative"},
      {"negative second dim", shape("(2, -3)"), "negative"},
      {"dim over 64 bits", shape("(99999999999999999999, 3)"), "overflows"},
      {"dim 2^63", shape("(9223372036854775808,)"), "overflows"},
      {"dim 2^63 - 1", shape("(9223372036854775807,)"), "truncated data"},
      {"huge dims, tiny file", shape("(1099511627776, 1099511627776)"), "truncated data"},
      {"huge 1-d dim", shape("(4611686018427387904,)"), "truncated data"},
      {"product overflows 64 bits", shape("(4294967296, 4294967296, 4294967296)"), "truncated data"},
      {"65 dimensions", shape("(" + [] { std::string s; for (int i = 0; i < 65; ++i) s += "1, "; return s; }() + ")"),
       "more than 64"},
      {"0-d shape, more data", shape("()"), "unexpected bytes"},
      {"empty shape, data present", shape("(0,)"), "unexpected bytes"},
      // data
      {"truncated data", good.substr(0, good.size() - 1), "truncated data"},
      {"no data", good.substr(0, 128), "truncated data"},
      {"extra data", good + "xyzw", "unexpected bytes after the data"},
      {"float16 header, float32 data", descr("'<f2'"), "unexpected bytes"},
      {"a second array appended", good + good, "unexpected bytes"},
      // dtypes
      {"descr <f8", descr("'<f8'"), "'<f8'"},
      {"descr >f4", descr("'>f4'"), "big-endian"},
      {"descr >f2", descr("'>f2'"), "big-endian"},
      {"descr <i4", descr("'<i4'"), "'<i4'"},
      {"descr |f4", descr("'|f4'"), "'|'"},
      {"descr <c8", descr("'<c8'"), "unsupported dtype"},
      {"descr |u1", descr("'|u1'"), "unsupported dtype"},
      {"descr |b1", descr("'|b1'"), "unsupported dtype"},
      {"descr <f16", descr("'<f16'"), "unsupported dtype"},
      {"descr without byte order", descr("'f4'"), "unsupported dtype"},
      {"descr <F4", descr("'<F4'"), "unsupported dtype"},
      {"descr with a space", descr("'<f4 '"), "unsupported dtype"},
      {"descr empty", descr("''"), "unsupported dtype"},
      {"descr object", descr("'|O'"), "unsupported dtype"},
      {"descr as number", descr("4"), "quoted dtype string"},
      {"structured descr", descr("[('a', '<f4')]"), "structured"},
      {"structured descr, nested", descr("[('a', [('b', '<f4')])]"), "structured"},
      // text encodings
      {"non-ASCII v1 header", with(dict23 + " \xc3\xa9"), "not ASCII"},
      {"non-ASCII v2 header", with_v(2, dict23 + " \xc3\xa9"), "not ASCII"},
      {"unicode key in v3", with_v(3, "{'d\xc3\xa9scr': '<f4', 'fortran_order': False, 'shape': (2, 3)}"),
       "unexpected key"},
      {"unicode descr in v3", with_v(3, "{'descr': '<f\xe2\x82\x84', 'fortran_order': False, 'shape': (2, 3)}"),
       "unsupported dtype"},
      {"invalid UTF-8 in v3", with_v(3, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), '\xff\xfe': 1}"),
       "unexpected key"},
  };
}

}  // namespace tessel::tools::corpus
