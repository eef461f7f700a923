#pragma once
// The compiled geometries of the split-K decode kernel (paged_attention_splitk.cuh) and the switch
// from a variant number to one of them; included by the per-KV-dtype instantiation files
// (paged_attention_splitk_bf16.cu, paged_attention_splitk_fp8.cu).
#include "backends/cuda/paged_attention_splitk.cuh"
#include "backends/cuda/paged_attention_splitk_persistent.cuh"

namespace lathe::cuda::attn::splitk {

// The compiled variants (selected by splitk_kernel_variant(), paged_attention.h). W x S x T and
// CTAs per SM, at HD 128 (HD 256; HD 64):
//   0: 4 x 3 x 4096/HD, 1 per SM, block ids loaded per copy (the issue loop of 0007e55)
//   1: as 0 with staged block ids (all below stage them)
//   2: 8 x 3 x 16, 1 per SM (6 x 2 x 16; 8 x 2 x 32)
//   3: 4 x 3 x 16, 2 per SM (2 x 3 x 16; 4 x 3 x 32)
//   4: 12 x 2 x 16, 1 per SM (6 x 2 x 16; 8 x 2 x 32)
//   5: 6 x 2 x 16, 2 per SM (3 x 2 x 16; 4 x 2 x 32)
//   6: 4 x 2 x 16, 3 per SM (2 x 2 x 16; 4 x 2 x 32), FP8 at HD 256 and 64 one warp fewer or 2 per SM
//   7: 5 in clusters of 2
//   8: 5 in clusters of 4
//   9: 5, 7 or 8 by shape (paged_attention_splitk.cu resolve_variant)
//  10: 5 with 4 stages, 1 per SM (the same warps and tiles, so the same bytes as 5; twice the
//      copies in flight per warp where an SM holds only one CTA anyway)
//  11: 5, or 10 when the grid has at most one CTA per SM (resolve_variant); bytes of 5 either way
//  12: 5 whose CTAs may run several slices of a split in turn (kSliceLoop; the launcher takes it
//      only when one CTA per slice would exceed two CTAs per SM, else 5); bytes of 5 either way
//  13: 5's warps, stages and CTAs per SM with tensor copies (a tile's K and V rows arrive as
//      HD * bytes / 128 boxes each, issued by one lane; tiles cut at multiples of 16 positions,
//      so their own bytes); HD 128 and 256 with power-of-two blocks of >= 16 positions (the
//      launcher gives other shapes variant 5)
//  14: the same for 6's geometry (other shapes: 6)
//  15: 13 with 4 stages, 1 per SM (13's bytes; other shapes: 10)
//  16: 13, or 15 when the grid has at most one CTA per SM (resolve_variant); 13's bytes either way
//  17: 14 with 3 stages at 2 CTAs per SM (FP8, half the bytes per tile: 4 stages at 14's CTAs per
//      SM); 14's bytes (other shapes: 6)
//  18: tensor copies with 32-position tiles (two boxes per piece): 3 x 2 x 32, 2 per SM, at HD 128
//      (HD 256: 13; other shapes: 5)
//  19: the same at 2 x 2 x 32, 3 per SM (HD 256: 14; other shapes: 6)
//  20: tensor copies, 12 x 2 x 16 at one CTA per SM (6 x 2 x 16; other shapes: 4): twice 13's
//      warps on each split, for grids of at most one CTA per SM (a single-sequence serve)
//  21: tensor copies, 6 x 2 x 32 at one CTA per SM, HD 128 (HD 256: 20; other shapes: 4): 13's
//      warps with two-box tiles, the same aim
//  22: 14 on a persistent grid (paged_attention_splitk_persistent.cuh): its CTAs share out the
//      launch's units, each warp one copy stream across them; 14's bytes. Built for BF16 KV at HD
//      128, where it measured faster than 14 at batch >= 16 (session 20); elsewhere, and for
//      sliced launches, it launches 14 (other shapes: 6); so does a launch whose units fit one
//      wave (one unit a CTA either way), whose last round would run on fewer than half the SMs or
//      whose sequences have more than 8 splits (launch_persistent, persistent_grid_pays)
//  23: 21 (HD 256: 20) with positions as the MMA rows (SplitCfg::kPosRows: half the MMAs a tile;
//      query heads <= 8 a CTA, the launcher's cap): its own bytes (other shapes: 4)
//  24: 14 with positions as the MMA rows, its own bytes (other shapes: 6)
//  25: 24 on the persistent grid, 24's bytes (as 22 is to 14: BF16 KV at HD 128, unsliced, more
//      units than one wave, a last round on at least half the SMs and at most 8 splits; else it
//      launches 24)
//  26: 20 with positions as the MMA rows: 12 x 2 x 16 at one CTA per SM, HD 128 (HD 256: 23), its
//      own bytes (other shapes: 4)
//  27: 14 with FP8 KV at HD 128 and 8 query heads a CTA, else 25 (resolve_variant in
//      paged_attention_splitk.cu): opt-in, for wide serves of long contexts with an FP8 cache
//  28: 25 with FP8 KV on the persistent grid too (HD 128, unsliced; else 24), 24's bytes: opt-in;
//      level with 24 on the mean (H100, session 58: +2.4 points on 1152/1280-unit grids at 4k,
//      up to 2.1 slower at batch 4-8)
//  29: 26 with 16 warps where the cache is FP8 at HD 128 (16 x 2 x 16 at one CTA per SM: an FP8
//      tile's 4 KB stages leave room for a third more warps, whose batch-1 tiles are bound by
//      each warp's instruction latency); its own bytes there, 26's elsewhere. Opt-in (session 69)
//  30: 26 with 32-position tiles where the cache is FP8 at HD 128 (12 x 2 x 32 at one CTA per
//      SM: half the online-softmax updates and output rescales a position); its own bytes
//      there, 26's elsewhere. Opt-in (session 69)
template <typename Kv, int HD>
struct Variants {
  static constexpr bool kFp8 = Kv::kDType == KvDType::kFP8E4M3;
  using V0 = SplitCfg<4, 3, 4096 / HD, 1, false>;
  using V1 = SplitCfg<4, 3, 4096 / HD, 1, true>;
  using V2 = SplitCfg<(HD == 256 ? 6 : 8), (HD == 128 ? 3 : 2), (HD == 64 ? 32 : 16), 1, true>;
  using V3 = SplitCfg<(HD == 256 ? 2 : 4), 3, (HD == 64 ? 32 : 16), 2, true>;
  using V4 = SplitCfg<(HD == 128 ? 12 : (HD == 256 ? 6 : 8)), 2, (HD == 64 ? 32 : 16), 1, true>;
  using V5 = SplitCfg<(HD == 128 ? 6 : (HD == 256 ? 3 : 4)), 2, (HD == 64 ? 32 : 16), 2, true>;
  using V6 = SplitCfg<(HD == 256 ? 2 : (HD == 64 && kFp8 ? 3 : 4)), 2, (HD == 64 ? 32 : 16),
                      (HD == 256 && kFp8 ? 2 : 3), true>;
  using V7 = SplitCfg<V5::kWarps, 2, V5::kTile, 2, true, 2>;
  using V8 = SplitCfg<V5::kWarps, 2, V5::kTile, 2, true, 4>;
  using V10 = SplitCfg<V5::kWarps, 4, V5::kTile, 1, true>;
  using V12 = SplitCfg<V5::kWarps, 2, V5::kTile, 2, true, 1, true>;
  using V13 = SplitCfg<V5::kWarps, 2, 16, 2, true, 1, false, true>;
  using V14 = SplitCfg<V6::kWarps, 2, 16, V6::kCtasPerSm, true, 1, false, true>;
  using V15 = SplitCfg<V5::kWarps, 4, 16, 1, true, 1, false, true>;
  using V17 = SplitCfg<V6::kWarps, kFp8 ? 4 : 3, 16, kFp8 ? V6::kCtasPerSm : 2, true, 1, false, true>;
  using V18 = SplitCfg<3, 2, 32, 2, true, 1, false, true>;
  using V19 = SplitCfg<2, 2, 32, 3, true, 1, false, true>;
  using V20 = SplitCfg<(HD == 256 ? 6 : 12), 2, 16, 1, true, 1, false, true>;
  using V21 = SplitCfg<6, 2, 32, 1, true, 1, false, true>;
  using V23 = SplitCfg<6, 2, (HD == 256 ? 16 : 32), 1, true, 1, false, true, true>;
  using V24 = SplitCfg<V6::kWarps, 2, 16, V6::kCtasPerSm, true, 1, false, true, true>;
  using V26 = SplitCfg<12, 2, 16, 1, true, 1, false, true, true>;
  using V29 = SplitCfg<16, 2, 16, 1, true, 1, false, true, true>;
  using V30 = SplitCfg<12, 2, 32, 1, true, 1, false, true, true>;
};

// Whether the tensor-copy geometries (13-21) serve this shape: whole 128-byte pieces per row (HD
// 128 and 256 in either KV dtype), a block size that is a power of two of at least one 16-row box.
inline bool tensor_copies_ok(int32_t head_dim, int32_t block_size, int32_t block_shift) {
  return (head_dim == 128 || head_dim == 256) && block_shift >= 4 && block_size == (1 << block_shift);
}

// Whether a staged-id geometry serves this block size: a power of two, and a tile spans at most
// 32 blocks (one id per lane).
template <typename Cfg>
bool staged_ids_ok(int32_t block_size, int32_t block_shift) {
  return block_shift >= 0 && (Cfg::kTile + block_size - 1) / block_size + 1 <= 32;
}

template <typename Kv, int HD>
cudaError_t launch_variant(int variant, const SplitParams& sp, int32_t num_seqs, cudaStream_t stream) {
  using V = Variants<Kv, HD>;
  const int32_t bs = sp.base.block_size, shift = sp.block_shift;
  switch (variant) {  // a block size a staged-id variant does not serve takes variant 0
    case 1:
      if (staged_ids_ok<typename V::V1>(bs, shift)) return launch_main<Kv, HD, typename V::V1>(sp, num_seqs, stream);
      break;
    case 2:
      if (staged_ids_ok<typename V::V2>(bs, shift)) return launch_main<Kv, HD, typename V::V2>(sp, num_seqs, stream);
      break;
    case 3:
      if (staged_ids_ok<typename V::V3>(bs, shift)) return launch_main<Kv, HD, typename V::V3>(sp, num_seqs, stream);
      break;
    case 4:
      if (staged_ids_ok<typename V::V4>(bs, shift)) return launch_main<Kv, HD, typename V::V4>(sp, num_seqs, stream);
      break;
    case 5:
      if (staged_ids_ok<typename V::V5>(bs, shift)) return launch_main<Kv, HD, typename V::V5>(sp, num_seqs, stream);
      break;
    case 6:
      if (staged_ids_ok<typename V::V6>(bs, shift)) return launch_main<Kv, HD, typename V::V6>(sp, num_seqs, stream);
      break;
    case 7:
      if (staged_ids_ok<typename V::V7>(bs, shift)) return launch_main<Kv, HD, typename V::V7>(sp, num_seqs, stream);
      break;
    case 8:
      if (staged_ids_ok<typename V::V8>(bs, shift)) return launch_main<Kv, HD, typename V::V8>(sp, num_seqs, stream);
      break;
    case 10:
      if (staged_ids_ok<typename V::V10>(bs, shift)) return launch_main<Kv, HD, typename V::V10>(sp, num_seqs, stream);
      break;
    case 12:
      if (staged_ids_ok<typename V::V12>(bs, shift)) return launch_main<Kv, HD, typename V::V12>(sp, num_seqs, stream);
      break;
    case 13:
    case 14:
    case 15:
    case 17:
    case 18:
    case 19:
    case 20:
    case 21:
    case 22:
    case 23:
    case 24:
    case 25:
    case 26:
    case 28:
    case 29:
    case 30:
      // The launcher passes these only for shapes tensor_copies_ok admits (with the maps encoded).
      if constexpr (HD == 128 || HD == 256) {
        if (variant >= 23) {  // positions as the MMA rows
          if constexpr (HD == 128) {
            if constexpr (V::kFp8) {
              if (variant == 29) return launch_main<Kv, HD, typename V::V29>(sp, num_seqs, stream);
              if (variant == 30) return launch_main<Kv, HD, typename V::V30>(sp, num_seqs, stream);
            }
            if (variant == 26 || variant == 29 || variant == 30) {
              return launch_main<Kv, HD, typename V::V26>(sp, num_seqs, stream);
            }
          }
          if (variant == 23 || variant == 26 || variant == 29 || variant == 30) {
            return launch_main<Kv, HD, typename V::V23>(sp, num_seqs, stream);
          }
          if constexpr (HD == 128) {
            if ((variant == 28 || (variant == 25 && !V::kFp8)) && sp.slices == 1) {
              return launch_persistent<Kv, HD, typename V::V24>(sp, num_seqs, device_sm_count(), stream);
            }
          }
          return launch_main<Kv, HD, typename V::V24>(sp, num_seqs, stream);
        }
        if (variant == 22) {
          if constexpr (HD == 128 && !V::kFp8) {
            if (sp.slices == 1) return launch_persistent<Kv, HD, typename V::V14>(sp, num_seqs, device_sm_count(), stream);
          }
          return launch_main<Kv, HD, typename V::V14>(sp, num_seqs, stream);
        }
        if (variant == 20 || (variant == 21 && HD == 256)) {
          return launch_main<Kv, HD, typename V::V20>(sp, num_seqs, stream);
        }
        if (variant == 21) {
          if constexpr (HD == 128) return launch_main<Kv, HD, typename V::V21>(sp, num_seqs, stream);
        }
        if (variant == 18) {
          if constexpr (HD == 128) return launch_main<Kv, HD, typename V::V18>(sp, num_seqs, stream);
          return launch_main<Kv, HD, typename V::V13>(sp, num_seqs, stream);
        }
        if (variant == 19) {
          if constexpr (HD == 128) return launch_main<Kv, HD, typename V::V19>(sp, num_seqs, stream);
          return launch_main<Kv, HD, typename V::V14>(sp, num_seqs, stream);
        }
        if (variant == 13) return launch_main<Kv, HD, typename V::V13>(sp, num_seqs, stream);
        if (variant == 14) return launch_main<Kv, HD, typename V::V14>(sp, num_seqs, stream);
        if (variant == 17) return launch_main<Kv, HD, typename V::V17>(sp, num_seqs, stream);
        return launch_main<Kv, HD, typename V::V15>(sp, num_seqs, stream);
      }
      break;
    default:
      break;
  }
  return launch_main<Kv, HD, typename V::V0>(sp, num_seqs, stream);
}

}  // namespace lathe::cuda::attn::splitk
