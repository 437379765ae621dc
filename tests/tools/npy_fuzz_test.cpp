// tests/tools/npy_fuzz_test.cpp — a deterministic mutation fuzz of the .npy
// reader (parse_npy), in its own program because it replaces the global
// operator new to watch allocation sizes.
//
// Valid images of every kind the reader accepts (npy_corpus.hpp) are mutated —
// bytes overwritten with random or syntax-significant values, bits flipped,
// truncated, ranges inserted, deleted or repeated, the header length and the
// shape's digits replaced — a few thousand times from support::run_seed()
// (printed; TESSEL_SEED=... replays a run). Each image must parse (into as
// many values as its shape says) or throw npy_error with one line naming it;
// never another exception, never a crash (the sanitizer builds run this too),
// and never an allocation larger than the image could justify: a float16 file
// widens to twice its bytes, so no single allocation may exceed 2 × size + 4 KiB.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <random>
#include <string>

#include "host_tensor.hpp"
#include "npy.hpp"
#include "npy_corpus.hpp"

namespace {
bool tracking = false;            // set around parse_npy only
std::size_t largest_allocation = 0;

void* allocate(std::size_t n) {
  if (tracking && n > largest_allocation) largest_allocation = n;
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
}  // namespace

// The replaceable forms that pair with free(); the aligned ones stay the library's (they pair among themselves).
void* operator new(std::size_t n) { return allocate(n); }
void* operator new[](std::size_t n) { return allocate(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  if (tracking && n > largest_allocation) largest_allocation = n;
  return std::malloc(n ? n : 1);
}
void* operator new[](std::size_t n, const std::nothrow_t& t) noexcept { return operator new(n, t); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace tessel::tools {
namespace {

using rng_t = std::mt19937_64;

std::size_t below(rng_t& rng, std::size_t n) { return n ? std::size_t(rng() % n) : 0; }

// One mutation of `img`, chosen at random.
void mutate(std::string& img, rng_t& rng) {
  static const char syntax[] = "(){}[]'\",: \n\0L-+0123456789TrueFalse<>|f24\x93\xff\x80\x7f";
  const std::size_t n = img.size();
  switch (below(rng, 9)) {
    case 0:  // a byte, random or syntax-significant
      if (n) img[below(rng, n)] = rng() & 1 ? char(rng()) : syntax[below(rng, sizeof syntax - 1)];
      break;
    case 1:  // a bit
      if (n) img[below(rng, n)] ^= char(1u << below(rng, 8));
      break;
    case 2:  // truncation
      img.resize(below(rng, n + 1));
      break;
    case 3: {  // insertion of random bytes
      std::string ins(1 + below(rng, 16), '\0');
      for (char& c : ins) c = char(rng());
      img.insert(below(rng, n + 1), ins);
      break;
    }
    case 4: {  // deletion of a range
      const std::size_t at = below(rng, n + 1);
      img.erase(at, 1 + below(rng, 16));
      break;
    }
    case 5: {  // a range repeated (nesting, duplicate keys)
      const std::size_t at = below(rng, n + 1), len = 1 + below(rng, 24);
      const std::string piece = img.substr(at, len);
      for (std::size_t r = below(rng, 4) + 1; r-- > 0;) img.insert(at, piece);
      break;
    }
    case 6:  // the header length field: any value
      if (n >= 12)
        for (std::size_t b = 8; b < (img[6] == 1 ? 10u : 12u); ++b) img[b] = char(rng());
      break;
    case 7: {  // a digit of the shape replaced by a large number
      const std::size_t s = img.find("'shape'");
      const std::size_t d = s == std::string::npos ? s : img.find_first_of("0123456789", s);
      if (d != std::string::npos) {
        static const char* big[] = {"4611686018427387904", "9223372036854775807", "18446744073709551616",
                                    "4294967296", "65536", "0", "1"};
        img.replace(d, 1, big[below(rng, 7)]);
      }
      break;
    }
    default:  // a byte of the data region or of the header end
      if (n) img[n - 1 - below(rng, std::min<std::size_t>(n, 32))] = char(rng());
      break;
  }
}

std::string hex(const std::string& s) {
  std::string out;
  char buf[4];
  for (unsigned char c : s) {
    std::snprintf(buf, sizeof buf, "%02x", c);
    out += buf;
  }
  return out;
}

TEST(NpyFuzz, MutatedImagesParseOrFailCleanly) {
  const std::uint64_t seed = support::run_seed();
  constexpr int trials = 10000;
  std::printf("[ fuzz     ] seed %llu, %d mutated images (TESSEL_SEED=%llu replays)\n", (unsigned long long)seed,
              trials, (unsigned long long)seed);
  rng_t rng(seed);
  const std::vector<std::string> seeds = corpus::valid_images();
  int parsed = 0, refused = 0;
  for (int trial = 0; trial < trials; ++trial) {
    std::string img = seeds[below(rng, seeds.size())];
    for (std::size_t m = 1 + below(rng, 4); m-- > 0;) mutate(img, rng);
    largest_allocation = 0;
    std::string failure;
    tracking = true;
    try {
      const npy_array a = parse_npy(reinterpret_cast<const unsigned char*>(img.data()), img.size(), "fuzz.npy");
      tracking = false;
      std::size_t count = 1;
      for (auto d : a.shape) count *= std::size_t(d);
      if (count != a.count()) failure = "parsed, but the shape does not match the value count";
      ++parsed;
    } catch (const npy_error& e) {
      tracking = false;
      const std::string w = e.what();
      if (w.rfind("fuzz.npy: ", 0) != 0 || w.find('\n') != std::string::npos) failure = "bad message: " + w;
      ++refused;
    } catch (const std::exception& e) {
      tracking = false;
      failure = std::string("not an npy_error: ") + e.what();
    }
    if (largest_allocation > 2 * img.size() + 4096)
      failure += " allocated " + std::to_string(largest_allocation) + " bytes for a " + std::to_string(img.size()) +
                 "-byte image";
    if (!failure.empty()) {
      ADD_FAILURE() << "seed " << seed << ", trial " << trial << ": " << failure << "\n  image: " << hex(img);
      break;  // one reproducer is enough
    }
  }
  std::printf("[ fuzz     ] %d parsed, %d refused\n", parsed, refused);
  EXPECT_GT(refused, trials / 2);  // the mutations do reach the error paths
}

}  // namespace
}  // namespace tessel::tools
