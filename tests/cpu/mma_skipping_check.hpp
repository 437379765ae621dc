// tests/cpu/mma_skipping_check.hpp — the contract of mma_skipping (core/tile_ops.hpp) on a CPU policy's attention tiles.
//
// expect_mma_skipping<P, Op>(what, block_rows, block_cols, depth_step): on
// Op's (ops::attention_stages<P, T, D>) operand tiles, filled with random
// values through P's own loads and stores, for masks (hide_keys) that hide
// nothing, a causal diagonal at several offsets, rows that see no key, keys
// past the end and everything:
//   S = Q·Kᵀ with masked_c: every visible entry bit for bit the plain mma's
//     (overwriting and accumulating); accumulating over random values, an entry
//     is the plain mma's or kept, and the kept ones are exactly the entries of
//     the block_rows × block_cols blocks of C whose entries are all hidden (the
//     policy's granularity: it skips those blocks and no other);
//   O += P·V with masked_a (P zero where hidden): every entry bit for bit the
//     plain mma's, where the skipping call's P is NaN on the hidden keys that
//     the policy's granularity skips (each block_rows block's keys from its last
//     row's first hidden key, rounded up to depth_step) and its V NaN from the
//     last visible key of all rows (the plain call's zero), so a policy that
//     skips less than its granularity says fails (NaN), and one that skips a
//     product it needs differs.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "seed.hpp"
#include "tessel/core/math.hpp"
#include "tessel/core/tile_ops.hpp"
#include "tessel/cpu/launch.hpp"

namespace tessel::test {

// A shared tile of layout L over 128-byte aligned storage of its own.
template <class Tile> struct owned_tile {
  std::vector<unsigned char> bytes = std::vector<unsigned char>(sizeof(typename Tile::value_type) * Tile::layout::size + 128);
  Tile tile() {
    auto at = reinterpret_cast<std::uintptr_t>(bytes.data());
    return Tile{reinterpret_cast<typename Tile::value_type*>(at + (128 - at % 128) % 128)};
  }
};

// Fills tile t (rows × cols of the op's layout) through P's load from a random row-major matrix of T, with the
// rows from `nan_from` on NaN.
template <class P, class T, class Tile>
void fill_tile(cpu::context& ctx, Tile t, std::mt19937_64& rng, int nan_from = 1 << 30, bool zero_nan_rows = false) {
  constexpr int R = Tile::layout::rows, C = Tile::layout::cols;
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<T> m(std::size_t(R) * C);
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c)
      m[std::size_t(r) * C + c] = convert<T>(r < nan_from ? dist(rng) : zero_nan_rows ? 0.0f : std::nanf(""));
  P::load(ctx, t, gmatrix<const T>{m.data(), R, C, C, 1, false}, 0, 0);
}

