// tests/hostile_views_test.cpp — views built to break the argument checks.
//
// - TensorView: the public helpers never overflow (api/tensor.hpp saturates).
// - HostileViews.ArgumentCorpus: a table of malformed arguments (huge, negative
//   and INT64_MAX extents and strides, ranks 0 and 5, unknown dtype and device
//   values, null data, aliasing), each refused with its expected message and
//   nothing written.
// - OutputOverlap, ViewOverflow: issue 7's findings, one test each.
// - HostileViews.Random*: seeded random views (good layouts, and spoiled ones:
//   zero, negative, overlapping strides, wrong extents, ranks, dtypes, devices,
//   null data, NaN gemm inputs, outputs placed on inputs). Every call must
//   either match the float64 reference (NaN where it has NaN), leaving every
//   byte outside its outputs' elements as it was, or be refused with a message
//   that names an argument, leaving every byte as it was. An independent
//   oracle (element by element) says which calls must be refused. A failure
//   prints the call; TESSEL_SEED replays it. All memory is host memory and the
//   calls run on the CPU backend in every build (the device backends have
//   their own tests).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <sstream>
#include <vector>

#include "attention_cases.hpp"
#include "gemm_cases.hpp"
#include "host_tensor.hpp"
#include "reference_attention.hpp"
#include "seed.hpp"

