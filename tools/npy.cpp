// tools/npy.cpp — the .npy reader and writer (see npy.hpp for the contract).
#include "npy.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <sstream>

#include "output_file.hpp"
#include "tessel/core/element.hpp"

namespace tessel::tools {
namespace {

constexpr unsigned char magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
constexpr std::size_t max_header_bytes = 1u << 20;  // numpy itself refuses headers over 10 KB by default

[[noreturn]] void fail(const std::string& name, const std::string& problem) { throw npy_error(name + ": " + problem); }

// A header fragment for a message: printable ASCII only, shortened, on one line.
std::string quoted(const std::string& s, std::size_t max = 40) {
  std::string out = "'";
  for (std::size_t i = 0; i < s.size() && i < max; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    out += (c >= 0x20 && c < 0x7f) ? char(c) : '?';
  }
  if (s.size() > max) out += "...";
  return out + "'";
}

struct header {
  npy_type type = npy_type::f32;
  std::vector<std::int64_t> shape;
  bool fortran_order = false;
  int major = 1;
  std::size_t data_offset = 0;  // bytes before the data
  std::size_t data_bytes = 0;
};

// A recursive-descent parser for the Python dict literal numpy writes, e.g.
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
class dict_parser {
 public:
  dict_parser(const std::string& text, const std::string& name) : s_(text), name_(name) {}

  void parse(header& h) {
    bool have_descr = false, have_fortran = false, have_shape = false;
    skip_ws();
    expect('{', "the header is not a Python dict (expected '{')");
    for (;;) {
      skip_ws();
      if (peek() == '}') { ++i_; break; }
      const std::string key = string_literal("a quoted key");
      skip_ws();
      expect(':', "expected ':' after key " + quoted(key));
      skip_ws();
      if (key == "descr") {
        if (have_descr) bad("key 'descr' appears twice");
        have_descr = true;
        if (peek() == '[') bad("structured dtype (a list descr) is not supported; expected '<f4' or '<f2'");
        h.type = descr(string_literal("a quoted dtype string for 'descr'"));
      } else if (key == "fortran_order") {
        if (have_fortran) bad("key 'fortran_order' appears twice");
        have_fortran = true;
        h.fortran_order = boolean();
      } else if (key == "shape") {
        if (have_shape) bad("key 'shape' appears twice");
        have_shape = true;
        h.shape = tuple();
      } else {
        bad("unexpected key " + quoted(key) + " in the header (expected only 'descr', 'fortran_order', 'shape')");
      }
      skip_ws();
      if (peek() == ',') { ++i_; continue; }
      if (peek() == '}') { ++i_; break; }
      bad("expected ',' or '}' in the header dict, found " + here());
    }
    skip_ws();
    if (i_ != s_.size()) bad("unexpected text after the header dict: " + quoted(s_.substr(i_)));
    if (!have_descr) bad("the header has no 'descr' key");
    if (!have_fortran) bad("the header has no 'fortran_order' key");
    if (!have_shape) bad("the header has no 'shape' key");
  }

