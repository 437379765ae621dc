// tests/asan.hpp — TESSEL_TEST_ASAN: 1 where this translation unit is compiled
// with AddressSanitizer, else 0. GCC defines __SANITIZE_ADDRESS__; clang 15
// (scripts/test.sh's cpu-sanitize compiler) answers only
// __has_feature(address_sanitizer).
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define TESSEL_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TESSEL_TEST_ASAN 1
#endif
#endif
#ifndef TESSEL_TEST_ASAN
#define TESSEL_TEST_ASAN 0
#endif