namespace tessel::test {
namespace {

constexpr std::int64_t i64max = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t i64min = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t huge = std::int64_t(1) << 40;

// ---- tensor_view helpers -----------------------------------------------------------

TEST(TensorView, SaturatingMultiply) {
  EXPECT_EQ(saturating_mul(3, -4), -12);
  EXPECT_EQ(saturating_mul(huge, huge), i64max);
  EXPECT_EQ(saturating_mul(-huge, huge), i64min);
  EXPECT_EQ(saturating_mul(i64min, -1), i64max);
  EXPECT_EQ(saturating_mul(i64min, 1), i64min);
  EXPECT_EQ(saturating_mul(std::int64_t(1) << 62, -2), i64min);  // exactly INT64_MIN
  EXPECT_EQ(saturating_mul(std::int64_t(1) << 62, 2), i64max);
  EXPECT_EQ(saturating_mul(i64max, 0), 0);
}

TEST(TensorView, ContiguousAndNumelSaturate) {
  const tensor_view v = tensor_view::contiguous(nullptr, dtype::f32, {2, huge, huge});
  EXPECT_EQ(v.stride[2], 1);
  EXPECT_EQ(v.stride[1], huge);
  EXPECT_EQ(v.stride[0], i64max);
  EXPECT_EQ(v.numel(), i64max);
  const tensor_view n = tensor_view::contiguous(nullptr, dtype::f32, {i64min, -1, huge, huge});
  EXPECT_EQ(n.stride[1], i64max);
  EXPECT_EQ(n.stride[0], -i64max);
  EXPECT_EQ(n.numel(), i64max);
  EXPECT_EQ(tensor_view::strided(nullptr, dtype::f32, {5, -1}, {i64max, i64min}).numel(), -5);
  EXPECT_EQ(tensor_view::contiguous(nullptr, dtype::f32, {1, 2, 3, 4, 5}).rank, 5);  // kept, for the checks to refuse
}

// ---- the argument corpus ---------------------------------------------------------

// One gemm and one attention call with valid arguments, until an entry spoils them.
struct calls {
  std::vector<float> a = std::vector<float>(64, 1.0f), b = a, c = std::vector<float>(64, 42.0f);
  std::vector<std::uint16_t> q = std::vector<std::uint16_t>(2048, 0x3c00), k = q, v = q,
                             o = std::vector<std::uint16_t>(2048, 0x1234);
  std::vector<float> l = std::vector<float>(64, 7.0f);
  tensor_view va = tensor_view::contiguous(a.data(), dtype::f32, {4, 5});
  tensor_view vb = tensor_view::contiguous(b.data(), dtype::f32, {5, 6});
  tensor_view vc = tensor_view::contiguous(c.data(), dtype::f32, {4, 6});
  gemm_options gopt;
  tensor_view vq = tensor_view::contiguous(q.data(), dtype::bf16, {1, 8, 2, 64});
  tensor_view vk = tensor_view::contiguous(k.data(), dtype::bf16, {1, 9, 1, 64});
  tensor_view vv = tensor_view::contiguous(v.data(), dtype::bf16, {1, 9, 1, 64});
  tensor_view vo = tensor_view::contiguous(o.data(), dtype::bf16, {1, 8, 2, 64});
  attention_options aopt;
  calls() { aopt.lse = tensor_view::contiguous(l.data(), dtype::f32, {1, 2, 8}); }
  // Every buffer's bytes, inputs included, to compare before and after.
  std::vector<unsigned char> bytes() const {
    std::vector<unsigned char> r;
    const auto add = [&](const auto& vec) {
      const auto* p = reinterpret_cast<const unsigned char*>(vec.data());
      r.insert(r.end(), p, p + vec.size() * sizeof(vec[0]));
    };
    add(a), add(b), add(c), add(q), add(k), add(v), add(o), add(l);
    return r;
  }
};

// A device kind whose backend this build lacks.
device absent_device() {
  return std::strstr(built_backends(), "cuda") ? device::hip(0) : device::cuda(0);
}

struct corpus_entry {
  const char* what;
  bool attention;  // which op the entry calls
  std::function<void(calls&)> spoil;
  std::vector<const char*> expect;  // fragments of the message
};

std::vector<corpus_entry> corpus() {
  return {
      {"gemm: 2^40 x 2^40 a", false, [](calls& x) { x.va = tensor_view::contiguous(x.a.data(), dtype::f32, {huge, huge}); },
       {"argument 'a'", "shape [1099511627776, 1099511627776] has more elements than fit in int64"}},
      {"gemm: contiguous {2, 2^40, 2^40} c", false,
       [](calls& x) { x.vc = tensor_view::contiguous(x.c.data(), dtype::f32, {2, huge, huge}); },
       {"argument 'c'", "more elements than fit in int64"}},
      {"gemm: INT64_MAX extent", false, [](calls& x) { x.vb.shape[0] = i64max; },
       {"argument 'b'", "more elements than fit in int64"}},
      {"gemm: INT64_MAX stride", false, [](calls& x) { x.vc.stride[0] = i64max; },
       {"argument 'c'", "with strides [9223372036854775807, 1] spans more than fits in int64"}},
      {"gemm: span just past int64 / 4", false, [](calls& x) { x.va.stride[0] = i64max / 4 / 3 + 1; },
       {"argument 'a'", "spans more than fits in int64"}},
      {"gemm: INT64_MIN extent", false, [](calls& x) { x.va.shape[1] = i64min; },
       {"argument 'a'", "dimension 1 is -9223372036854775808, expected a size >= 0"}},
      {"gemm: n = -1 through contiguous()", false,
       [](calls& x) { x.vb = tensor_view::contiguous(x.b.data(), dtype::f32, {5, -1}); },
       {"argument 'b'", "dimension 1 is -1, expected a size >= 0"}},
      {"gemm: INT64_MIN stride", false, [](calls& x) { x.vb.stride[1] = i64min; },
       {"argument 'b'", "stride 1 is -9223372036854775808, expected a stride >= 0"}},
      {"gemm: rank 0", false, [](calls& x) { x.va.rank = 0; }, {"argument 'a'", "expected rank 2 to 3, got rank 0"}},
      {"gemm: rank 5", false,
       [](calls& x) { x.vc = tensor_view::contiguous(x.c.data(), dtype::f32, {1, 1, 1, 4, 6}); },
       {"argument 'c'", "got rank 5"}},
      {"gemm: rank -1", false, [](calls& x) { x.vb.rank = -1; }, {"argument 'b'", "got rank -1"}},
      {"gemm: dtype value 3", false, [](calls& x) { x.va.type = dtype(3); }, {"argument 'a'", "unknown dtype value 3"}},
      {"gemm: dtype value -1", false, [](calls& x) { x.vc.type = dtype(-1); },
       {"argument 'c'", "unknown dtype value -1"}},
      {"gemm: device kind 7", false, [](calls& x) { x.va.dev.kind = device_kind(7); },
       {"argument 'a'", "unknown device kind 7"}},
      {"gemm: device kind -1 everywhere", false,
       [](calls& x) { x.va.dev.kind = x.vb.dev.kind = x.vc.dev.kind = device_kind(-1); },
       {"argument 'a'", "unknown device kind -1"}},
      {"gemm: a backend not built", false, [](calls& x) { x.va.dev = x.vb.dev = x.vc.dev = absent_device(); },
       {"argument 'a'", "but this tessel was built with backends"}},
      {"gemm: a backend not built, empty product", false,
       [](calls& x) {
         x.va = tensor_view::contiguous(nullptr, dtype::f32, {0, 5}, absent_device());
         x.vb.dev = absent_device();
         x.vc = tensor_view::contiguous(nullptr, dtype::f32, {0, 6}, absent_device());
       },
       {"argument 'a'", "but this tessel was built with backends"}},
      {"gemm: null a", false, [](calls& x) { x.va.data = nullptr; },
       {"argument 'a'", "data is a null pointer, expected memory for 20 elements"}},
      {"gemm: c is a", false, [](calls& x) { x.vc.data = x.a.data(); }, {"argument 'c'", "overlaps the memory of 'a'"}},
      {"gemm: c ends inside b", false, [](calls& x) { x.vc.data = x.b.data() - 23; },
       {"argument 'c'", "overlaps the memory of 'b'"}},
      {"gemm: c rows on one another", false, [](calls& x) { x.vc.stride[0] = 5; },
       {"argument 'c'", "make elements of 'c' overlap", "dimension 0 (extent 4) has stride 5"}},
      {"gemm: c batch stride 0", false,
       [](calls& x) {
         x.va = tensor_view::strided(x.a.data(), dtype::f32, {2, 4, 5}, {0, 5, 1});
         x.vc = tensor_view::strided(x.c.data(), dtype::f32, {2, 4, 6}, {0, 6, 1});
       },
       {"argument 'c'", "dimension 0 (extent 2) has stride 0"}},
      {"gemm: M past INT_MAX", false,
       [](calls& x) {
         x.va = tensor_view::strided(x.a.data(), dtype::f32, {std::int64_t(1) << 31, 5}, {0, 1});
         x.vc = tensor_view::strided(x.c.data(), dtype::f32, {std::int64_t(1) << 31, 6}, {0, 1});
       },
       {"size M = 2147483648"}},
      {"attention: q [2^40, 2^40, 1, 64]", true,
       [](calls& x) {
         x.vq = tensor_view::strided(x.q.data(), dtype::bf16, {huge, huge, 1, 64}, {64 * huge, 64, 64, 1});
         x.aopt.lse = tensor_view::contiguous(x.l.data(), dtype::f32, {huge, 1, huge});
       },
       {"argument 'q'", "more elements than fit in int64"}},
      {"attention: lse [2^40, 1, 2^40]", true,
       [](calls& x) { x.aopt.lse = tensor_view::contiguous(x.l.data(), dtype::f32, {huge, 1, huge}); },
       {"argument 'lse'", "more elements than fit in int64"}},
      {"attention: INT64_MAX stride of out", true, [](calls& x) { x.vo.stride[1] = i64max; },
       {"argument 'out'", "spans more than fits in int64"}},
      {"attention: negative heads", true, [](calls& x) { x.vk.shape[2] = -2; },
       {"argument 'k'", "dimension 2 is -2"}},
      {"attention: rank 5 out", true,
       [](calls& x) { x.vo = tensor_view::contiguous(x.o.data(), dtype::bf16, {1, 1, 8, 2, 64}); },
       {"argument 'out'", "expected rank 4, got rank 5"}},
      {"attention: rank 0 lse", true, [](calls& x) { x.aopt.lse.rank = 0; },
       {"argument 'lse'", "expected rank 3, got rank 0"}},
      {"attention: dtype value 9", true, [](calls& x) { x.vk.type = dtype(9); }, {"argument 'k'", "unknown dtype value 9"}},
      {"attention: device kind -1", true, [](calls& x) { x.vv.dev.kind = device_kind(-1); },
       {"argument 'v'", "unknown device kind -1"}},
      {"attention: a backend not built", true,
       [](calls& x) { x.vq.dev = x.vk.dev = x.vv.dev = x.vo.dev = x.aopt.lse.dev = absent_device(); },
       {"argument 'q'", "but this tessel was built with backends"}},
      {"attention: null out", true, [](calls& x) { x.vo.data = nullptr; },
       {"argument 'out'", "data is a null pointer"}},
      {"attention: out is k", true, [](calls& x) { x.vo.data = x.k.data(); },
       {"argument 'out'", "overlaps the memory of 'k'"}},
      {"attention: lse inside v", true, [](calls& x) { x.aopt.lse.data = x.v.data() + 100; },
       {"argument 'lse'", "overlaps the memory of 'v'"}},
      {"attention: lse is out", true, [](calls& x) { x.aopt.lse.data = x.o.data(); },
       {"argument 'lse'", "overlaps the memory of 'out'"}},
      {"attention: out heads on one another", true, [](calls& x) { x.vo.stride[2] = 32; },
       {"argument 'out'", "make elements of 'out' overlap"}},
      {"attention: lse rows on one another", true, [](calls& x) { x.aopt.lse.stride[1] = 7; },
       {"argument 'lse'", "make elements of 'lse' overlap"}},
      {"attention: lse interleaved but disjoint (the rule is conservative)", true,
       [](calls& x) {
         x.vq = tensor_view::contiguous(x.q.data(), dtype::bf16, {1, 3, 2, 64});
         x.vo = tensor_view::contiguous(x.o.data(), dtype::bf16, {1, 3, 2, 64});
         x.aopt.lse = tensor_view::strided(x.l.data(), dtype::f32, {1, 2, 3}, {0, 3, 2});  // offsets 0 2 4 3 5 7
       },
       {"argument 'lse'", "dimension 1 (extent 2) has stride 3, not larger than the span 4"}},
      {"attention: NaN scale", true, [](calls& x) { x.aopt.scale = std::numeric_limits<float>::quiet_NaN(); },
       {"option 'scale'"}},
  };
}

// Runs x's gemm or attention call; expects an Error whose message contains every
// fragment, and every buffer (inputs too) as it was.
void expect_refused(calls& x, bool attention_call, const std::vector<const char*>& expect) {
  const std::vector<unsigned char> before = x.bytes();
  try {
    if (attention_call) attention(x.vq, x.vk, x.vv, x.vo, x.aopt);
    else gemm(x.va, x.vb, x.vc, x.gopt);
    ADD_FAILURE() << "accepted";
  } catch (const Error& err) {
    for (const char* p : expect)
      EXPECT_NE(std::strstr(err.what(), p), nullptr) << "message: " << err.what() << "\nmissing: " << p;
  }
  EXPECT_TRUE(x.bytes() == before) << "memory written by a refused call";
}

TEST(HostileViews, ArgumentCorpus) {
  for (const corpus_entry& e : corpus()) {
    SCOPED_TRACE(e.what);
    calls x;
    e.spoil(x);
    expect_refused(x, e.attention, e.expect);
  }
}

// ---- issue 7's findings: outputs that overlap, sizes that overflow ---------------

TEST(OutputOverlap, AttentionOutRowsOrHeadsOnOneAnother) {
  for (std::int64_t row_stride : {1, 64}) {  // [1024, 1, 64, 1]: rows inside a row; [1024, 64, 64, 1]: heads on rows
    calls x;
    x.vo = tensor_view::strided(x.o.data(), dtype::bf16, {1, 8, 2, 64}, {1024, row_stride, 64, 1});
    expect_refused(x, true, {"argument 'out'", "make elements of 'out' overlap", "expected each element its own memory"});
  }
}
TEST(OutputOverlap, AttentionOutBatchStrideOne) {
  calls x;
  x.vq = tensor_view::contiguous(x.q.data(), dtype::bf16, {2, 8, 2, 64});
  x.vk = tensor_view::contiguous(x.k.data(), dtype::bf16, {2, 9, 1, 64});
  x.vv = tensor_view::contiguous(x.v.data(), dtype::bf16, {2, 9, 1, 64});
  x.vo = tensor_view::strided(x.o.data(), dtype::bf16, {2, 8, 2, 64}, {1, 128, 64, 1});
  x.aopt.lse = tensor_view::contiguous(x.l.data(), dtype::f32, {2, 2, 8});
  expect_refused(x, true, {"argument 'out'", "dimension 3 (extent 64) has stride 1"});
}
TEST(OutputOverlap, LseOnAnInput) {
  for (int i = 0; i < 3; ++i) {
    calls x;  // an fp32 lse over a bf16 input: it would overwrite q (or k, v) while they are read
    x.aopt.lse.data = i == 0 ? x.q.data() : i == 1 ? x.k.data() : x.v.data();
    const std::string expect = std::string("overlaps the memory of '") + "qkv"[i] + "'";
    expect_refused(x, true, {"argument 'lse'", expect.c_str()});
  }
}
TEST(OutputOverlap, LseOnItself) {
  for (std::int64_t batch_stride : {0, 16}) {  // strides {0, 0, 0} and {16, 1, 1}
    calls x;
    x.aopt.lse = tensor_view::strided(x.l.data(), dtype::f32, {1, 2, 8}, {batch_stride, batch_stride ? 1 : 0, batch_stride ? 1 : 0});
    expect_refused(x, true, {"argument 'lse'", "make elements of 'lse' overlap"});
  }
}
TEST(OutputOverlap, GemmBatchStrideInsideAMatrix) {
  for (std::int64_t batch_stride : {1, 8}) {  // a [4, 6] matrix spans 24 elements
    calls x;
    x.va = tensor_view::contiguous(x.a.data(), dtype::f32, {2, 4, 5});
    x.vc = tensor_view::strided(x.c.data(), dtype::f32, {2, 4, 6}, {batch_stride, 6, 1});
    expect_refused(x, false, {"argument 'c'", "make elements of 'c' overlap"});
  }
}
TEST(OutputOverlap, NestedLayoutsAccepted) {
  calls x;  // out as [b, h, s, d] memory, lse as [b, s, h], c column-major with the batch innermost of the rest
  x.vo = tensor_view::strided(x.o.data(), dtype::bf16, {1, 8, 2, 64}, {2048, 64, 512, 1});
  x.aopt.lse = tensor_view::strided(x.l.data(), dtype::f32, {1, 2, 8}, {64, 1, 2});
  EXPECT_NO_THROW(attention(x.vq, x.vk, x.vv, x.vo, x.aopt));
  x.va = tensor_view::contiguous(x.a.data(), dtype::f32, {2, 4, 5});
  x.vc = tensor_view::strided(x.c.data(), dtype::f32, {2, 4, 6}, {4, 1, 8});
  EXPECT_NO_THROW(gemm(x.va, x.vb, x.vc));
  EXPECT_EQ(x.c[0], 5.0f);     // a and b are all ones: each element sums K = 5 ones
  EXPECT_EQ(x.c[47], 5.0f);    // the last element: batch 1, row 3, column 5
  EXPECT_EQ(x.c[48], 42.0f);   // past it: untouched
}
TEST(ViewOverflow, HugeShapesThroughContiguous) {
  calls x;  // what the C entry point builds for q_shape = [2^40, 2^40, 1, 64]
  x.vq = tensor_view::contiguous(x.q.data(), dtype::bf16, {huge, huge, 1, 64});
  x.aopt.lse = tensor_view::contiguous(x.l.data(), dtype::f32, {huge, 1, huge});
  expect_refused(x, true, {"argument 'q'", "has more elements than fit in int64"});
  calls y;
  y.vc = tensor_view::contiguous(y.c.data(), dtype::f32, {2, huge, huge});
  expect_refused(y, false, {"argument 'c'", "has more elements than fit in int64"});
}
TEST(ViewOverflow, NegativeSizeNamedBeforeTheStrideItMade) {
  calls x;  // n = -1: contiguous() makes stride 0 equal to -1 too; the size is the error
  x.vb = tensor_view::contiguous(x.b.data(), dtype::f32, {5, -1});
  expect_refused(x, false, {"argument 'b'", "dimension 1 is -1, expected a size >= 0"});
}

// ---- random views ------------------------------------------------------------------

// Calls f(offset) for every element of v (rank 1 to 4, extents and strides >= 0),
// in row-major order of its indices: the order of the dense reference results.
template <class F> void for_each_element(const tensor_view& v, F&& f) {
  for (int d = 0; d < v.rank; ++d)
    if (v.shape[d] == 0) return;
  std::int64_t idx[max_rank] = {0, 0, 0, 0};
  for (;;) {
    std::int64_t off = 0;
    for (int d = 0; d < v.rank; ++d) off += idx[d] * v.stride[d];
    f(off);
    int d = v.rank - 1;
    while (d >= 0 && ++idx[d] == v.shape[d]) idx[d--] = 0;
    if (d < 0) return;
  }
}

// What the oracle can walk: rank 1 to 4, a known dtype, extents and strides >= 0.
bool walkable(const tensor_view& v) {
  if (v.rank < 1 || v.rank > max_rank || int(v.type) < 0 || int(v.type) > 2) return false;
  for (int d = 0; d < v.rank; ++d)
    if (v.shape[d] < 0 || v.stride[d] < 0) return false;
  return true;
}

// Bytes from the first element to the end of the last (0 when empty).
std::int64_t footprint(const tensor_view& v) {
  std::int64_t span = 0;
  for (int d = 0; d < v.rank; ++d) {
    if (v.shape[d] == 0) return 0;
    span += (v.shape[d] - 1) * v.stride[d];
  }
  return (span + 1) * dtype_size(v.type);
}

void store(unsigned char* p, dtype t, float x) {
  if (t == dtype::f32) return void(std::memcpy(p, &x, 4));
  const std::uint16_t h = t == dtype::f16 ? to_fp16(x).bits : to_bf16(x).bits;
  std::memcpy(p, &h, 2);
}
double load(const unsigned char* p, dtype t) {
  if (t == dtype::f32) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  std::uint16_t h;
  std::memcpy(&h, p, 2);
  return t == dtype::f16 ? to_float(fp16::from_bits(h)) : to_float(bf16::from_bits(h));
}

// A non-finite reference value must be matched exactly (NaN by NaN), else the
// error is +inf; over the finite ones: the relative Frobenius error, or with
// `absolute` the largest difference.
double error_vs(const std::vector<double>& ref, const std::vector<double>& got, bool absolute) {
  if (ref.size() != got.size()) return INFINITY;
  double num = 0, den = 0, worst = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    if (!std::isfinite(ref[i]) || !std::isfinite(got[i])) {
      if (!(got[i] == ref[i] || (std::isnan(got[i]) && std::isnan(ref[i])))) return INFINITY;
      continue;
    }
    num += (got[i] - ref[i]) * (got[i] - ref[i]);
    den += ref[i] * ref[i];
    worst = std::max(worst, std::fabs(got[i] - ref[i]));
  }
  return absolute ? worst : den == 0 ? std::sqrt(num) : std::sqrt(num / den);
}

// One argument of a random call: its view (data set once the arena exists).
struct slot {
  const char* name;
  tensor_view view;
  bool output = false;
  bool null = false;         // spoiled: data = nullptr
  bool fill = true;          // elements get random values (else NaN, as the arena)
  std::int64_t offset = 0;   // bytes into the arena
};

// One call's memory: every argument at an offset in one byte arena whose other
// bytes are all 0xff (a NaN in every dtype).
struct random_call {
  std::mt19937_64 rng;
  std::vector<slot> slots;
  std::vector<unsigned char> arena, before;
  bool must_refuse = false;  // the oracle's verdict, from the element-level check
  std::string why;           // and its reason
  bool refused = false, wrote = false;  // what happened: refused, or accepted with outputs to write

