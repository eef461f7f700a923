#pragma once
// Device pieces shared by the two decode GEMV kernels (gemv.cu: the register-ring kernel, the
// default in its ring and ringbal forms; gemv_stream.cu: the bulk-copy stream kernel, `auto`'s
// choice for bf16 lm_heads). Both compute one 128-k step of 16 weight rows x up to 16 token
// columns with the SAME instruction sequence (gemv_step below), which is what keeps every row's
// fp32 sum identical across tiers.
//
// Per 128-k step a thread (g = lane / 4, c = lane % 4) holds, for each 64-k half h, the 16 weight
// bytes of row g and of row g + 8 at stored k = h * 64 + c * 16 (fp8: one 16-byte vector per row
// and half; bf16: two). They feed four m16n8k16 MMAs, MMA q taking word q of each row's vector:
// - fp8: the stored order of fp8_weight_layout.h makes word q natural k {16q + 2c, +1, 16q + 8 + 2c,
//   +1} of the half, the fragment's logical k {2c, 2c+1, 2c+8, 2c+9}: MMA q sums natural k
//   16q .. 16q + 15, and x's fragments are natural (ldmatrix from the staged x, load_x_half);
// - bf16 (natural order): MMA q takes physical k = c*16 + 4q .. 4q+3 as logical {2c, 2c+1, 2c+8,
//   2c+9}, and each thread reads x's 16 k at its own c*16 with the same permutation.
// Either way each MMA sums the right pairs, and every tier uses the same assignment.
#include <cuda.h>
#include <cuda_bf16.h>

#include <cstdint>

#include "backends/cuda/fp8_convert.cuh"
#include "backends/cuda/gemv.h"

