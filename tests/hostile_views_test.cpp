// tests/hostile_views_test.cpp — views built to break the argument checks.
//
// - TensorView: the public helpers never overflow (api/tensor.hpp saturates).
// - HostileViews.ArgumentCorpus: a table of malformed arguments (huge, negative
//   and INT64_MAX extents and strides, ranks 0 and 5, unknown dtype and device
//   values, null data, aliasing), each refused with its expected message and
//   nothing written.
// - OutputOverlap, ViewOverflow: issue 7's findings, one test each.
// tests/random_views_test.cpp has the seeded random views.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <limits>
#include <vector>

#include "tessel/tessel.hpp"

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

}  // namespace
}  // namespace tessel::test