  explicit random_call(std::uint64_t seed) : rng(seed) {}
  std::int64_t pick(std::initializer_list<std::int64_t> xs) { return xs.begin()[rng() % xs.size()]; }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; }
  // Strides that nest the dimensions in `order` (innermost first), padded a
  // little; an extent-1 dimension sometimes gets an arbitrary stride (unused).
  void nest(tensor_view& v, std::vector<int> order) {
    std::int64_t s = 1;
    for (int d : order) {
      v.stride[d] = v.shape[d] == 1 && chance(0.3) ? pick({0, 3, 1000}) : s;
      s = s * std::max<std::int64_t>(v.shape[d], 1) + pick({0, 0, 1, 2});
    }
  }
  void refuse(const std::string& reason) {
    if (!must_refuse) why = reason;
    must_refuse = true;
  }
  void spoil(slot& s);
  void place();
  void judge();
  std::string describe() const;
};

// One hostile change to an argument.
void random_call::spoil(slot& s) {
  tensor_view& v = s.view;
  const int d = v.rank > 0 ? int(rng() % v.rank) : 0;
  switch (rng() % 10) {
    case 0: v.stride[d] = 0; break;
    case 1: v.stride[d] = -std::max<std::int64_t>(v.stride[d], 1); break;
    case 2: v.stride[d] = v.stride[rng() % v.rank]; break;  // two dimensions on one stride
    case 3: v.stride[d] = pick({1, 2, 3, 5, 64}); break;
    case 4: v.shape[d] = pick({-1, 0, 1, v.shape[d] + 1, v.shape[d] - 1}); break;
    case 5: v.rank = int(pick({0, 5, v.rank - 1, v.rank + 1})); break;
    case 6: v.type = dtype(pick({0, 1, 2, 3, -1})); break;
    case 7: v.dev = chance(0.5) ? absent_device() : device{device_kind(pick({7, -1})), 0}; break;
    case 8: s.null = true; break;
    default: s.fill = false; break;  // a NaN-filled input: propagates, compared as such
  }
}

