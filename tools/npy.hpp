// tools/npy.hpp — reading and writing NumPy .npy files (float32 and float16).
//
// Contract: read_npy() accepts format versions 1.0, 2.0 and 3.0 with descr
// '<f4' or '<f2' ('=' byte order is read as little-endian), fortran_order
// False or True (a Fortran-order array is transposed on read, so `values` is
// always C order), and any rank including 0. Everything else — bad magic, an
// unknown version, a header that is not the dict numpy writes, a missing or
// unknown key, a negative or overflowing dimension, another dtype ('<f8',
// '>f4', '<i4', '|f4', structured), a data size that differs from the file
// size — throws npy_error, whose what() is one line naming the file and the
// problem. No allocation is made before the declared data size has been checked
// against the bytes the file actually holds. read_npy() reads regular files
// only: a folder, a FIFO, a socket or a device (/dev/zero) is refused with
// "is not a regular file (a FIFO)" and the like, without blocking (the file is
// opened O_NONBLOCK and examined with fstat before anything is read); an
// empty regular file is "empty file".
//
// write_npy() writes format 1.0 (2.0 if the header would not fit), little
// endian, C order, header padded to a multiple of 64 bytes as numpy does.
#pragma once
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace tessel::tools {

enum class npy_type { f32, f16 };

inline const char* npy_descr(npy_type t) { return t == npy_type::f32 ? "<f4" : "<f2"; }

class npy_error : public std::runtime_error {
 public:
  explicit npy_error(const std::string& what) : std::runtime_error(what) {}
};

struct npy_array {
  npy_type type = npy_type::f32;      // element type in the file (fp16 values are widened exactly)
  std::vector<std::int64_t> shape;    // as declared; empty for a 0-d array
  bool fortran_order = false;         // as declared in the file; `values` is C order regardless
  int major_version = 1;
  std::vector<float> values;          // C (row-major) order
  std::size_t count() const { return values.size(); }
};

// Parses an in-memory .npy image; `name` is used in error messages.
npy_array parse_npy(const unsigned char* data, std::size_t size, const std::string& name);
// Reads and parses a file; errors name the path.
npy_array read_npy(const std::string& path);

// The .npy image of `values` (C order) with `shape`, stored as `type`
// (fp16 rounds to nearest even).
std::string npy_image(npy_type type, const std::vector<std::int64_t>& shape, const std::vector<float>& values);
// Writes npy_image(...) to `path` through output_file.hpp (replaced whole or
// left as it was); throws output_error naming the path on failure.
void write_npy(const std::string& path, npy_type type, const std::vector<std::int64_t>& shape,
               const std::vector<float>& values);

// "[2, 3]"
std::string shape_string(const std::vector<std::int64_t>& shape);

}  // namespace tessel::tools
