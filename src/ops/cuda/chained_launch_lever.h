#pragma once
// The CUDA backend's process-wide kernel levers: around chained launches (backends/cuda/
// chained_launch.cuh: whether kernels chain at all, and what the decode GEMV and split-K attention
// may read before their wait) and the split-K attention's measurement levers (kernel variant,
// split rule). Each is read once, when a backend is constructed, with a target/levers.h grammar;
// a spelling that does not parse keeps the default, with a warning; the resolved value is logged.
namespace lathe::ops::cuda {

// Resolves the lever for a device of compute capability `sm_major`, switches chained launches
// accordingly (process-wide) and logs the resolved value.
void configure_chained_launch(int sm_major);

// LATHE_GEMV_EARLY_WEIGHTS (target/levers.h grammar: off | on | a step count): how much weight
// the decode GEMV reads before its chained-launch wait (backends/cuda/gemv.h). Unset or
// unparseable keeps the compiled default (the latter with a warning). Logs the resolved value.
void configure_gemv_early_weights();

// LATHE_ATTN_EARLY_KV (on/off grammar): whether split-K decode attention copies its first K/V
// tiles before its chained-launch wait (backends/cuda/paged_attention.h). Logs the resolved value.
void configure_attention_early_kv();

// LATHE_ATTN_SPLITK_KERNEL (a variant number 0..12) and LATHE_ATTN_SPLIT_RULE (seed | even): the
// split-K decode kernel's geometry and how it cuts a sequence into splits (backends/cuda/
// paged_attention.h), measurement levers whose bytes differ from the default's. Unset or
// unparseable keeps the defaults (variant 5, the seed's rule; the latter with a warning). Logs
// the resolved values. Call before the first split-K launch.
void configure_attention_kernel();

}  // namespace lathe::ops::cuda