namespace lathe::cuda::gemv_detail {

struct Params {
  const uint8_t* w;
  const float* scale;
  const float* bias;
  const __nv_bfloat16* x;
  void* y;
  float* partials;
  int* counters;
  uint64_t* split_slots;  // register ring, tiers 1 and 4: split-K slots (put_slot / sum_split_slots)
  int64_t x_stride;
  int64_t y_stride;
  int n;
  int k;
  int m;
  int ksplit;       // register-ring kernel: K splits (gridDim.y)
  int chunk_steps;  // register-ring kernel: steps per split
  int scale_kind;   // GemvScale
  int y_f32;
  int64_t ksteps;       // stream kernel: k / 128
  int64_t total_units;  // stream kernel: 128-row blocks x ksteps
  int64_t cta_units;    // stream kernel: units per CTA (the last CTA may get fewer)
  // Register ring: weight steps requested before the chained-launch wait (gemv_early_weights):
  // < 0 none, 0 the ring's first steps, N > 0 those and N more steps prefetched into L2.
  int early_steps = -1;
  // kFusedNorm kernels (GemvNormInput, gemv_fused_norm.cuh): x is normalised in the kernel.
  const float* norm_weight = nullptr;
  float norm_eps = 0.0f;
  // bf16 y is the residual stream: y = round(y + round(result)) (GemvProblem::y_add).
  int y_add = 0;
  // > 0: W is [gate; up] with this many rows each and y the SwiGLU of the two, [m, silu_inter]
  // (GemvProblem::silu_inter; register-ring kernel, one CTA per row block).
  int silu_inter = 0;
  // Epilogue launches (SwiGLU, QK-norm/RoPE): 1 = release the next chained kernel after the main
  // loop instead of at the start (gemv_launch: the 1-row tier).
  int release_after_loop = 0;
  // Register ring, 16- and 32-row tiers (GemvVariant::split_sum_all, ":sa"): 1 = every K split of a
  // row block sums its own share of the block's rows once all splits have arrived, instead of the
  // last split summing all (arrive_for_shares); how long a split waits for the others before
  // leaving its share to the last, in ns (gemv_split_sum_wait_ns).
  int split_sum_all = 0;
  uint32_t split_sum_wait_ns = 0;
  // The q|k|v epilogue (GemvProblem::rope; register-ring kernel, one CTA per row block = one
  // head): the QK-norm + RoPE + KV write of each block's head, q, k and v pointing into y.
  QkNormRopeArgs rope;
  // Register ring, 16-row tier under ":xt" (GemvVariant::x_tensor): x as a 2-D bf16 tensor map
  // (k innermost, then the m rows; boxes of 64 k x 16 rows, 128-byte swizzle) that the kernel, taking
  // Params as a __grid_constant__, hands to the copy engine. Unused (zero) elsewhere.
  CUtensorMap x_map;
};

__device__ __forceinline__ void mma_bf16(float (&d)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                                         uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

__device__ __forceinline__ uint32_t word(const uint4& v, int i) {
  return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}

// The fp32 value of weight row `row` from its fp32 sum (the scale, then the bias); explicit _rn
// intrinsics so no instantiation contracts differently.
__device__ __forceinline__ float output_value(const Params& p, int row, float sum) {
  float v = sum;
  if (p.scale_kind == static_cast<int>(GemvScale::kPerTensor)) v = __fmul_rn(v, __ldg(p.scale));
  if (p.scale_kind == static_cast<int>(GemvScale::kPerChannel)) v = __fmul_rn(v, __ldg(p.scale + row));
  if (p.bias != nullptr) v = __fadd_rn(v, __ldg(p.bias + row));
  return v;
}

// Final value of (row, col) from its fp32 sum, stored to y.
__device__ __forceinline__ void store_output(const Params& p, int row, int col, float sum) {
  const float v = output_value(p, row, sum);
  const int64_t offset = static_cast<int64_t>(col) * p.y_stride + row;
  if (p.y_f32) {
    static_cast<float*>(p.y)[offset] = v;
  } else if (p.y_add) {  // the residual add of launch_add_rms_norm, bit for bit
    __nv_bfloat16* y = static_cast<__nv_bfloat16*>(p.y) + offset;
    *y = __float2bfloat16_rn(__bfloat162float(*y) + __bfloat162float(__float2bfloat16_rn(v)));
  } else {
    static_cast<__nv_bfloat16*>(p.y)[offset] = __float2bfloat16_rn(v);
  }
}

// The A fragment (m16n8k16 layout: a0 row g, a1 row g + 8, a2 / a3 the same rows 8 logical k
// later) of MMA q of a 64-k half, from this thread's weight vectors of that half in load order
// (fp8: {row g, row g+8}; bf16: {row g lo, row g hi, row g+8 lo, row g+8 hi}).
template <bool kFp8, bool kBitTrick>
__device__ __forceinline__ void weight_fragment(const uint4* w, int q, uint32_t (&a)[4]) {
  if constexpr (kFp8) {
    const uint32_t r0 = word(w[0], q);
    const uint32_t r1 = word(w[1], q);
    if constexpr (kBitTrick) {
      fp8x4_to_bf16x4_bits(r0, a[0], a[2]);
      fp8x4_to_bf16x4_bits(r1, a[1], a[3]);
    } else {
      fp8x4_to_bf16x4(r0, a[0], a[2]);
      fp8x4_to_bf16x4(r1, a[1], a[3]);
    }
  } else {
    a[0] = word(w[0 + (q >> 1)], (q & 1) * 2);
    a[2] = word(w[0 + (q >> 1)], (q & 1) * 2 + 1);
    a[1] = word(w[2 + (q >> 1)], (q & 1) * 2);
    a[3] = word(w[2 + (q >> 1)], (q & 1) * 2 + 1);
  }
}

// Four 8x8 b16 matrices from shared memory (ldmatrix .x4): lane 8i + r gives the address of matrix
// i's row r and receives out.{x,y,z,w} from matrices 0..3; every lane of the warp must call it.
__device__ __forceinline__ void ldmatrix_x4(uint4& out, const void* row) {
  const unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(row));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(out.x), "=r"(out.y), "=r"(out.z), "=r"(out.w)
               : "r"(addr));
}

