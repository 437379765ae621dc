/* tests/c_api/device_none.c — device.h where the test is built without a GPU runtime: no device cases. */
#include "device.h"

int device_available(void) { return 0; }
int device_put(view* v) { return v == NULL; }
int device_get(view* v) { return v == NULL; }
void* device_stream(void) { return NULL; }
