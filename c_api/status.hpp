// c_api/status.hpp — the C ABI's error boundary: runs an op's body, turns
// whatever it throws into a tessel_status and the calling thread's message.
//
// Contract: guarded(fn, body) never throws. tessel::Error keeps its message
// unchanged and maps its kind onto the status; std::bad_alloc is
// TESSEL_ERROR_OUT_OF_MEMORY; anything else is TESSEL_ERROR_INTERNAL with what
// was caught. On success the thread's message is emptied. A message that
// cannot be stored (no memory) is left empty, never thrown.
#pragma once
#include <initializer_list>

#include "tessel/c_api.h"

namespace tessel::c_api {

// Records the concatenated parts as the calling thread's message; returns `status`.
tessel_status set_message(tessel_status status, std::initializer_list<const char*> parts) noexcept;
// The calling thread's message ("" after a success).
const char* last_error() noexcept;
// The status and message for the exception being handled (call inside a catch).
tessel_status current_exception_status(const char* fn) noexcept;

template <class Body> tessel_status guarded(const char* fn, Body&& body) noexcept {
  try {
    body();
    return set_message(TESSEL_OK, {});
  } catch (...) {
    return current_exception_status(fn);
  }
}

}  // namespace tessel::c_api