// This thread's x fragments of one 64-k half for gemv_half: xv[cg][p] word 2 * (q & 1) + j is b_j
// of MMA q = 2p + (q & 1) for column cg * 8 + g (zero past m). x sits in shared memory with column
// col's k of the half at half + col * pitch (bf16, natural order, 16-byte aligned rows).
// fp8: two ldmatrix .x4 a column group, matrix i of pair p being natural k 32p + 8i .. +7 of
// columns cg*8 .. cg*8+7 (lane 8i + r gives row r's address; columns past m read column m - 1,
// whose values reach only the lanes that zero them). bf16: the thread's own 16 k at c * 16.
template <int kColGroups, bool kFp8>
__device__ __forceinline__ void load_x_half(uint4 (&xv)[kColGroups][2], const uint8_t* half, int pitch, int m) {
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int g = lane >> 2, c = lane & 3;
#pragma unroll
  for (int cg = 0; cg < kColGroups; ++cg) {
    const int col = cg * 8 + g;
    if constexpr (kFp8) {
      const int row_col = min(cg * 8 + (lane & 7), m - 1);
      const uint8_t* row = half + row_col * pitch + (lane >> 3) * 16;
      ldmatrix_x4(xv[cg][0], row);
      ldmatrix_x4(xv[cg][1], row + 64);
      if (col >= m) xv[cg][0] = xv[cg][1] = make_uint4(0, 0, 0, 0);
    } else if (col < m) {
      const uint8_t* src = half + col * pitch + c * 32;
      xv[cg][0] = *reinterpret_cast<const uint4*>(src);
      xv[cg][1] = *reinterpret_cast<const uint4*>(src + 16);
    } else {
      xv[cg][0] = make_uint4(0, 0, 0, 0);
      xv[cg][1] = make_uint4(0, 0, 0, 0);
    }
  }
}

// One 64-k half of a step: w holds this thread's weight vectors of half h in load order
// (weight_fragment); xv[cg] the x fragments of column cg*8+g for the same MMAs (load_x_half; zero
// for absent columns). Adds into part.
template <int kColGroups, bool kFp8, bool kBitTrick>
__device__ __forceinline__ void gemv_half(float (&part)[kColGroups][4], const uint4* w,
                                          const uint4 (&xv)[kColGroups][2]) {
#pragma unroll
  for (int q = 0; q < 4; ++q) {
    uint32_t a[4];
    weight_fragment<kFp8, kBitTrick>(w, q, a);
#pragma unroll
    for (int cg = 0; cg < kColGroups; ++cg) {
      const uint32_t b0 = word(xv[cg][q >> 1], (q & 1) * 2);
      const uint32_t b1 = word(xv[cg][q >> 1], (q & 1) * 2 + 1);
      mma_bf16(part[cg], a[0], a[1], a[2], a[3], b0, b1);
    }
  }
}

// Each step's partial joins the running sum with one fma: times its 128x128 block scale, or
// times 1 (an exact add) for the other kinds, whose scale applies at the end.
template <int kColGroups>
__device__ __forceinline__ void accumulate_step(float (&acc)[kColGroups][4],
                                                const float (&part)[kColGroups][4], float sc) {
#pragma unroll
  for (int cg = 0; cg < kColGroups; ++cg) {
#pragma unroll
    for (int i = 0; i < 4; ++i) acc[cg][i] = __fmaf_rn(part[cg][i], sc, acc[cg][i]);
  }
}

// Adds value to *word at GPU scope with release and acquire semantics; returns the old value.
__device__ __forceinline__ int add_acq_rel(int* word, int value) {
  int old;
  asm volatile("atom.acq_rel.gpu.global.add.s32 %0, [%1], %2;" : "=r"(old) : "l"(word), "r"(value) : "memory");
  return old;
}

// The split-K arrival: adds 1 to *counter at GPU scope with release and acquire semantics and
// returns the old value. Called by one thread after a CTA barrier, it publishes the CTA's partial
// writes (release is cumulative over what the barrier made it observe) and, for the last CTA to
// arrive, makes every earlier CTA's partials visible to the threads that read them after the next
// barrier (the barrier orders them after this acquire). It replaces a __threadfence (fence.sc.gpu)
// on each side of a relaxed atomicAdd.
__device__ __forceinline__ int arrive_acq_rel(int* counter) { return add_acq_rel(counter, 1); }

