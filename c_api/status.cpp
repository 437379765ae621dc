// c_api/status.cpp — the per-thread message and the exception → status map.
#include "status.hpp"

#include <exception>
#include <new>
#include <string>

#include "tessel/error.hpp"

namespace tessel::c_api {
namespace {
thread_local std::string last_message;

tessel_status status_of(error_kind kind) {
  switch (kind) {
    case error_kind::invalid_argument: return TESSEL_ERROR_INVALID_ARGUMENT;
    case error_kind::unsupported: return TESSEL_ERROR_UNSUPPORTED;
    case error_kind::device: return TESSEL_ERROR_DEVICE;
  }
  return TESSEL_ERROR_INTERNAL;
}
}  // namespace

tessel_status set_message(tessel_status status, std::initializer_list<const char*> parts) noexcept {
  last_message.clear();
  try {
    for (const char* p : parts) last_message += p;
  } catch (...) {  // no memory for the message: an empty one rather than an exception
    last_message.clear();
  }
  return status;
}

tessel_status current_exception_status(const char* fn) noexcept {
  try {
    throw;
  } catch (const Error& e) {
    return set_message(status_of(e.kind()), {e.what()});
  } catch (const std::bad_alloc&) {
    return set_message(TESSEL_ERROR_OUT_OF_MEMORY, {fn, ": out of host memory"});
  } catch (const std::exception& e) {
    return set_message(TESSEL_ERROR_INTERNAL, {fn, ": internal error: ", e.what()});
  } catch (...) {
    return set_message(TESSEL_ERROR_INTERNAL, {fn, ": internal error: an unknown exception"});
  }
}

const char* last_error() noexcept { return last_message.c_str(); }

}  // namespace tessel::c_api
