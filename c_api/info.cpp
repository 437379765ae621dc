// c_api/info.cpp — what the library is: its C ABI version, its backends, the
// names of the status codes, the calling thread's message.
#include "status.hpp"
#include "tessel/backend.hpp"

extern "C" int32_t tessel_c_api_version(void) { return TESSEL_C_API_VERSION; }

extern "C" const char* tessel_backends(void) { return tessel::built_backends(); }

extern "C" const char* tessel_last_error(void) { return tessel::c_api::last_error(); }

extern "C" const char* tessel_status_name(tessel_status status) {
  switch (status) {
    case TESSEL_OK: return "TESSEL_OK";
    case TESSEL_ERROR_INVALID_ARGUMENT: return "TESSEL_ERROR_INVALID_ARGUMENT";
    case TESSEL_ERROR_UNSUPPORTED: return "TESSEL_ERROR_UNSUPPORTED";
    case TESSEL_ERROR_DEVICE: return "TESSEL_ERROR_DEVICE";
    case TESSEL_ERROR_OUT_OF_MEMORY: return "TESSEL_ERROR_OUT_OF_MEMORY";
    case TESSEL_ERROR_INTERNAL: return "TESSEL_ERROR_INTERNAL";
    default: return "unknown status";
  }
}
