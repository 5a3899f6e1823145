"""How long one GPU's kernels take for one transformer layer: matmuls by shape, attention, streams.

A flat "share of peak" hides what decides compute time. Here each kernel class runs at what the
GPU sustains for it, from the catalog (engine.catalog, each figure sourced):

* **matmuls** (QKV, projection, MLP, experts, output layer) on a roofline: the larger of the
  FLOPs at the GPU's measured matmul ceiling (``matmul_bf16_tflops``, not the datasheet peak)
  and the bytes of the three operands at its achieved HBM bandwidth, so a thin GEMM (small
  micro-batch, wide TP, many small experts) runs below the ceiling, as it does on the card.
  The compute side is quantized as cuBLAS runs it (NVIDIA's Matrix Multiplication Background
  guide, section 3): output tiles of ``gemm_tile``, one per SM per wave, so a GEMM pays for
  whole waves. The ceiling is the rate with every SM busy: it was found by a brute-force
  search over shapes, whose best one is where cuBLAS's own tiles fill the waves;
* **attention** fused (FlashAttention-class: causal blocks skipped, the backward 2.5x the
  forward's FLOPs) at ``attention_efficiency`` of peak, or unfused (Megatron before 2022:
  batched score and context matmuls on the roofline plus the softmax, mask and dropout passes
  over the ``s x s`` scores through HBM);
* **FP8 training** (Transformer Engine style) runs the linear layers' matmuls at the GPU's FP8
  ceiling with one-byte inputs, attention and the rest in BF16;
* **streaming kernels** (norms, residual adds, activation function, rotary embedding) at HBM
  bandwidth x ``hbm_efficiency``; tensors split by TP, and by sequence parallelism for the
  ``d_model``-wide ones.

The backward pass is the forward's matmuls twice (input and weight gradients), attention's
backward and the streams twice. Kernel launch gaps and overlap between kernels are not
modelled. tests/engine/training/test_kernels.py checks the roofline and the wave fill
against figures worked out by hand from the catalog.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from engine.catalog.devices import Catalog
from engine.catalog.model_presets import ModelPreset

BF16 = 2.0  # bytes per activation or weight element
SOFTMAX_PASS_BYTES = 9.0  # per score: softmax read+write (4), dropout read+write+mask (5)
FLASH_BACKWARD_FLOPS = 2.5  # FlashAttention's backward: 5 matmuls against the forward's 2
CAUSAL_SHARE = 0.5  # a fused causal kernel skips the masked half of the score blocks
CROSS_ENTROPY_BYTES = 6.0  # per logit: read bf16 logits, write fp32 probabilities


@dataclass(frozen=True)
class GpuSpeed:
    """What one GPU sustains per kernel class (SI: FLOP/s and bytes/s)."""

    peak_flops: float  # dense BF16 datasheet peak (MFU's denominator)
    matmul_flops: float  # matmul rate with every SM busy (the measured ceiling)
    attention_flops: float  # fused attention kernel
    stream_bytes_per_s: float  # achieved HBM bandwidth
    sm_count: int
    tile: tuple[int, int]
    operand_bytes: float = BF16  # bytes per matmul input element
    fp8: GpuSpeed | None = None  # the same GPU running its matmuls in FP8, when it can

    @classmethod
    def of(cls, catalog: Catalog, gpu_id: str) -> GpuSpeed:
        """The speeds of catalog GPU `gpu_id`."""
        gpu = catalog.get(gpu_id, "gpu")
        peak = float(gpu.value("bf16_dense_tflops")) * 1e12
        sms = int(gpu.value("sm_count"))
        tile_m, tile_n = (int(x) for x in gpu.value("gemm_tile"))
        tile = (tile_m, tile_n)
        bf16 = cls(
            peak_flops=peak,
            matmul_flops=float(gpu.value("matmul_bf16_tflops")) * 1e12,
            sm_count=sms,
            tile=tile,
            attention_flops=peak * float(gpu.value("attention_efficiency")),
            stream_bytes_per_s=float(gpu.value("hbm_bw_TBps"))
            * 1e12
            * float(gpu.value("hbm_efficiency")),
        )
        if not gpu.has("matmul_fp8_tflops"):
            return bf16
        fp8 = replace(
            bf16,
            matmul_flops=float(gpu.value("matmul_fp8_tflops")) * 1e12,
            operand_bytes=1.0,
        )
        return replace(bf16, fp8=fp8)


def wave_fill(m: float, n: float, sms: int, tile: tuple[int, int], batch: float = 1.0) -> float:
    """Share of the SMs' tile slots `batch` (m x n) outputs keep busy (better tile orientation).

    Tiles cover each output (a partial tile costs a whole one); the tiles of one launch run
    one per SM per wave (a partial last wave idles the rest): useful area over area paid for.
    """
    best = 0.0
    for tm, tn in (tile, tile[::-1]):
        tiles = batch * math.ceil(m / tm) * math.ceil(n / tn)
        waves = math.ceil(tiles / sms)
        best = max(best, batch * m * n / (waves * sms * tm * tn))
    return best


def gemm_s(
    m: float, n: float, k: float, gpu: GpuSpeed, count: float = 1.0, batched: bool = False
) -> float:
    """Seconds of `count` (m x k) @ (k x n) matmuls on the quantized roofline (inputs of
    `gpu.operand_bytes`, a bf16 output).

    `batched`: the `count` matmuls are one strided-batched launch (attention's per-head
    matmuls), whose tiles share the waves; otherwise each is its own launch.
    """
    if m <= 0 or n <= 0 or k <= 0 or count <= 0:
        return 0.0
    flops = 2.0 * m * n * k
    moved = gpu.operand_bytes * (m * k + k * n) + BF16 * m * n
    launch = count if batched else 1.0
    fill = wave_fill(m, n, gpu.sm_count, gpu.tile, launch)
    return count * max(flops / (gpu.matmul_flops * fill), moved / gpu.stream_bytes_per_s)


@dataclass(frozen=True)
class Shard:
    """What one GPU holds of a layer: tokens of its micro-batch and its parallel splits."""

    tokens: float  # tokens of one micro-batch on this rank (micro_batch x seq / cp)
    seq_len: int  # keys each query attends over (the whole sequence)
    micro_batch: int
    tp: int
    ep: int
    sequence_parallel: bool
    flash_attention: bool
    expert_load: float = 1.0  # busiest expert rank's tokens over the mean (MoE)


@dataclass(frozen=True)
class LayerTimes:
    """Forward seconds of one layer for one micro-batch, by kernel class."""

    matmul_s: float
    attention_s: float
    attention_backward_s: float
    stream_s: float

    @property
    def forward_s(self) -> float:
        """Forward seconds."""
        return self.matmul_s + self.attention_s + self.stream_s

    @property
    def backward_s(self) -> float:
        """Backward seconds: input and weight gradients of the matmuls, attention, streams."""
        return 2.0 * self.matmul_s + self.attention_backward_s + 2.0 * self.stream_s

    @property
    def weight_grad_s(self) -> float:
        """The weight-gradient matmuls of the backward (what a zero-bubble schedule defers)."""
        return self.matmul_s


def _widths(model: ModelPreset) -> tuple[int, int, int]:
    head_dim = model.d_model // model.heads
    return head_dim, model.heads * head_dim, model.kv_heads * head_dim


def _matmuls_s(model: ModelPreset, sh: Shard, gpu: GpuSpeed) -> float:
    d, t = model.d_model, sh.tp
    _, q_w, kv_w = _widths(model)
    m = sh.tokens
    total = gemm_s(m, (q_w + 2 * kv_w) / t, d, gpu) + gemm_s(m, d, q_w / t, gpu)
    up = (2 if model.gated_mlp else 1) * model.ffn / t
    if model.moe:
        local = model.experts / sh.ep
        # tokens of one local expert: the mean, times the busiest rank's load (or padding)
        per_expert = m * model.top_k * sh.ep / model.experts * sh.expert_load
        total += gemm_s(m, model.experts, d, gpu)  # router
        total += gemm_s(per_expert, up, d, gpu, local) + gemm_s(
            per_expert, d, model.ffn / t, gpu, local
        )
    else:
        total += gemm_s(m, up, d, gpu) + gemm_s(m, d, model.ffn / t, gpu)
    return total


def _attention_s(model: ModelPreset, sh: Shard, gpu: GpuSpeed) -> tuple[float, float]:
    """(forward, backward) seconds of the attention core (scores, softmax, context)."""
    head_dim, _, _ = _widths(model)
    heads = model.heads / sh.tp
    if sh.flash_attention:
        flops = 4.0 * sh.tokens * sh.seq_len * head_dim * heads * CAUSAL_SHARE
        forward = flops / gpu.attention_flops
        return forward, FLASH_BACKWARD_FLOPS * forward
    queries = sh.tokens / sh.micro_batch  # queries of one sequence on this rank
    count = sh.micro_batch * heads
    scores = gemm_s(queries, sh.seq_len, head_dim, gpu, count, batched=True)
    context = gemm_s(queries, head_dim, sh.seq_len, gpu, count, batched=True)
    softmax = count * queries * sh.seq_len * SOFTMAX_PASS_BYTES / gpu.stream_bytes_per_s
    forward = scores + context + softmax
    return forward, 2.0 * forward


def _stream_s(model: ModelPreset, sh: Shard, gpu: GpuSpeed) -> float:
    d, t = model.d_model, sh.tp
    _, q_w, kv_w = _widths(model)
    wide = (2 * 4.0 * d + 2 * 6.0 * d) / (t if sh.sequence_parallel else 1)  # 2 norms, 2 adds
    routed = model.top_k * sh.expert_load if model.moe else 1.0
    act_elements = (3 if model.gated_mlp else 2) * model.ffn / t * routed
    rotary = 4.0 * (q_w + kv_w) / t if model.position_embeddings == 0 else 0.0
    per_token = wide + BF16 * act_elements + rotary
    return sh.tokens * per_token / gpu.stream_bytes_per_s


def layer_times(
    model: ModelPreset, sh: Shard, gpu: GpuSpeed, matmul_gpu: GpuSpeed | None = None
) -> LayerTimes:
    """Forward kernel seconds of one transformer layer for one micro-batch on one GPU.

    `matmul_gpu` times the linear layers (the FP8 speeds under FP8 training); attention and
    the memory-bound kernels stay at `gpu`'s BF16 speeds.
    """
    attention, attention_backward = _attention_s(model, sh, gpu)
    return LayerTimes(
        matmul_s=_matmuls_s(model, sh, matmul_gpu or gpu),
        attention_s=attention,
        attention_backward_s=attention_backward,
        stream_s=_stream_s(model, sh, gpu),
    )


def output_layer_s(model: ModelPreset, sh: Shard, gpu: GpuSpeed) -> tuple[float, float]:
    """(forward, backward) seconds of the output layer and its loss for one micro-batch."""
    vocab = model.vocab / sh.tp
    matmul = gemm_s(sh.tokens, vocab, model.d_model, gpu)
    loss = sh.tokens * vocab * CROSS_ENTROPY_BYTES / gpu.stream_bytes_per_s
    return matmul + loss, 2.0 * matmul + loss
