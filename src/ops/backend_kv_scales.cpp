// Default bodies of the optional Backend ops: a backend that does not implement one says so.
#include "ops/backend.h"

#include "core/error.h"

namespace lathe::ops {

void Backend::kv_amax(Act /*k*/, Act /*v*/, float* /*amax*/) {
  fail("the {} backend has no kv_amax op (needed by --calculate-kv-scales)", name());
}

void Backend::kv_write(const DeviceBatch& /*batch*/, Act /*k*/, Act /*v*/,
                       const KvCacheShape& /*cache_shape*/, const KvCacheLayer& /*cache*/) {
  fail("the {} backend has no kv_write op (needed by --calculate-kv-scales)", name());
}

}  // namespace lathe::ops