 private:
  [[noreturn]] void bad(const std::string& problem) const { fail(name_, problem); }
  char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  std::string here() const { return i_ < s_.size() ? quoted(s_.substr(i_), 12) : "the end of the header"; }
  void skip_ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
  }
  void expect(char c, const std::string& problem) {
    if (peek() != c) bad(problem + ", found " + here());
    ++i_;
  }
  std::string string_literal(const std::string& what) {
    const char q = peek();
    if (q != '\'' && q != '"') bad("expected " + what + ", found " + here());
    const std::size_t end = s_.find(q, i_ + 1);
    if (end == std::string::npos) bad("unterminated string in the header");
    std::string out = s_.substr(i_ + 1, end - i_ - 1);
    i_ = end + 1;
    return out;
  }
  bool boolean() {
    if (s_.compare(i_, 4, "True") == 0) { i_ += 4; return true; }
    if (s_.compare(i_, 5, "False") == 0) { i_ += 5; return false; }
    bad("expected True or False for 'fortran_order', found " + here());
  }
  std::vector<std::int64_t> tuple() {
    expect('(', "expected a tuple for 'shape'");
    std::vector<std::int64_t> dims;
    for (;;) {
      skip_ws();
      if (peek() == ')') { ++i_; break; }
      if (peek() == '-') bad("negative dimension in 'shape'");
      if (peek() < '0' || peek() > '9') bad("expected a dimension (a non-negative integer) in 'shape', found " + here());
      std::int64_t v = 0;
      while (peek() >= '0' && peek() <= '9') {
        const int d = peek() - '0';
        if (v > (std::numeric_limits<std::int64_t>::max() - d) / 10) bad("dimension in 'shape' overflows 64 bits");
        v = v * 10 + d;
        ++i_;
      }
      if (peek() == 'L') ++i_;  // Python 2 long literal, as old numpy wrote it
      dims.push_back(v);
      if (dims.size() > 64) bad("'shape' has more than 64 dimensions");
      skip_ws();
      if (peek() == ',') { ++i_; continue; }
      if (peek() == ')') { ++i_; break; }
      bad("expected ',' or ')' in 'shape', found " + here());
    }
    return dims;
  }
  npy_type descr(const std::string& d) {
    if (d.size() == 3 && d[1] == 'f' && (d[2] == '4' || d[2] == '2')) {
      const npy_type t = d[2] == '4' ? npy_type::f32 : npy_type::f16;
      if (d[0] == '<' || d[0] == '=') return t;  // '=' (native) as written on a little-endian machine
      if (d[0] == '>') bad("dtype " + quoted(d) + " is big-endian; expected little-endian '<f4' (float32) or '<f2' (float16)");
      if (d[0] == '|') bad("dtype " + quoted(d) + ": byte order '|' is only meaningful for 1-byte types; expected '<f4' or '<f2'");
    }
    bad("unsupported dtype " + quoted(d) + "; expected '<f4' (float32) or '<f2' (float16)");
  }