// The shared split-K sum's bookkeeping (register ring, Params::split_sum_all), two words per row
// block b: counters[b] counts arrivals (bits 0-7) and has bit 8 + j set if split j left its share
// (row quads [j * 32 / ksplit, (j + 1) * 32 / ksplit)) to the last CTA to arrive;
// counters[kSplitDeparturesOffset + b] counts the CTAs done with counters[b]. Both are 0 at kernel
// boundaries: the last CTA to depart puts them back. gemv_launch keeps such launches to
// blocks <= kSplitDeparturesOffset and ksplit <= 16.
//
// Every CTA arrives (acquire-release) once its partials are written. The last to arrive sees every
// partial, and in the value its arrival returns, every share left so far: it sums those and its
// own. Every other CTA waits (acquire) up to Params::split_sum_wait_ns for all arrivals and then
// sums its own share. If the wait runs out it sets its bit in the same word: if the value that
// returns shows every CTA arrived, the last has already read the word and this CTA sums its share
// after all; otherwise the last arrival comes later in the word's order and will see the bit. So
// the common path costs no round trip more than the last split summing alone, no CTA waits without
// bound on one that may not be resident, and every share is summed exactly once (the same adds in
// the same order whoever sums it: the same bytes).
inline constexpr int kSplitDeparturesOffset = kGemvCounterCount / 2;

__device__ __forceinline__ uint64_t global_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ int load_acquire(const int* word) {
  int v;
  asm volatile("ld.acquire.gpu.global.s32 %0, [%1];" : "=r"(v) : "l"(word) : "memory");
  return v;
}

// Called by one thread of split `split`'s CTA after the barrier that follows its partial writes:
// arrives and returns the shares (bit j: share j) the CTA sums.
__device__ __forceinline__ uint32_t arrive_for_shares(const Params& p, int block, int split) {
  int* const word = p.counters + block;
  const int own = 1 << split;
  const int seen = arrive_acq_rel(word);
  if ((seen & 0xff) == p.ksplit - 1) return static_cast<uint32_t>(own | seen >> 8);  // the last
  const uint64_t deadline = global_ns() + p.split_sum_wait_ns;
  for (;;) {
    if ((load_acquire(word) & 0xff) == p.ksplit) return static_cast<uint32_t>(own);
    if (global_ns() >= deadline) break;
    __nanosleep(32);
  }
  return (add_acq_rel(word, own << 8) & 0xff) == p.ksplit ? static_cast<uint32_t>(own) : 0u;
}

// Called by one thread of every CTA after its last access to counters[block]; the last to depart
// puts the block's two words back to 0 (acquire-release: after every other CTA's last access).
__device__ __forceinline__ void depart(const Params& p, int block) {
  int* const departures = p.counters + kSplitDeparturesOffset + block;
  if (add_acq_rel(departures, 1) == p.ksplit - 1) {
    p.counters[block] = 0;
    *departures = 0;
  }
}

__device__ __forceinline__ float4 add_rn(const float4& a, const float4& b) {
  return make_float4(__fadd_rn(a.x, b.x), __fadd_rn(a.y, b.y), __fadd_rn(a.z, b.z), __fadd_rn(a.w, b.w));
}

