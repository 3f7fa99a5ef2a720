#ifndef COUCHETTE_CJAVASCRIPTCORE_SHIM_H
#define COUCHETTE_CJAVASCRIPTCORE_SHIM_H

#include <JavaScriptCore/JavaScript.h>

// JavaScriptCore exports this function but leaves it out of its public headers
// (it lives in JSContextRefPrivate.h). The gateway uses it to stop runaway sync functions.
typedef bool (*JSShouldTerminateCallback)(JSContextRef ctx, void *context);
JS_EXPORT void JSContextGroupSetExecutionTimeLimit(JSContextGroupRef group, double limit,
                                                   JSShouldTerminateCallback callback, void *context);
JS_EXPORT void JSContextGroupClearExecutionTimeLimit(JSContextGroupRef group);

// Also exported but private (JSBasePrivate.h): an object with the VM's heapSize, heapCapacity, extraMemorySize and
// objectCount. The gateway reads it to stop sync functions that allocate without bound.
JS_EXPORT JSObjectRef JSGetMemoryUsageStatistics(JSContextRef ctx);

#endif