// Offsets: each argument after the previous with a gap; an output now and then
// on top of another argument.
void random_call::place() {
  std::int64_t end = 64;
  for (slot& s : slots) {
    s.offset = (end + 3) / 4 * 4;
    end = s.offset + (walkable(s.view) ? footprint(s.view) : 64) + 4 * pick({0, 1, 4, 16});
  }
  for (slot& s : slots) {
    if (!s.output || !chance(0.08)) continue;
    const slot& other = slots[rng() % slots.size()];
    if (&other == &s) continue;
    const std::int64_t room = walkable(other.view) ? footprint(other.view) / 8 : 0;
    s.offset = other.offset + 4 * std::int64_t(rng() % std::uint64_t(room + 1));
  }
  std::int64_t size = end;
  for (const slot& s : slots) size = std::max(size, s.offset + (walkable(s.view) ? footprint(s.view) : 64) + 64);
  arena.assign(std::size_t(size), 0xff);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (slot& s : slots) {
    s.view.data = s.null ? nullptr : arena.data() + s.offset;
    if (s.fill && walkable(s.view))
      for_each_element(s.view, [&](std::int64_t e) {
        store(arena.data() + s.offset + e * dtype_size(s.view.type), s.view.type, u(rng));
      });
  }
  before = arena;
}