template <class P, class Op, class T>
void expect_mma_skipping(const char* what, int block_rows, int block_cols, int depth_step) {
  using atom = typename Op::atom;
  using S = typename Op::s_tile;
  using O = typename Op::o_tile;
  constexpr int rows = S::tiles_r * atom::M, keys = S::tiles_c * atom::N;
  static_assert(Op::tile_p::layout::rows == rows, "one unit's rows per block (the CPU configs)");
  std::mt19937_64 rng(case_seed(std::string("mma_skipping ") + what));
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  cpu::context ctx{0, 1, 0, nullptr};
  owned_tile<typename Op::tile_q> q;
  owned_tile<typename Op::tile_kt> kt;
  owned_tile<typename Op::tile_p> p, p_nan;
  owned_tile<typename Op::tile_v> v, v_nan;
  fill_tile<P, T>(ctx, q.tile(), rng);
  fill_tile<P, T>(ctx, kt.tile(), rng);
  auto entry = [](int i, int j, int e) {
    const auto rc = atom::c_coord(0, e);
    return std::pair<int, int>{i * atom::M + rc.row, j * atom::N + rc.col};
  };
  auto start_s = std::make_unique<S>(), plain_s = std::make_unique<S>(), got_s = std::make_unique<S>();
  auto start_o = std::make_unique<O>(), plain_o = std::make_unique<O>(), got_o = std::make_unique<O>();
  for (auto& f : start_s->frag)
    for (auto& g : f)
      for (float& x : g) x = dist(rng);
  for (auto& f : start_o->frag)
    for (auto& g : f)
      for (float& x : g) x = dist(rng);
  const hide_keys masks[] = {{keys, keys},     {keys, 1},          {keys, 1 - rows / 2}, {keys, -block_rows - 3},
                             {keys, 1 - rows}, {keys, keys / 2 - rows + 5}, {keys / 2 + 3, keys}, {keys, 33},
                             {0, 0},           {keys - 7, -2},    {keys, 1 + block_cols}};
  for (const hide_keys& m : masks) {
    const std::string name = std::string(what) + ", visible " + std::to_string(m.visible) + ", diagonal " +
                             std::to_string(m.diagonal);
    auto hidden = [&](int r, int c) { return c >= m.hidden_from(r); };
    // S = Q·Kᵀ, masked_c: overwriting, then accumulating over random values.
    for (const bool accumulate : {false, true}) {
      *plain_s = *start_s;
      if (!accumulate) P::zero(*plain_s);
      P::mma(ctx, *plain_s, q.tile(), kt.tile(), 0, 0);
      *got_s = *start_s;
      P::mma_skipping(ctx, *got_s, q.tile(), kt.tile(), 0, 0, masked_c<hide_keys>{m}, accumulate);
      long wrong = 0, kept = 0, want_kept = 0;
      for (int i = 0; i < S::tiles_r; ++i)
        for (int j = 0; j < S::tiles_c; ++j)
          for (int e = 0; e < S::values; ++e) {
            const auto [r, c] = entry(i, j, e);
            const bool same = std::memcmp(&got_s->frag[i][j][e], &plain_s->frag[i][j][e], sizeof(float)) == 0;
            const bool as_was = std::memcmp(&got_s->frag[i][j][e], &start_s->frag[i][j][e], sizeof(float)) == 0;
            if (!hidden(r, c)) wrong += !same;
            if (!accumulate) continue;
            if (hidden(r, c)) wrong += !(same || as_was);
            kept += as_was && !same;
            // C's block (r / block_rows, c / block_cols) all hidden: its last row's first hidden column
            const int last = (r / block_rows + 1) * block_rows - 1;
            want_kept += c / block_cols * block_cols >= m.hidden_from(last < rows ? last : rows - 1);
          }
      EXPECT_EQ(wrong, 0) << name << (accumulate ? " (accumulating)" : "") << ": S entries not the plain mma's";
      if (accumulate) EXPECT_EQ(kept, want_kept) << name << ": S entries skipped, against the all-hidden blocks'";
    }
    // O += P·V, masked_a: P random where visible, zero where hidden; in the
    // skipping call NaN where the policy's granularity skips (row r's keys from
    // its block's last visible key, rounded up to depth_step) and V NaN from
    // the last visible key of all rows on.
    auto skipped_from = [&](int r) {
      const int last = (r / block_rows + 1) * block_rows - 1;
      const int e = m.hidden_from(last < rows ? last : rows - 1);
      return e < 0 ? 0 : e > keys ? keys : (e + depth_step - 1) / depth_step * depth_step;
    };
    auto s_p = std::make_unique<S>(), s_p_nan = std::make_unique<S>();
    for (int i = 0; i < S::tiles_r; ++i)
      for (int j = 0; j < S::tiles_c; ++j)
        for (int e = 0; e < S::values; ++e) {
          const auto [r, c] = entry(i, j, e);
          s_p->frag[i][j][e] = hidden(r, c) ? 0.0f : dist(rng);
          s_p_nan->frag[i][j][e] = c >= skipped_from(r) ? std::nanf("") : s_p->frag[i][j][e];
        }
    P::store(ctx, p.tile(), *s_p, 0, 0);
    P::store(ctx, p_nan.tile(), *s_p_nan, 0, 0);
    int last_key = m.hidden_from(rows - 1);
    last_key = last_key < 0 ? 0 : last_key > keys ? keys : (last_key + depth_step - 1) / depth_step * depth_step;
    std::mt19937_64 v_rng(case_seed(name + " V"));
    std::mt19937_64 v_rng2 = v_rng;
    fill_tile<P, T>(ctx, v.tile(), v_rng, last_key, true);
    fill_tile<P, T>(ctx, v_nan.tile(), v_rng2, last_key, false);
    *plain_o = *start_o;
    P::mma(ctx, *plain_o, p.tile(), v.tile(), 0, 0);
    *got_o = *start_o;
    P::mma_skipping(ctx, *got_o, p_nan.tile(), v_nan.tile(), 0, 0, masked_a<hide_keys>{m}, true);
    EXPECT_EQ(std::memcmp(got_o.get(), plain_o.get(), sizeof(O)), 0)
        << name << ": O += P·V not the plain mma's (P NaN where skipped, V NaN from key " << last_key << ")";
  }
}

}  // namespace tessel::test
