// tessel/ops/attention/unit_order.hpp — which (batch, head, query tile) attention's n-th work unit is.
//
// A unit's level is its query tile counted from the last (level 0: the last
// tile, which with a causal mask sees the most keys; a level's cost never rises
// with the level). Two orders (ops/attention/kernel.hpp picks by its config's
// heaviest_first_bytes, core/attention_contract.hpp):
//   head by head: unit n = (b·heads + head)·q_tiles + level;
//   heaviest first: the (batch, head) pairs b·heads + head, whose query heads
//     of one K/V head are consecutive (share = heads / kv_heads of them), in
//     groups of whole K/V heads, group after group; within a group level by
//     level, and within a level pair by pair. The groups are as equal as they
//     can be (sizes differ by one K/V head at most, the larger ones first), so
//     that no short group ends the run with its heavy units.
//     A list schedule (a GPU's block scheduler on one block per unit) then
//     balances the causal triangle's costs, while the units running at once
//     read the K and V of one group's heads (tests/attention_order_test.cpp).
// kv_heads_per_group sizes the groups: the K/V heads that fit in a byte budget
// (the device's L2), at least one, at most all.
#pragma once
#include <cstdint>

#include "tessel/core/config.hpp"

namespace tessel::ops {

struct attention_unit_place {
  int b, head, level;
};

// At most this many (batch, K/V head) pairs per group: budget_bytes of K and V, kv_head_bytes each.
TESSEL_HOST_DEVICE int kv_heads_per_group(long long budget_bytes, long long kv_head_bytes, int batch,
                                                 int kv_heads) {
  const long long all = (long long)batch * kv_heads;
  const long long fit = kv_head_bytes > 0 ? budget_bytes / kv_head_bytes : all;
  return int(fit < 1 ? 1 : fit < all ? fit : all);
}

// Unit n of the heaviest-first order, groups of at most max_group (batch, K/V head) pairs.
TESSEL_HOST_DEVICE attention_unit_place heaviest_first_unit(long long n, int batch, int heads, int kv_heads,
                                                                   int q_tiles, int max_group) {
  const long long kv_all = (long long)batch * kv_heads, share = heads / kv_heads;
  const long long groups = (kv_all + max_group - 1) / max_group;
  const long long small = kv_all / groups, larger = kv_all % groups;  // `larger` groups of small + 1 first
  const long long big_units = larger * (small + 1) * share * q_tiles;
  long long size, first, r;  // the group's pairs, its first pair, n within it
  if (n < big_units) {
    size = (small + 1) * share;
    first = n / (size * q_tiles) * size;
    r = n % (size * q_tiles);
  } else {
    size = small * share;
    const long long m = n - big_units;
    first = larger * (small + 1) * share + m / (size * q_tiles) * size;
    r = m % (size * q_tiles);
  }
  const long long pair = first + r % size;
  return {int(pair / heads), int(pair % heads), int(r / size)};
}

}  // namespace tessel::ops