// The oracle, element by element: what must be refused whatever tessel's rule.
void random_call::judge() {
  std::vector<int> owner(arena.size(), -1);  // which output holds each byte
  for (std::size_t i = 0; i < slots.size(); ++i) {
    const slot& s = slots[i];
    const tensor_view& v = s.view;
    if (!walkable(v)) return refuse(std::string(s.name) + " has a bad rank, dtype, extent or stride");
    if (v.dev.kind != device_kind::host) return refuse(std::string(s.name) + " is on an absent or unknown device");
    if (s.null && footprint(v) > 0) return refuse(std::string(s.name) + " has null data");
  }
  for (std::size_t i = 0; i < slots.size(); ++i) {
    const slot& s = slots[i];
    if (!s.output) continue;
    for_each_element(s.view, [&](std::int64_t e) {
      for (int b = 0; b < dtype_size(s.view.type); ++b) {
        int& o = owner[std::size_t(s.offset + e * dtype_size(s.view.type) + b)];
        if (o != -1) refuse(std::string(s.name) + " overlaps " + (o == int(i) ? "itself" : slots[std::size_t(o)].name));
        o = int(i);
      }
    });
  }
  for (const slot& s : slots)
    if (!s.output && !s.null)
      for_each_element(s.view, [&](std::int64_t e) {
        for (int b = 0; b < dtype_size(s.view.type); ++b)
          if (const int o = owner[std::size_t(s.offset + e * dtype_size(s.view.type) + b)]; o != -1)
            refuse(std::string(slots[std::size_t(o)].name) + " overlaps " + s.name);
      });
}

