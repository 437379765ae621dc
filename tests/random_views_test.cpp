// tests/random_views_test.cpp — seeded random views through gemm and attention.
//
// HostileViews.Random*: seeded random views (good layouts, and spoiled ones:
// zero, negative, overlapping strides, wrong extents, ranks, dtypes, devices,
// null data, NaN gemm inputs, outputs placed on inputs). Every call must
// either match the float64 reference (NaN where it has NaN), leaving every
// byte outside its outputs' elements as it was, or be refused with a message
// that names an argument, leaving every byte as it was. An independent
// oracle (element by element) says which calls must be refused. A failure
// prints the call; TESSEL_SEED replays it. All memory is host memory and the
// calls run on the CPU backend in every build (the device backends have
// their own tests).
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

// A device kind whose backend this build lacks.
device absent_device() {
  return std::strstr(built_backends(), "cuda") ? device::hip(0) : device::cuda(0);
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
  const support::position_comparison c = support::compare_positions(ref, got);
  if (c.mismatched) return INFINITY;
  return absolute ? c.max_abs : c.relative;
}

// "" where a GEMM's output got matches ref: NaN and inf where ref has them, and
// ‖got − ref‖ within the output type's tolerance of ‖ref‖ plus what fp32
// accumulation may add, (K + 2)·2^-24 of ‖scale‖ (scale: the magnitudes'
// product, reference_gemm(..., true)). Where an element's products cancel (a
// 1 × 1 output of 64 terms), that term, not ‖ref‖, bounds a correct result.
std::string gemm_error(const std::vector<double>& ref, const std::vector<double>& got,
                       const std::vector<double>& scale, dtype out, std::int64_t k) {
  if (support::compare_positions(ref, got).mismatched) return "NaN / inf where the reference has none, or the reverse";
  double err = 0, ref_norm = 0, scale_norm = 0;
  for (std::size_t i = 0; i < ref.size(); ++i)
    if (std::isfinite(ref[i])) {
      err += (got[i] - ref[i]) * (got[i] - ref[i]);
      ref_norm += ref[i] * ref[i];
      scale_norm += scale[i] * scale[i];
    }
  const double allowed = tolerance(out, int(k)) * std::sqrt(ref_norm) + double(k + 2) * 0x1p-24 * std::sqrt(scale_norm);
  if (std::sqrt(err) <= allowed) return std::string();
  return "error " + std::to_string(std::sqrt(err)) + " (relative " + std::to_string(std::sqrt(err / ref_norm)) +
         "), allowed " + std::to_string(allowed);
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
        return gemm_error(support::reference_gemm(a, b, cv, o), read(c.slots[2], c.arena),
                          support::reference_gemm(a, b, cv, o, true), cv.type, Kb);
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
