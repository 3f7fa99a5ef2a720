#ifndef COUCHETTE_CJAVASCRIPTCORE_SHIM_H
#define COUCHETTE_CJAVASCRIPTCORE_SHIM_H

#include <JavaScriptCore/JavaScript.h>

// JavaScriptCore exports this function but leaves it out of its public headers
// (it lives in JSContextRefPrivate.h). The gateway uses it to stop runaway sync functions.
typedef bool (*JSShouldTerminateCallback)(JSContextRef ctx, void *context);
JS_EXPORT void JSContextGroupSetExecutionTimeLimit(JSContextGroupRef group, double limit,
                                                   JSShouldTerminateCallback callback, void *context);
JS_EXPORT void JSContextGroupClearExecutionTimeLimit(JSContextGroupRef group);

#endif