std::string random_call::describe() const {
  std::ostringstream o;
  for (const slot& s : slots) {
    const tensor_view& v = s.view;
    o << "\n  " << s.name << ": " << dtype_name(v.type) << " rank " << v.rank << " shape [";
    for (int d = 0; d < v.rank && d < max_rank; ++d) o << (d ? ", " : "") << v.shape[d];
    o << "] strides [";
    for (int d = 0; d < v.rank && d < max_rank; ++d) o << (d ? ", " : "") << v.stride[d];
    o << "] device " << int(v.dev.kind) << " at byte " << s.offset << (s.null ? " (null)" : "")
      << (!s.output && !s.fill ? " (NaN)" : "");
  }
  return o.str();
}

// Whether a refusal's message names what it refuses.
bool names_an_argument(const char* m) {
  for (const char* p : {"argument '", "option '", "size ", "dtype combination"})
    if (std::strstr(m, p)) return true;
  return false;
}

// The bytes that an accepted call may have changed: its outputs' elements.
std::vector<bool> written_bytes(const random_call& c) {
  std::vector<bool> w(c.arena.size(), false);
  for (const slot& s : c.slots)
    if (s.output && !s.null)
      for_each_element(s.view, [&](std::int64_t e) {
        for (int b = 0; b < dtype_size(s.view.type); ++b) w[std::size_t(s.offset + e * dtype_size(s.view.type) + b)] = true;
      });
  return w;
}

// An output's elements, read from `mem` (the arena or its copy), in reference order.
std::vector<double> read(const slot& s, const std::vector<unsigned char>& mem) {
  std::vector<double> r;
  for_each_element(s.view, [&](std::int64_t e) {
    r.push_back(load(mem.data() + s.offset + e * dtype_size(s.view.type), s.view.type));
  });
  return r;
}

