// tessel/core/atom_traits.hpp — the contract every matrix atom fills.
//
// An atom is one matrix instruction (or the scalar stand-in for one): it
// computes C[M×N] += A[M×K] · B[K×N] with `lanes` threads cooperating, each lane
// holding a fixed slice of each operand in a small array of values (its
// fragment). A backend describes an atom by a struct with these members:
//
//   using a_type, b_type, c_type;          element types of the operands
//   static constexpr int M, N, K;          the instruction's shape
//   static constexpr int lanes;            lanes executing it together (32, 64, 1, ...)
//   static constexpr int a_values, b_values, c_values;   fragment sizes per lane
//   static constexpr coord a_coord(int lane, int v);     (lane, value) -> (m, k)
//   static constexpr coord b_coord(int lane, int v);     (lane, value) -> (k, n)
//   static constexpr coord c_coord(int lane, int v);     (lane, value) -> (m, n)
//   static void mma(c_type (&c)[c_values], const a_type (&a)[a_values],
//                   const b_type (&b)[b_values]);        the instruction itself
//                   (host+device, or device only: see TESSEL_*)
//   static constexpr int c_row_xor[]; c_row_xor_count    lane-index xor masks that
//                   reach every other lane holding values of the same C row
//   static constexpr int c_col_xor[]; c_col_xor_count    ... of the same C column
// and may add
//   static constexpr int c_first_in_row(int v);  the first value of v's C row in
//                   a lane (the smallest w with c_coord(0, w).row == c_coord(0, v).row),
//                   in closed form: the reductions index rows by it, which
//                   otherwise search the fragment (free where loops unroll to
//                   constants, the GPUs; a run-time search per value on the CPU).
//                   valid_atom checks it against that definition.
//
// The coordinate maps are constexpr and host-callable, so layouts are tested on
// the host (including a wavefront emulated on the CPU) with no GPU present.
// Register tiles, their loads, stores and reductions are derived from these maps
// alone; a backend may add faster paths (ldmatrix, SIMD) that must agree with them.
#pragma once
#include <type_traits>

#include "tessel/core/config.hpp"

