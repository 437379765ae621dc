// tests/param_name.hpp — a GoogleTest parameter's name() as a valid test name (non-alphanumerics to '_').
#pragma once
#include <gtest/gtest.h>

#include <cctype>
#include <string>

namespace tessel::test {
template <class Case> std::string param_name(const ::testing::TestParamInfo<Case>& i) {
  std::string s = i.param.name();
  for (char& ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return s;
}
}  // namespace tessel::test