// A view of slot s on the copy of the arena taken before the call.
tensor_view before_view(random_call& c, const slot& s) {
  tensor_view v = s.view;
  if (v.data) v.data = c.before.data() + s.offset;
  return v;
}

// Runs `call`; returns "" when it behaved, else what went wrong. `check` compares
// an accepted call's outputs with the reference ("" when they agree).
std::string run_and_judge(random_call& c, const std::function<void()>& call,
                          const std::function<std::string()>& check) {
  c.judge();
  try {
    call();
  } catch (const Error& e) {
    c.refused = true;
    if (!names_an_argument(e.what())) return std::string("refused without naming an argument: ") + e.what();
    if (c.arena != c.before) return std::string("refused, but memory was written: ") + e.what();
    return "";
  }
  if (c.must_refuse) return "accepted, but " + c.why;
  const std::vector<bool> w = written_bytes(c);
  c.wrote = std::find(w.begin(), w.end(), true) != w.end();
  for (std::size_t i = 0; i < c.arena.size(); ++i)
    if (!w[i] && c.arena[i] != c.before[i]) return "accepted, and wrote byte " + std::to_string(i) + " outside its outputs";
  return check();
}

void random_gemm(random_call& c) {
  gemm_options o;
  o.trans_a = c.chance(0.5);
  o.trans_b = c.chance(0.5);
  o.alpha = float(c.pick({1, 1, -2, 0})) / (c.chance(0.3) ? 2.0f : 1.0f);
  o.beta = float(c.pick({0, 0, 1, -3})) / (c.chance(0.3) ? 2.0f : 1.0f);
  const std::int64_t M = c.pick({0, 1, 2, 3, 7, 16, 33, 40, 5, 9}), N = c.pick({0, 1, 2, 5, 16, 33, 50, 8, 11});
  const std::int64_t K = c.pick({0, 1, 3, 8, 31, 64, 17}), Z = c.pick({-1, -1, -1, 0, 1, 2, 3, 2, 3});  // -1: rank 2
  const dtype in = dtype(c.rng() % 3), out = c.chance(0.5) ? in : dtype::f32;
  // A matrix (rows x cols before op()), batched or shared, row- or column-major.
  const auto matrix = [&](const char* name, std::int64_t rows, std::int64_t cols, dtype t, bool output) {
    slot s{name, {}, output};
    tensor_view& v = s.view;
    v.type = t;
    const bool batched = Z >= 0 && (output || !c.chance(0.25));
    v.rank = batched ? 3 : 2;
    const int r = v.rank;
    v.shape[r - 2] = rows;
    v.shape[r - 1] = cols;
    if (batched) v.shape[0] = output || c.chance(0.75) ? Z : 1;
    std::vector<int> order = c.chance(0.5) ? std::vector<int>{r - 1, r - 2} : std::vector<int>{r - 2, r - 1};
    if (batched) order.insert(c.chance(0.85) ? order.end() : order.begin() + std::ptrdiff_t(c.rng() % 3), 0);
    c.nest(v, order);
    if (batched && !output && c.chance(0.2)) v.stride[0] = 0;  // one matrix for every batch entry
    c.slots.push_back(s);
  };
  matrix("a", o.trans_a ? K : M, o.trans_a ? M : K, in, false);
  matrix("b", o.trans_b ? N : K, o.trans_b ? K : N, in, false);
  matrix("c", M, N, out, true);
  c.slots[2].fill = o.beta != 0.0f;  // beta = 0: C is NaN and must not be read
  for (slot& s : c.slots)
    if (c.chance(0.12)) c.spoil(s);
  c.place();
  const std::string bad = run_and_judge(
      c, [&] { gemm(c.slots[0].view, c.slots[1].view, c.slots[2].view, o); },
      [&] {
        const tensor_view a = before_view(c, c.slots[0]), b = before_view(c, c.slots[1]), cv = before_view(c, c.slots[2]);
        const int rc = cv.rank;
        const auto batch_ok = [&](const tensor_view& x) {
          return x.rank == 2 || x.shape[0] == 1 || (rc == 3 && x.shape[0] == cv.shape[0]);
        };
        const std::int64_t Kb = b.shape[b.rank - (o.trans_b ? 1 : 2)];
        if (a.rank < 2 || b.rank < 2 || rc < 2 || !batch_ok(a) || !batch_ok(b) ||
            cv.shape[rc - 2] != (o.trans_a ? a.shape[a.rank - 1] : a.shape[a.rank - 2]) ||
            cv.shape[rc - 1] != b.shape[b.rank - (o.trans_b ? 2 : 1)] || Kb != a.shape[a.rank - (o.trans_a ? 2 : 1)])
          return std::string("accepted inconsistent shapes");
        const double err = error_vs(support::reference_gemm(a, b, cv, o), read(c.slots[2], c.arena), false);
        return err < tolerance(cv.type, int(Kb)) ? std::string() : "relative error " + std::to_string(err);
      });
  if (!bad.empty())
    ADD_FAILURE() << "gemm " << bad << " (TESSEL_SEED=" << support::run_seed() << "; alpha " << o.alpha << " beta "
                  << o.beta << (o.trans_a ? " trans_a" : "") << (o.trans_b ? " trans_b" : "") << ")" << c.describe();
}