// The 16-row tier's split-K sum of one 128-row block, run by the last CTA to arrive (threads
// [0, kSumThreads)):
// output (row_base + r, col) = partial 0 + partial 1 + ... + partial count-1, in that order, where
// partial j of (r, col) is at source_at(j)[col * col_stride + r], handed to store(row, col, sum). A thread
// takes quads of 4 consecutive rows of one column (32 per column; m = 16 gives 512, two per thread of 256),
// and requests the float4s of kInFlight quads from kBatch partials before adding any: one L2 round trip per
// kBatch partials and kInFlight quads, where one output at a time cost a round trip per output (eight per
// thread at m = 16). The adds are the plain loop's in the plain order, so the bytes are too. kInFlight and
// kBatch trade registers for round trips. col_stride and every source_at(j) must keep quads 16-byte aligned
// (the register ring's n when n % 4 == 0). The balanced kernels keep their scalar sum (flush_segment): it
// runs inside their segment loop, and this one made the 16-row balanced instantiations spill 136-336 bytes
// inline and more out of line (ptxas -v, CUDA 13.0).
template <int kSumThreads, int kMaxCols, int kInFlight, int kBatch, typename SourceAt, typename Store>
__device__ __forceinline__ void sum_partials_in_order(const Params& p, int row_base, int count,
                                                      int64_t col_stride, SourceAt source_at, Store store) {
  constexpr int kQuadsPerCol = 128 / 4;  // a block's 128 rows (kRowsPerCta, kBalancedRows) as quads
  constexpr int kQuads = (kQuadsPerCol * kMaxCols + kSumThreads - 1) / kSumThreads;
#pragma unroll
  for (int u0 = 0; u0 < kQuads; u0 += kInFlight) {
    int q[kInFlight];
    bool live[kInFlight];
    int64_t offset[kInFlight];
    float4 sum[kInFlight];
#pragma unroll
    for (int u = 0; u < kInFlight; ++u) {
      q[u] = static_cast<int>(threadIdx.x) + (u0 + u) * kSumThreads;
      live[u] = u0 + u < kQuads && q[u] < kQuadsPerCol * p.m && row_base + (q[u] % kQuadsPerCol) * 4 < p.n;
      offset[u] = (q[u] / kQuadsPerCol) * col_stride + (q[u] % kQuadsPerCol) * 4;
      sum[u] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
    for (int j0 = 0; j0 < count; j0 += kBatch) {
      float4 v[kInFlight][kBatch];
#pragma unroll
      for (int u = 0; u < kInFlight; ++u) {
#pragma unroll
        for (int b = 0; b < kBatch; ++b) {
          if (live[u] && j0 + b < count)
            v[u][b] = __ldcg(reinterpret_cast<const float4*>(source_at(j0 + b) + offset[u]));
        }
      }
#pragma unroll
      for (int u = 0; u < kInFlight; ++u) {
#pragma unroll
        for (int b = 0; b < kBatch; ++b) {
          if (live[u] && j0 + b < count) sum[u] = j0 + b == 0 ? v[u][b] : add_rn(sum[u], v[u][b]);
        }
      }
    }
#pragma unroll
    for (int u = 0; u < kInFlight; ++u) {
      if (!live[u]) continue;
      const int col = q[u] / kQuadsPerCol;
      const int row = row_base + (q[u] % kQuadsPerCol) * 4;
      const float lanes[4] = {sum[u].x, sum[u].y, sum[u].z, sum[u].w};
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        if (row + e < p.n) store(row + e, col, lanes[e]);
      }
    }
  }
}

// The 16- and 32-row tiers' shared split-K sum (Params::split_sum_all): row quads [q0, q1) of
// every column of a 128-row block that lie in the shares in `shares` (bit j: quads
// [j * 32 / ksplit, (j + 1) * 32 / ksplit); quad q is in share ((q + 1) * ksplit - 1) / 32), each
// summed partial 0 + partial 1 + ... in index order as sum_partials_in_order does (the same adds,
// so the same bytes), from partials laid out as the ring writes them (split j's at
// p.partials + j * kMaxCols * p.n, column stride p.n; n % 4 == 0). Threads take the range's
// quads x m columns in turn and request up to 8 partials before adding: one share's quads x m is
// at most 256 at m = 16 (any K split) and at m = 32 from 4 splits, so one quad a thread and, up to
// 8 splits, one L2 round trip.
template <int kSumThreads, int kMaxCols, typename Store>
__device__ __forceinline__ void sum_partial_shares(const Params& p, int row_base, int q0, int q1, uint32_t shares,
                                                   Store store) {
  constexpr int kQuadsPerCol = 128 / 4;
  constexpr int kBatch = 8;
  const int quads = q1 - q0;
  const int64_t split_stride = static_cast<int64_t>(kMaxCols) * p.n;
  for (int i = threadIdx.x; i < quads * p.m; i += kSumThreads) {
    const int col = i / quads;
    const int quad = q0 + i % quads;
    const int row = row_base + quad * 4;
    if (((shares >> (((quad + 1) * p.ksplit - 1) / kQuadsPerCol)) & 1u) == 0 || row >= p.n) continue;
    const float* src = p.partials + static_cast<int64_t>(col) * p.n + row;
    float4 sum = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    for (int j0 = 0; j0 < p.ksplit; j0 += kBatch) {
      float4 v[kBatch];
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        if (j0 + b < p.ksplit) v[b] = __ldcg(reinterpret_cast<const float4*>(src + (j0 + b) * split_stride));
      }
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        if (j0 + b < p.ksplit) sum = j0 + b == 0 ? v[b] : add_rn(sum, v[b]);
      }
    }
    const float lanes[4] = {sum.x, sum.y, sum.z, sum.w};
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      if (row + e < p.n) store(row + e, col, lanes[e]);
    }
  }
}

