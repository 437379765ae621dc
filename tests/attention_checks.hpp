// tests/attention_checks.hpp — the GoogleTest expectations every attention case must meet.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>

#include "attention_cases.hpp"

namespace tessel::test {

inline void expect_good(const attention_case& c, const attention_outcome& r, std::uint64_t seed) {
  EXPECT_EQ(r.guard_hits, 0) << c.name() << ": memory outside out/lse changed (seed " << seed << ")";
  EXPECT_EQ(r.unwritten, 0) << c.name() << ": elements of out left unwritten (seed " << seed << ")";
  EXPECT_LT(r.error, attention_tolerance(c.type)) << c.name() << ": relative error of out (seed " << seed << ")";
  EXPECT_EQ(r.out_class_mismatch, 0) << c.name() << ": out NaN/Inf where the reference is not, or not where it is (seed "
                                     << seed << ")";
  EXPECT_EQ(r.lse_class_mismatch, 0) << c.name() << ": lse NaN/Inf where the reference is not, or not where it is (seed "
                                     << seed << ")";
  EXPECT_LT(r.lse_error, 1e-3) << c.name() << ": lse error (seed " << seed << ")";
}

}  // namespace tessel::test