namespace tessel {

struct coord {
  int row;
  int col;
};

// Which operand of an atom a register tile holds.
enum class operand { a, b, c };

// The geometry of one operand of an atom: its tile shape and its lane map.
template <class Atom, operand Role> struct operand_geometry;

template <class Atom> struct operand_geometry<Atom, operand::a> {
  using type = typename Atom::a_type;
  static constexpr int rows = Atom::M, cols = Atom::K, values = Atom::a_values;
  TESSEL_HOST_DEVICE static constexpr coord at(int lane, int v) { return Atom::a_coord(lane, v); }
};
template <class Atom> struct operand_geometry<Atom, operand::b> {
  using type = typename Atom::b_type;
  static constexpr int rows = Atom::K, cols = Atom::N, values = Atom::b_values;
  TESSEL_HOST_DEVICE static constexpr coord at(int lane, int v) { return Atom::b_coord(lane, v); }
};
namespace detail {
template <class Atom, class = void> struct has_c_first_in_row : std::false_type {};
template <class Atom>
struct has_c_first_in_row<Atom, std::void_t<decltype(Atom::c_first_in_row(0))>> : std::true_type {};
// The first value of v's C row in lane 0, by search.
template <class Atom> TESSEL_HOST_DEVICE constexpr int c_first_in_row_searched(int v) {
  for (int w = 0; w < v; ++w)
    if (Atom::c_coord(0, w).row == Atom::c_coord(0, v).row) return w;
  return v;
}
}  // namespace detail

template <class Atom> struct operand_geometry<Atom, operand::c> {
  using type = typename Atom::c_type;
  static constexpr int rows = Atom::M, cols = Atom::N, values = Atom::c_values;
  TESSEL_HOST_DEVICE static constexpr coord at(int lane, int v) { return Atom::c_coord(lane, v); }
  // The first value of v's row (the same in every lane: c_grouping_is_lane_invariant).
  TESSEL_HOST_DEVICE static constexpr int first_in_row(int v) {
    if constexpr (detail::has_c_first_in_row<Atom>::value) return Atom::c_first_in_row(v);
    else return detail::c_first_in_row_searched<Atom>(v);
  }
};

namespace detail {
template <class G> TESSEL_HOST_DEVICE constexpr bool each_value_its_own_row() {
  for (int v = 0; v < G::values; ++v)
    if (G::first_in_row(v) != v) return false;
  return true;
}
template <class G, int V, class F> TESSEL_HOST_DEVICE void row_firsts_from(F& f) {
  if constexpr (V < G::values) {
    if constexpr (G::first_in_row(V) == V) f(V);
    row_firsts_from<G, V + 1>(f);
  }
}
}  // namespace detail

// f(v) for each value v of a lane that is the first of its row
// (G::first_in_row(v) == v), in increasing v: one call per row a lane holds.
// Where every value is its own row, a loop over the values; else one call per
// row first with v a literal, on every compiler (the CPU's loops over 256
// values a fragment do not unroll, so a loop that tests every value runs its
// tests).
template <class G, class F> TESSEL_HOST_DEVICE void for_each_row_first(F& f) {
  if constexpr (detail::each_value_its_own_row<G>()) {
    TESSEL_UNROLL for (int v = 0; v < G::values; ++v) f(v);
  } else {
    detail::row_firsts_from<G, 0>(f);
  }
}

// Checks, at compile time, that an atom's map covers its operand tile: every
// element held by some (lane, value), none outside, and — when `exactly_once` —
// none held twice. C must be covered exactly once; A and B may be replicated
// across lanes (a scalar atom broadcasts B to every lane).
template <class Atom, operand Role> constexpr bool covers(bool exactly_once) {
  using G = operand_geometry<Atom, Role>;
  int count[G::rows * G::cols] = {};
  for (int l = 0; l < Atom::lanes; ++l)
    for (int v = 0; v < G::values; ++v) {
      const coord x = G::at(l, v);
      if (x.row < 0 || x.row >= G::rows || x.col < 0 || x.col >= G::cols) return false;
      ++count[x.row * G::cols + x.col];
    }
  for (int e = 0; e < G::rows * G::cols; ++e)
    if (count[e] == 0 || (exactly_once && count[e] != 1)) return false;
  return true;
}

// Whether the values of a lane's C fragment fall into rows (and columns) the
// same way in every lane: v and w share a row in lane l iff they do in lane 0.
// The generic reductions rely on it to index fragments at compile time.
template <class Atom> constexpr bool c_grouping_is_lane_invariant() {
  // Per lane, the first value of each row (column) seen; O(lanes · (values + M + N)).
  int row0[Atom::c_values] = {}, col0[Atom::c_values] = {};
  for (int l = 0; l < Atom::lanes; ++l) {
    int first_row[Atom::M] = {}, first_col[Atom::N] = {};
    for (int r = 0; r < Atom::M; ++r) first_row[r] = -1;
    for (int c = 0; c < Atom::N; ++c) first_col[c] = -1;
    for (int v = 0; v < Atom::c_values; ++v) {
      const coord x = Atom::c_coord(l, v);
      if (x.row < 0 || x.row >= Atom::M || x.col < 0 || x.col >= Atom::N) return false;
      if (first_row[x.row] < 0) first_row[x.row] = v;
      if (first_col[x.col] < 0) first_col[x.col] = v;
      const int fr = first_row[x.row], fc = first_col[x.col];
      if (l == 0) {
        row0[v] = fr;
        col0[v] = fc;
      } else if (fr != row0[v] || fc != col0[v]) {
        return false;
      }
    }
  }
  return true;
}


// Whether a lane's C fragment can be re-read as its A fragment with no data
// leaving the lane. A k-tile k of an A register tile covers columns
// [k·K, k·K + K) of a row of C atom tiles; for every (lane, A value v) at
// (r, c) of that k-tile, the C atom tile (k·K + c) / N must hold
// (r, (k·K + c) % N) in the same lane, at a value index that is the same in
// every lane. Then the C register tile IS the A register tile, value by value
// (the FlashAttention-2 trick: P = softmax(S) feeds P·V from registers).
// c_source_of_a(lane, v, k) = (that C tile)·c_values + that value index, or −1:
// the flat index of A value v of k-tile k in a row of C tiles. It repeats with
// period a_period = N / K k-tiles where N > K (wgmma: a 16-wide k-tile is a
// quarter of an n64 C tile), else every k-tile looks alike (mma.sync: one
// k-tile is two n8 C tiles).
template <class Atom> TESSEL_HOST_DEVICE constexpr int a_period() { return Atom::N > Atom::K ? Atom::N / Atom::K : 1; }
template <class Atom> TESSEL_HOST_DEVICE constexpr int c_source_of_a(int lane, int v, int k = 0) {
  const int period = a_period<Atom>();
  // Whole periods first: they advance by period·K / N C tiles.
  const int base = (k / period) * (period * Atom::K / Atom::N) * Atom::c_values;
  const coord a = Atom::a_coord(lane, v);
  const int col = (k % period) * Atom::K + a.col;
  for (int w = 0; w < Atom::c_values; ++w) {
    const coord x = Atom::c_coord(lane, w);
    if (x.row == a.row && x.col == col % Atom::N) return base + (col / Atom::N) * Atom::c_values + w;
  }
  return -1;
}
template <class Atom> constexpr bool c_feeds_a() {
  if ((Atom::K % Atom::N != 0 && Atom::N % Atom::K != 0) || Atom::M <= 0) return false;
  // Each lookup searches the C fragment, so each is made once: lane 0's per
  // (k, v), then every other lane's against it.
  for (int k = 0; k < a_period<Atom>(); ++k)
    for (int v = 0; v < Atom::a_values; ++v) {
      const int s0 = c_source_of_a<Atom>(0, v, k);
      if (s0 < 0) return false;
      for (int l = 1; l < Atom::lanes; ++l)
        if (c_source_of_a<Atom>(l, v, k) != s0) return false;
    }
  return true;
}

// Optional members of an atom, with their defaults:
//   static constexpr bool b_in_shared = true;   the instruction reads B from
//     shared memory only (wgmma): no B fragment, no b_coord, no register-only
//     mma(); only the shared-B forms of the mma tile op exist for it.
//   static constexpr bool c_cols_span_warps = true;   a C column is spread over
//     lanes of several warps (a group-scope atom): no lane-exchange column
//     reduction (col_reduce refuses it).
template <class Atom, class = void> struct b_in_shared {
  static constexpr bool value = false;
};
template <class Atom> struct b_in_shared<Atom, std::void_t<decltype(Atom::b_in_shared)>> {
  static constexpr bool value = Atom::b_in_shared;
};
template <class Atom, class = void> struct c_cols_span_warps {
  static constexpr bool value = false;
};
template <class Atom> struct c_cols_span_warps<Atom, std::void_t<decltype(Atom::c_cols_span_warps)>> {
  static constexpr bool value = Atom::c_cols_span_warps;
};

// An atom's c_first_in_row, where it states one, against its definition.
template <class Atom> constexpr bool c_first_in_row_agrees() {
  if constexpr (detail::has_c_first_in_row<Atom>::value) {
    for (int v = 0; v < Atom::c_values; ++v)
      if (Atom::c_first_in_row(v) != detail::c_first_in_row_searched<Atom>(v)) return false;
  }
  return true;
}

template <class Atom> constexpr bool valid_atom() {
  bool b_ok = true;
  if constexpr (!b_in_shared<Atom>::value) b_ok = covers<Atom, operand::b>(false);
  return covers<Atom, operand::a>(false) && b_ok && covers<Atom, operand::c>(true) &&
         c_grouping_is_lane_invariant<Atom>() && c_first_in_row_agrees<Atom>();
}

}  // namespace tessel