// The register ring's split-K slots (GemvWorkspace::split_slots). A slot is one 64-bit word: a
// partial sum's fp32 bits in the low half, kSlotFull in the high half, 0 when empty. It is written
// and read with relaxed accesses at GPU scope of whole 64-bit words, each single-copy atomic, so a
// reader that sees the flag sees the value with it: no fence, no counter, no barrier before the
// sum. Every slot is empty at a kernel boundary (zeroed at creation; the CTA that reads a slot
// empties it, and the next launch writes it only after its chained-launch wait). Layout: split j,
// row block b, token row col, local weight row r at ((j * blocks + b) * 16 + col) * 128 + r.
inline constexpr uint32_t kSlotFull = 1;

__device__ __forceinline__ int64_t split_slot_index(int split, int blocks, int block, int col,
                                                    int local_row) {
  return ((static_cast<int64_t>(split) * blocks + block) * 16 + col) * 128 + local_row;
}

__device__ __forceinline__ void put_slot(uint64_t* slot, float value) {
  const uint64_t word = (static_cast<uint64_t>(kSlotFull) << 32) | __float_as_uint(value);
  asm volatile("st.relaxed.gpu.global.b64 [%0], %1;" ::"l"(slot), "l"(word) : "memory");
}

__device__ __forceinline__ bool slot_full(uint64_t word) {
  return static_cast<uint32_t>(word >> 32) == kSlotFull;
}
__device__ __forceinline__ float slot_value(uint64_t word) {
  return __uint_as_float(static_cast<uint32_t>(word));
}

// kRows (1 or 2) consecutive slots, read or emptied with one access (2: 16-byte aligned).
template <int kRows>
__device__ __forceinline__ void peek_slots(const uint64_t* slot, uint64_t (&word)[kRows]) {
  if constexpr (kRows == 1) {
    asm volatile("ld.relaxed.gpu.global.b64 %0, [%1];" : "=l"(word[0]) : "l"(slot) : "memory");
  } else {
    asm volatile("ld.relaxed.gpu.global.v2.b64 {%0, %1}, [%2];"
                 : "=l"(word[0]), "=l"(word[1])
                 : "l"(slot)
                 : "memory");
  }
}
template <int kRows>
__device__ __forceinline__ void empty_slots(uint64_t* slot) {
  if constexpr (kRows == 1) {
    asm volatile("st.relaxed.gpu.global.b64 [%0], %1;" ::"l"(slot), "l"(uint64_t{0}) : "memory");
  } else {
    asm volatile("st.relaxed.gpu.global.v2.b64 [%0], {%1, %1};" ::"l"(slot), "l"(uint64_t{0}) : "memory");
  }
}