  const std::string& s_;
  const std::string& name_;
  std::size_t i_ = 0;
};

std::uint32_t le16(const unsigned char* p) { return std::uint32_t(p[0]) | std::uint32_t(p[1]) << 8; }
std::uint32_t le32(const unsigned char* p) { return le16(p) | std::uint32_t(p[2]) << 16 | std::uint32_t(p[3]) << 24; }

// The length of the preamble (magic, version, header length) and of the header
// text, from the first bytes of the file; `size` is the whole file's size.
void parse_preamble(const unsigned char* p, std::size_t avail, std::size_t size, const std::string& name, header& h,
                    std::size_t& header_len) {
  if (size == 0) fail(name, "empty file, not a .npy file");
  if (avail < 8 || std::memcmp(p, magic, 6) != 0) {
    if (std::memcmp(p, magic, std::min<std::size_t>(avail, 6)) == 0) fail(name, "truncated .npy preamble");
    fail(name, "not a .npy file (the magic string \\x93NUMPY is missing)");
  }
  h.major = p[6];
  const int minor = p[7];
  if ((h.major != 1 && h.major != 2 && h.major != 3) || minor != 0)
    fail(name, "unsupported .npy format version " + std::to_string(h.major) + "." + std::to_string(minor) +
                   " (expected 1.0, 2.0 or 3.0)");
  const std::size_t len_bytes = h.major == 1 ? 2 : 4;
  if (avail < 8 + len_bytes) fail(name, "truncated .npy preamble (no header length)");
  header_len = h.major == 1 ? le16(p + 8) : le32(p + 8);
  h.data_offset = 8 + len_bytes + header_len;
  if (header_len > max_header_bytes)
    fail(name, "header length " + std::to_string(header_len) + " bytes is implausible (limit " +
                   std::to_string(max_header_bytes) + ")");
  if (h.data_offset > size)
    fail(name, "truncated header: it declares " + std::to_string(header_len) + " bytes, the file holds " +
                   std::to_string(size - (8 + len_bytes)) + " after the preamble");
}

// Parses the header text and checks the declared data size against the file size.
void parse_header_text(const std::string& text, std::size_t size, const std::string& name, header& h) {
  if (h.major < 3) {
    for (unsigned char c : text)
      if (c >= 0x80) fail(name, "header of format " + std::to_string(h.major) + ".0 is not ASCII");
  }
  dict_parser(text, name).parse(h);
  const std::size_t elem = h.type == npy_type::f32 ? 4 : 2;
  const std::size_t avail = size - h.data_offset;
  // count = prod(shape), checked against what the file can hold before any multiplication can overflow.
  std::size_t count = 1;
  bool zero = false;
  for (std::int64_t d : h.shape) zero = zero || d == 0;
  if (!zero) {
    for (std::int64_t d : h.shape) {
      if (std::uint64_t(d) > avail / elem / count)
        fail(name, "truncated data: shape " + shape_string(h.shape) + " of " + (elem == 4 ? "float32" : "float16") +
                       " needs more bytes than the " + std::to_string(avail) + " the file holds after its header");
      count *= std::size_t(d);
    }
  } else {
    count = 0;
  }
  h.data_bytes = count * elem;
  if (h.data_bytes < avail)
    fail(name, std::to_string(avail - h.data_bytes) + " unexpected bytes after the data of shape " +
                   shape_string(h.shape) + " (a lying header, or more than one array in the file)");
  if (h.data_bytes > avail)  // unreachable after the loop above; kept as a guard
    fail(name, "truncated data");
}

// Decodes little-endian elements into floats.
void decode(npy_type t, const unsigned char* p, std::size_t n, float* out) {
  if (t == npy_type::f32) {
    for (std::size_t i = 0; i < n; ++i) out[i] = bits_float(le32(p + 4 * i));
  } else {
    for (std::size_t i = 0; i < n; ++i) out[i] = to_float(fp16::from_bits(std::uint16_t(le16(p + 2 * i))));
  }
}

// Fortran order -> C order, in place (via a copy).
void to_c_order(npy_array& a) {
  const std::size_t n = a.shape.size();
  if (n < 2 || a.values.empty()) return;
  std::vector<std::size_t> fstride(n);
  std::size_t s = 1;
  for (std::size_t d = 0; d < n; ++d) {
    fstride[d] = s;
    s *= std::size_t(a.shape[d]);
  }
  std::vector<float> c(a.values.size());
  std::vector<std::int64_t> idx(n, 0);
  std::size_t off = 0;  // Fortran offset of idx
  for (std::size_t i = 0; i < c.size(); ++i) {
    c[i] = a.values[off];
    for (std::size_t d = n; d-- > 0;) {  // increment idx in C order
      if (++idx[d] < a.shape[d]) { off += fstride[d]; break; }
      off -= fstride[d] * std::size_t(a.shape[d] - 1);
      idx[d] = 0;
    }
  }
  a.values.swap(c);
}

npy_array make_array(const header& h) {
  npy_array a;
  a.type = h.type;
  a.shape = h.shape;
  a.fortran_order = h.fortran_order;
  a.major_version = h.major;
  a.values.resize(h.data_bytes / (h.type == npy_type::f32 ? 4 : 2));
  return a;
}

// An input file, opened without blocking (a FIFO with no writer would block a
// plain open) and refused unless it is a regular file: a device such as
// /dev/zero, a FIFO or a socket has no size to check a header against.
class npy_file {
 public:
  explicit npy_file(const std::string& path) : path_(path) {
    fd_.fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd_.fd < 0) fail(path_, std::string("cannot open for reading: ") + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd_.fd, &st) != 0) fail(path_, std::string("cannot examine: ") + std::strerror(errno));
    if (S_ISDIR(st.st_mode)) fail(path_, "is a directory, not a .npy file");
    if (!S_ISREG(st.st_mode))
      fail(path_, std::string("is not a regular file (") + special_file_kind(st.st_mode) + "), not a .npy file");
    size_ = std::size_t(st.st_size);
  }

  std::size_t size() const { return size_; }
  void seek(std::size_t offset) { offset_ = offset; }
  // Reads exactly n bytes at the current offset; `what` names the part for messages.
  void read(unsigned char* out, std::size_t n, const char* what) {
    while (n > 0) {
      const ssize_t r = ::pread(fd_.fd, out, n, off_t(offset_));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) fail(path_, std::string("read error in ") + what + ": " + std::strerror(errno));
      if (r == 0) fail(path_, std::string("read error in ") + what + " (the file shrank while being read)");
      out += r;
      n -= std::size_t(r);
      offset_ += std::size_t(r);
    }
  }

 private:
  struct descriptor {  // closed also when the constructor throws
    int fd = -1;
    descriptor() = default;
    descriptor(const descriptor&) = delete;
    descriptor& operator=(const descriptor&) = delete;
    ~descriptor() {
      if (fd >= 0) ::close(fd);
    }
  };
  std::string path_;
  descriptor fd_;
  std::size_t size_ = 0;
  std::size_t offset_ = 0;
};

}  // namespace