void random_attention(random_call& c) {
  attention_options o;
  o.causal = c.chance(0.5);
  o.scale = c.chance(0.5) ? 0.3f : 0.0f;
  if (c.chance(0.05)) {
    o.scale = c.chance(0.5) ? -1.0f : c.chance(0.5) ? NAN : INFINITY;
    c.refuse("option 'scale' is negative, NaN or inf");
  }
  const std::int64_t B = c.pick({0, 1, 1, 2, 2, 1, 2, 1}), Lq = c.pick({0, 1, 2, 9, 33, 17, 64, 5, 40});
  const std::int64_t Lk = c.pick({0, 1, 5, 40, 70, 13});
  const std::int64_t Hk = c.pick({1, 2}), H = Hk * c.pick({1, 2, 3}), D = c.pick({64, 64, 128});
  const dtype t = dtype(c.rng() % 3);
  // A [batch, seq, heads, head_dim] view, head_dim innermost, the others in any order.
  const auto bshd = [&](const char* name, std::int64_t seq, std::int64_t heads, bool output) {
    slot s{name, {}, output};
    s.view.type = t;
    s.view.rank = 4;
    const std::int64_t shape[] = {B, seq, heads, D};
    std::copy(shape, shape + 4, s.view.shape);
    std::vector<int> order = {0, 1, 2};
    std::shuffle(order.begin(), order.end(), c.rng);
    order.insert(order.begin(), 3);
    c.nest(s.view, order);
    c.slots.push_back(s);
  };
  bshd("q", Lq, H, false);
  bshd("k", Lk, Hk, false);
  bshd("v", Lk, Hk, false);
  bshd("out", Lq, H, true);
  if (c.chance(0.7)) {
    slot s{"lse", {}, true};
    s.view.type = dtype::f32;
    s.view.rank = 3;
    s.view.shape[0] = B, s.view.shape[1] = H, s.view.shape[2] = Lq;
    std::vector<int> order = {0, 1, 2};
    std::shuffle(order.begin(), order.end(), c.rng);
    c.nest(s.view, order);
    c.slots.push_back(s);
  }
  for (slot& s : c.slots) {
    if (c.chance(0.1)) c.spoil(s);
    // No NaN inputs here: attention_numerics_test holds NaN/Inf to the reference
    // (and a NaN in v at a key that a row cannot see reaches that row today).
    s.fill = !s.output;
  }
  c.place();
  const bool lse = c.slots.size() == 5;
  if (lse) o.lse = c.slots[4].view;
  const std::string bad = run_and_judge(
      c,
      [&] { attention(c.slots[0].view, c.slots[1].view, c.slots[2].view, c.slots[3].view, o); },
      [&] {
        const tensor_view q = before_view(c, c.slots[0]), k = before_view(c, c.slots[1]), v = before_view(c, c.slots[2]);
        const tensor_view& out = c.slots[3].view;
        for (int d = 0; d < 4; ++d)
          if (q.rank != 4 || k.rank != 4 || v.rank != 4 || out.rank != 4 || out.shape[d] != q.shape[d] ||
              v.shape[d] != k.shape[d] || (d != 1 && d != 2 && k.shape[d] != q.shape[d]) ||
              (k.shape[2] == 0 ? q.shape[2] != 0 : q.shape[2] % k.shape[2] != 0))
            return std::string("accepted inconsistent shapes");
        const double scale = o.scale > 0 ? o.scale : 1.0 / std::sqrt(double(q.shape[3]));
        const support::attention_reference ref = support::reference_attention(q, k, v, o.causal, scale);
        const double err = error_vs(ref.out, read(c.slots[3], c.arena), false);
        if (!(err < attention_tolerance(q.type))) return "relative error of out " + std::to_string(err);
        const double lerr = lse ? error_vs(ref.lse, read(c.slots[4], c.arena), true) : 0.0;
        return lerr < 1e-3 ? std::string() : "lse error " + std::to_string(lerr);
      });
  if (!bad.empty())
    ADD_FAILURE() << "attention " << bad << " (TESSEL_SEED=" << support::run_seed() << "; scale " << o.scale
                  << (o.causal ? " causal" : "") << ")" << c.describe();
}

// `calls` random calls from the case's seed; stops at the first failure.
void random_calls(const char* name, int calls, void (*one)(random_call&)) {
  std::mt19937_64 seeds(case_seed(name));
  int refused = 0, wrote = 0;
  for (int i = 0; i < calls && !::testing::Test::HasFailure(); ++i) {
    random_call c(seeds());
    SCOPED_TRACE("call " + std::to_string(i));
    one(c);
    refused += c.refused;
    wrote += c.wrote;
  }
  std::printf("[ tessel   ] %s: %d calls: %d refused, %d computed, %d empty no-ops\n", name, calls, refused, wrote,
              calls - refused - wrote);
}

TEST(HostileViews, RandomGemm) { random_calls("HostileViews.RandomGemm", 1500, random_gemm); }
TEST(HostileViews, RandomAttention) { random_calls("HostileViews.RandomAttention", 600, random_attention); }

}  // namespace
}  // namespace tessel::test