// The split-K sum of one 128-row block of the register ring, run by its reducing CTA (split
// count - 1, the block's last CTA in launch order; threads [0, kSumThreads)): output (local row r,
// col) = slot 0 + slot 1 + ... + slot count-2 + own, in that order, where slot j of (r, col) is
// slot_at(j)[col * 128 + r] and own[col * 128 + r] the reducing CTA's own partial, handed to
// store(r, col, sum) for r < rows. A thread takes kInFlight items of kRows consecutive rows at a
// time and requests kBatch splits of each before adding any; until every requested slot is full
// it requests the empty ones again, all at once (one L2 round trip per poll, not one per slot).
// The adds are those of the counter-based sum, in the same order, so the bytes are too.
// Precondition: `rows` is a multiple of kRows (an item reaching past it would wait forever for a
// slot no split writes); gemv_ring_ksplit never splits an odd n, so tier 4's pairs always fit.
template <int kSumThreads, int kRows, int kInFlight, int kBatch, typename SlotAt, typename Store>
__device__ __forceinline__ void sum_split_slots(int m, int rows, int count, const float* own, SlotAt slot_at,
                                                Store store) {
  constexpr int kItemsPerCol = 128 / kRows;
  const int items = kItemsPerCol * m;
  for (int i0 = static_cast<int>(threadIdx.x); i0 < items; i0 += kInFlight * kSumThreads) {
    int offset[kInFlight];
    bool live[kInFlight];
    float sum[kInFlight][kRows];
#pragma unroll
    for (int u = 0; u < kInFlight; ++u) {
      const int i = i0 + u * kSumThreads;
      offset[u] = (i / kItemsPerCol) * 128 + (i % kItemsPerCol) * kRows;
      live[u] = i < items && (i % kItemsPerCol) * kRows < rows;
    }
    for (int j0 = 0; j0 < count - 1; j0 += kBatch) {
      uint64_t word[kInFlight][kBatch][kRows];
      auto requested = [&](int u, int b) { return live[u] && j0 + b < count - 1; };
#pragma unroll
      for (int u = 0; u < kInFlight; ++u) {
#pragma unroll
        for (int b = 0; b < kBatch; ++b) {
          if (requested(u, b)) peek_slots<kRows>(slot_at(j0 + b) + offset[u], word[u][b]);
        }
      }
      for (;;) {
        bool all_full = true;
#pragma unroll
        for (int u = 0; u < kInFlight; ++u) {
#pragma unroll
          for (int b = 0; b < kBatch; ++b) {
#pragma unroll
            for (int e = 0; e < kRows; ++e) all_full &= !requested(u, b) || slot_full(word[u][b][e]);
          }
        }
        if (all_full) break;
#pragma unroll
        for (int u = 0; u < kInFlight; ++u) {
#pragma unroll
          for (int b = 0; b < kBatch; ++b) {
            bool empty = false;
#pragma unroll
            for (int e = 0; e < kRows; ++e) empty |= requested(u, b) && !slot_full(word[u][b][e]);
            if (empty) peek_slots<kRows>(slot_at(j0 + b) + offset[u], word[u][b]);
          }
        }
      }
#pragma unroll
      for (int u = 0; u < kInFlight; ++u) {
#pragma unroll
        for (int b = 0; b < kBatch; ++b) {
          if (!requested(u, b)) continue;
          empty_slots<kRows>(slot_at(j0 + b) + offset[u]);
#pragma unroll
          for (int e = 0; e < kRows; ++e) {
            const float v = slot_value(word[u][b][e]);
            sum[u][e] = j0 + b == 0 ? v : __fadd_rn(sum[u][e], v);
          }
        }
      }
    }
#pragma unroll
    for (int u = 0; u < kInFlight; ++u) {
      if (!live[u]) continue;
#pragma unroll
      for (int e = 0; e < kRows; ++e) {
        const int r = offset[u] % 128 + e;
        if (r < rows) store(r, offset[u] / 128, __fadd_rn(sum[u][e], own[offset[u] + e]));
      }
    }
  }
}

// Balanced kernels (stream, balanced register ring): CTA b owns units [b * cta_units, ...) of
// the flattened (128-row block, 128-k step) space. Partial slots: two per CTA, [16 cols][128 rows]
// (kSlotFloats), or [32 cols][128 rows] in the balanced ring's 32-row tier (slot_floats).
inline constexpr int kBalancedRows = 128;
inline constexpr int kSlotFloats = kBalancedRows * 16;
template <int kColGroups>
inline constexpr int slot_floats = kColGroups > 2 ? kBalancedRows * 32 : kSlotFloats;