std::string shape_string(const std::vector<std::int64_t>& shape) {
  std::ostringstream s;
  s << "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s << (i ? ", " : "") << shape[i];
  s << "]";
  return s.str();
}

npy_array parse_npy(const unsigned char* data, std::size_t size, const std::string& name) {
  header h;
  std::size_t header_len = 0;
  parse_preamble(data, size, size, name, h, header_len);
  parse_header_text(std::string(reinterpret_cast<const char*>(data) + h.data_offset - header_len, header_len), size,
                    name, h);
  npy_array a = make_array(h);
  decode(h.type, data + h.data_offset, a.values.size(), a.values.data());
  if (h.fortran_order) to_c_order(a);
  return a;
}

npy_array read_npy(const std::string& path) {
  npy_file f(path);
  const std::size_t size = f.size();
  unsigned char pre[12] = {};
  const std::size_t avail = std::min<std::size_t>(size, sizeof pre);
  f.read(pre, avail, "the preamble");
  header h;
  std::size_t header_len = 0;
  parse_preamble(pre, avail, size, path, h, header_len);
  std::string text(header_len, '\0');
  f.seek(h.data_offset - header_len);
  f.read(reinterpret_cast<unsigned char*>(text.data()), header_len, "the header");
  parse_header_text(text, size, path, h);

  npy_array a = make_array(h);
  const std::size_t elem = h.type == npy_type::f32 ? 4 : 2;
  std::vector<unsigned char> chunk(std::min<std::size_t>(h.data_bytes, std::size_t(1) << 20));
  for (std::size_t done = 0; done < a.values.size();) {
    const std::size_t n = std::min(a.values.size() - done, chunk.size() / elem);
    f.read(chunk.data(), n * elem, "the data");
    decode(h.type, chunk.data(), n, a.values.data() + done);
    done += n;
  }
  if (h.fortran_order) to_c_order(a);
  return a;
}

std::string npy_image(npy_type type, const std::vector<std::int64_t>& shape, const std::vector<float>& values) {
  std::size_t count = 1;
  for (std::int64_t d : shape) {
    if (d < 0) throw npy_error("npy_image: negative dimension in shape " + shape_string(shape));
    count *= std::size_t(d);
  }
  if (count != values.size())
    throw npy_error("npy_image: shape " + shape_string(shape) + " holds " + std::to_string(count) + " values, got " +
                    std::to_string(values.size()));
  // numpy's repr of the shape: "()" for 0-d, "(n,)" for 1-d, "(a, b)" otherwise.
  std::string dims = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) dims += (i ? ", " : "") + std::to_string(shape[i]);
  dims += shape.size() == 1 ? ",)" : ")";
  std::string dict = std::string("{'descr': '") + npy_descr(type) + "', 'fortran_order': False, 'shape': " + dims + ", }";
  // Pad with spaces so that preamble + header + '\n' is a multiple of 64.
  int major = 1;
  std::size_t pre = 10;
  if ((pre + dict.size() + 1 + 63) / 64 * 64 - pre > 0xffff) {
    major = 2;
    pre = 12;
  }
  const std::size_t total = (pre + dict.size() + 1 + 63) / 64 * 64;
  dict.append(total - pre - dict.size() - 1, ' ');
  dict += '\n';
  const std::size_t hl = dict.size();

  std::string out(reinterpret_cast<const char*>(magic), 6);
  out += char(major);
  out += char(0);
  out += char(hl & 0xff);
  out += char((hl >> 8) & 0xff);
  if (major == 2) {
    out += char((hl >> 16) & 0xff);
    out += char((hl >> 24) & 0xff);
  }
  out += dict;
  const std::size_t elem = type == npy_type::f32 ? 4 : 2;
  const std::size_t base = out.size();
  out.resize(base + count * elem);
  for (std::size_t i = 0; i < count; ++i) {
    const std::uint32_t u = type == npy_type::f32 ? float_bits(values[i]) : to_fp16(values[i]).bits;
    for (std::size_t b = 0; b < elem; ++b) out[base + i * elem + b] = char((u >> (8 * b)) & 0xff);
  }
  return out;
}

void write_npy(const std::string& path, npy_type type, const std::vector<std::int64_t>& shape,
               const std::vector<float>& values) {
  write_file_atomically(path, npy_image(type, shape, values));
}

}  // namespace tessel::tools
