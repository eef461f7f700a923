// Default bodies of the optional Backend ops: a backend that does not implement kv_amax or
// kv_write says so; silu_mul_linear composes the two ops it fuses.
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

void Backend::silu_mul_linear(Phase phase, Act gate_up, const WeightView& weight, Act act, Act out) {
  silu_mul(gate_up, act);
  linear(phase, act, weight, out);
}

}  // namespace lathe::ops