// Ends this CTA's segment of row `block` (its units within [begin, end)): stores the rows if
// the CTA covered the whole block, otherwise writes the partial (slot 0 for the CTA's first
// block, slot 1 for its last) and, if it is the block's last CTA to arrive, sums the block's
// segments in CTA (= K) order. Called by threads [0, kSyncThreads) (16 rows per warp) together.
// acc[cg][i]: row warp*16 + g + (i >= 2 ? 8 : 0) of the block, column cg*8 + 2c + (i & 1).
template <int kColGroups, int kSyncThreads>
__device__ __forceinline__ void flush_segment(const Params& p, const float (&acc)[kColGroups][4],
                                              int64_t block, int64_t begin, int64_t end, int warp, int lane,
                                              int* last_arrival) {
  const int g = lane >> 2;
  const int c = lane & 3;
  const int m = p.m;
  const int64_t ks = p.ksteps;
  const int64_t block_begin = block * ks;
  const int64_t block_end = block_begin + ks;
  const int row_base = static_cast<int>(block) * kBalancedRows;
  if (begin <= block_begin && end >= block_end) {
#pragma unroll
    for (int cg = 0; cg < kColGroups; ++cg) {
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int row = row_base + warp * 16 + g + (i >= 2 ? 8 : 0);
        const int col = cg * 8 + 2 * c + (i & 1);
        if (row < p.n && col < m) store_output(p, row, col, acc[cg][i]);
      }
    }
    return;
  }
  const int my_slot = block == begin / ks ? 0 : 1;
  constexpr int kSlot = slot_floats<kColGroups>;
  float* slot_ptr = p.partials + (static_cast<int64_t>(blockIdx.x) * 2 + my_slot) * kSlot;
#pragma unroll
  for (int cg = 0; cg < kColGroups; ++cg) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int rl = warp * 16 + g + (i >= 2 ? 8 : 0);
      const int col = cg * 8 + 2 * c + (i & 1);
      if (col < m) __stcg(slot_ptr + col * kBalancedRows + rl, acc[cg][i]);
    }
  }
  asm volatile("bar.sync 1, %0;" ::"n"(kSyncThreads) : "memory");
  const int64_t cta_first = block_begin / p.cta_units;
  const int64_t cta_last = (block_end - 1) / p.cta_units;
  if (threadIdx.x == 0)
    *last_arrival = arrive_acq_rel(p.counters + cta_first) == static_cast<int>(cta_last - cta_first);
  asm volatile("bar.sync 1, %0;" ::"n"(kSyncThreads) : "memory");
  if (!*last_arrival) return;
  // Every CTA after the first starts inside the block, so its partial is in slot 0; the first
  // CTA's is in slot 0 only when the block is also its first.
  const int first_slot = (cta_first * p.cta_units) / ks == block ? 0 : 1;
  for (int i = threadIdx.x; i < kBalancedRows * m; i += kSyncThreads) {
    const int rl = i % kBalancedRows;
    const int col = i / kBalancedRows;
    const int row = row_base + rl;
    if (row >= p.n) continue;
    // Loads in batches of 8 independent L2 reads, then the ordered adds.
    float sum = 0.0f;
    for (int64_t base = cta_first; base <= cta_last; base += 8) {
      float v[8];
#pragma unroll
      for (int u = 0; u < 8; ++u) {
        const int64_t cta = base + u;
        const int s = cta == cta_first ? first_slot : 0;
        v[u] = cta <= cta_last ? __ldcg(p.partials + (cta * 2 + s) * kSlot + col * kBalancedRows + rl) : 0.0f;
      }
#pragma unroll
      for (int u = 0; u < 8; ++u) {
        if (base + u <= cta_last) sum = base + u == cta_first ? v[u] : __fadd_rn(sum, v[u]);
      }
    }
    store_output(p, row, col, sum);
  }
  if (threadIdx.x == 0) p.counters[cta_first] = 0;
}

}  // namespace lathe::cuda::gemv_detail
