#pragma once
#include <cstdint>
#include <optional>

// The CUDA backend's process-wide kernel levers: around chained launches (backends/cuda/
// chained_launch.cuh: whether kernels chain at all, and what the decode GEMV and split-K attention
// may read before their wait) and the split-K attention's measurement levers (kernel variant,
// split rule). Each is read when a backend is constructed (the split-K kernel again when the serve's
// attention configuration arrives), with a target/levers.h grammar; a spelling that does not
// parse keeps the default, with a warning; the resolved value is logged.
namespace lathe::ops::cuda {

// Resolves the lever for a device of compute capability `sm_major`, switches chained launches
// accordingly (process-wide) and logs the resolved value.
void configure_chained_launch(int sm_major);

// LATHE_GEMV_EARLY_WEIGHTS (target/levers.h grammar: off | on | a step count): how much weight
// the decode GEMV reads before its chained-launch wait (backends/cuda/gemv.h). Unset or
// unparseable keeps the compiled default (the latter with a warning). Logs the resolved value.
void configure_gemv_early_weights();

// LATHE_GEMV_SHAPE_VARIANTS (backends/cuda/gemv.h, parse_gemv_shape_variants: comma-separated
// "fp8|bf16/NxK=variant"): a measurement lever that runs another decode GEMV kernel for the named
// weight shapes. Unset keeps `auto` everywhere; a spelling that does not parse keeps it too, with a
// warning saying why. Logs the overrides in force.
void configure_gemv_shape_variants();

// LATHE_GEMV_SPLIT_SUM (on/off grammar): whether the decode GEMV's ":sa" kernels (`auto` on the
// two-CTA register ring) share the split-K sum among the splits (backends/cuda/gemv.h,
// set_gemv_split_sum; default on). Their waits are bounded, so off only saves the waits' time where
// a process's grids may not all be resident at once (an MPS client limited to part of the SMs).
// LATHE_GEMV_SPLIT_SUM_NOWAIT_ROWS (a row count in 0..32, default 8): the widths at which those
// splits do not wait at all (set_gemv_split_sum_nowait_rows). Logs the resolved values.
void configure_gemv_split_sum();

// The decode GEMV's three levers above, early weights first.
void configure_gemv_levers();

// LATHE_ATTN_EARLY_KV (on/off grammar): whether split-K decode attention copies its first K/V
// tiles before its chained-launch wait (backends/cuda/paged_attention.h). Logs the resolved value.
// Also LATHE_ATTN_KV_L2_PROMOTION (none | 0 | 64 | 128 | 256): the L2 promotion of the split-K
// tensor copies' K/V requests (default none; a measurement lever), and LATHE_ATTN_CTAS_PER_SM
// (auto | off | 0 | 1..8): how many split-K CTAs an SM may hold (set_splitk_ctas_per_sm; default
// auto). Logs the three resolved values.
void configure_attention_early_kv();

// LATHE_PREFILL_WS (on/off grammar): whether prefill attention at head dim 128 runs the
// warp-specialised warpgroup-MMA kernel where the device has it (default on) or the mma.sync
// kernel; the bytes are the same (backends/cuda/paged_attention.h). A measurement lever. Logs the
// resolved kernel.
void configure_prefill_attention();

// The split-K decode kernel's geometry (backends/cuda/paged_attention.h): LATHE_ATTN_SPLITK_KERNEL
// (a variant number) if set, else, given the serve's widest decode batch, the serve's choice
// (ops/splitk_policy.h: decode_splitk_kernel), else the compiled default (variant 16); and
// LATHE_ATTN_SPLIT_RULE (seed | even | aligned), how a sequence is cut into splits (default seed). Both
// variables are measurement levers whose bytes differ from the default's; an unparseable one
// keeps the default, with a warning. Also LATHE_ATTN_SPLIT_REDUCE (auto | heads | warps): how the
// split records are merged (set_splitk_reduce_mode, backends/cuda/split_reduce.h; the same bytes;
// default auto). Logs the resolved
// values. Call before the first split-K launch of a serve (the variant is process-wide; a captured graph
// keeps the one it captured). Returns true when LATHE_ATTN_SPLITK_KERNEL pinned the variant.
bool configure_attention_kernel(std::optional<uint32_t> max_decode_seqs = std::nullopt);

}  // namespace lathe::ops::cuda
