// tessel/core/math.hpp — scalar math and the named element-wise functors tile ops take.
//
// Ops pass these functor types (not lambdas) to map / reduce / broadcast where a
// backend may want to recognise them: a policy can overload, say,
// broadcast_rows(tile, vec, exp2_of_difference{}) with a SIMD exp2, and the
// generic definition stays the meaning.
#pragma once
#include <cmath>

#include "tessel/core/config.hpp"

namespace tessel {

TESSEL_HOST_DEVICE float fast_exp2(float x) { return exp2f(x); }
TESSEL_HOST_DEVICE float fast_log2(float x) { return log2f(x); }
TESSEL_HOST_DEVICE float neg_infinity() { return -INFINITY; }

// max(a, b); with one NaN operand, the other (IEEE maxNum, fmaxf: one
// instruction on GPUs). A softmax row holding a NaN score is NaN either way,
// through that score's own exp2.
struct maximum {
  TESSEL_HOST_DEVICE float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct plus {
  TESSEL_HOST_DEVICE float operator()(float a, float b) const { return a + b; }
};
struct multiply {
  TESSEL_HOST_DEVICE float operator()(float a, float b) const { return a * b; }
};
// a · b, but exactly 0 when b is 0, whatever a holds (0 · NaN and 0 · Inf
// would be NaN): attention's 1 / l for a row that saw no key.
struct multiply_or_zero {
  TESSEL_HOST_DEVICE float operator()(float a, float b) const { return b == 0.0f ? 0.0f : a * b; }
};
// exp2(x·scale − m), x·scale − m as one fused multiply-add: the softmax
// numerator of a raw score x against a running row maximum m already scaled
// (scale > 0, so the row maximum of raw scores is the maximum of scaled ones).
struct exp2_of_difference {
  float scale = 1.0f;
  TESSEL_HOST_DEVICE float operator()(float x, float m) const { return fast_exp2(fmaf(x, scale, -m)); }
};
// 2^x: the softmax's rescale of a row (map_rows over a column vector).
struct power_of_two {
  TESSEL_HOST_DEVICE float operator()(float x) const { return fast_exp2(x); }
};
// The attention's mask on a tile of scores (map): −∞ at (r, c) where the key of
// column c lies past the keys or (causal) past the query of row r may see, x
// elsewhere. Row r keeps columns [0, hidden_from(r)) and hides the rest:
//   visible   the keys left from the tile's first (kv_len − kv0)
//   diagonal  causal: query row r sees column c while c < r + diagonal
//             (q0 + shift − kv0 + 1); not causal: equal to visible
// A policy may mask a row's suffix a vector at a time.
struct hide_keys {
  int visible, diagonal;
  TESSEL_HOST_DEVICE int hidden_from(int r) const { return r + diagonal < visible ? r + diagonal : visible; }
  TESSEL_HOST_DEVICE float operator()(float x, int r, int c) const { return c < hidden_from(r) ? x : neg_infinity(); }
  // Whether every row keeps its first `cols` columns (hidden_from never falls as r grows: row 0 has the fewest).
  TESSEL_HOST_DEVICE bool hides_none(int cols) const { return hidden_from(0) >= cols; }
};

}  // namespace tessel
