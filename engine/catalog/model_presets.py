"""Model presets for the training-step model: published shapes and a published default layout.

Each preset holds a transformer's shape (layers, width, FFN, heads, vocabulary, experts) and
the parallelism layout it was trained with in a public recipe or paper, so that
``train PRESET`` works without further input. Every number carries its provenance in
`ModelPreset.provenance`: the key of a source in `SOURCES` (with what the source says), or
an explicit assumption saying why the value is reasonable. `check_provenance` refuses a
preset with an unsourced figure, as the device catalog does.

The layout fields are defaults: a `TrainingJob` (engine.model.scenario) overrides any of them, and
``TrainingJob.overrides`` replaces shape fields by name (``{"layers": 48}``).

The module is one piece because it is a table of data: the sources and the presets that cite
them, each figure beside its citation, so a reviewer checks a preset against its paper in one
place; it grows by one preset function at a time.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from engine.catalog.devices import Source

SOURCES: dict[str, Source] = {
    s.key: s
    for s in (
        Source(
            "brown2020",
            "Brown et al., 'Language Models are Few-Shot Learners' (GPT-3), arXiv 2005.14165, Table 2.1",
            "https://arxiv.org/abs/2005.14165",
            "2020-05",
            "H",
        ),
        Source(
            "mlcommons-gpt3",
            "MLCommons training reference, large_language_model/megatron-lm/run_gpt3.sh (commit 52b7253d)",
            "https://github.com/mlcommons/training/blob/master/large_language_model/megatron-lm/run_gpt3.sh",
            "2022-11",
            "H",
        ),
        Source(
            "megatron-sc21",
            "Narayanan et al., 'Efficient Large-Scale Language Model Training on GPU Clusters Using "
            "Megatron-LM', SC'21, arXiv 2104.04473 (Table 2; eq. 3; sections 2.2 and 4.1)",
            "https://arxiv.org/abs/2104.04473",
            "2021-04",
            "H",
        ),
        Source(
            "megatron-vocab",
            "NVIDIA Megatron-LM tokenizer: vocabulary padded to a multiple of "
            "make-vocab-size-divisible-by (128) x tensor-parallel size (_vocab_size_with_padding)",
            "https://github.com/NVIDIA/Megatron-LM/blob/main/megatron/training/tokenizer/tokenizer.py",
            "2023",
            "H",
        ),
        Source(
            "llama3",
            "Llama Team, AI @ Meta, 'The Llama 3 Herd of Models', arXiv 2407.21783 (Table 3 shapes, "
            "Table 4 405B parallelism, section 3.3.2)",
            "https://arxiv.org/abs/2407.21783",
            "2024-07",
            "H",
        ),
        Source(
            "nemo-llama3-70b",
            "NVIDIA NeMo recipe nemo/collections/llm/recipes/llama3_70b.py (commit 0189a3b3)",
            "https://github.com/NVIDIA/NeMo/blob/main/nemo/collections/llm/recipes/llama3_70b.py",
            "2024",
            "H",
        ),
        Source(
            "mixtral",
            "Jiang et al., 'Mixtral of Experts', arXiv 2401.04088 (Table 1)",
            "https://arxiv.org/abs/2401.04088",
            "2024-01",
            "H",
        ),
        Source(
            "mt-nlg",
            "Smith et al., 'Using DeepSpeed and Megatron to Train Megatron-Turing NLG 530B', "
            "arXiv 2201.11990 (section 3: 105 layers, hidden 20,480, 128 heads, sequence 2,048)",
            "https://arxiv.org/abs/2201.11990",
            "2022-01",
            "H",
        ),
        Source(
            "nemo-mixtral",
            "NVIDIA NeMo recipe nemo/collections/llm/recipes/mixtral_8x7b.py (commit 0067c7b5)",
            "https://github.com/NVIDIA/NeMo/blob/main/nemo/collections/llm/recipes/mixtral_8x7b.py",
            "2024",
            "H",
        ),
    )
}


@dataclass(frozen=True)
class Provenance:
    """Where one preset figure came from: a source key with what it says, or an assumption."""

    source: str | None
    note: str

    def text(self) -> str:
        """A one-line human-readable origin."""
        if self.source is None:
            return self.note
        s = SOURCES[self.source]
        return f"{s.title} ({s.published}) {s.url}: {self.note}"


@dataclass(frozen=True)
class ModelPreset:
    """A transformer's published shape and the layout it was trained with.

    Shape: `layers`, `d_model`, `ffn` (hidden width of one MLP or one expert), `heads`,
    `kv_heads` (grouped-query attention when fewer than `heads`), `vocab`, `gated_mlp`
    (SwiGLU: three FFN matrices instead of two), `experts` (0 for a dense model), `top_k`
    (experts per token), `tied_embeddings` (input and output embedding share weights),
    `position_embeddings` (learned absolute positions, 0 for rotary).
    Layout: `tp`, `pp`, `cp`, `ep`, `virtual_stages` (interleaved 1F1B chunks per stage),
    `micro_batch` and `global_batch` (sequences), `seq_len` (tokens per sequence),
    `sequence_parallel`, `zero_stage`, `pp_outermost` (Megatron's rank order
    tp-cp-ep-dp-pp when true, Llama 3's tp-cp-pp-dp when false), `reference_gpus` (the GPU
    count the layout was published for).
    """

    id: str
    name: str
    layers: int
    d_model: int
    ffn: int
    heads: int
    kv_heads: int
    vocab: int
    gated_mlp: bool
    experts: int
    top_k: int
    tied_embeddings: bool
    position_embeddings: int
    seq_len: int
    tp: int
    pp: int
    cp: int
    ep: int
    virtual_stages: int
    micro_batch: int
    global_batch: int
    sequence_parallel: bool
    zero_stage: int
    pp_outermost: bool
    reference_gpus: int
    provenance: dict[str, Provenance] = field(default_factory=dict)

    @property
    def moe(self) -> bool:
        """Whether the MLPs are mixtures of experts."""
        return self.experts > 1


# Fields every preset must source (all but identity and the provenance map itself).
SOURCED_FIELDS = tuple(
    f.name for f in fields(ModelPreset) if f.name not in ("id", "name", "provenance")
)
# Shape fields a `TrainingJob.overrides` entry may replace (whole numbers).
SHAPE_FIELDS = (
    "layers",
    "d_model",
    "ffn",
    "heads",
    "kv_heads",
    "vocab",
    "experts",
    "top_k",
    "position_embeddings",
)


def _p(source: str | None, note: str) -> Provenance:
    return Provenance(source, note)


def _gpt3_175b() -> ModelPreset:
    sc21 = "Table 2, GPT-3 175B with PTD-P: TP 8, PP 12, batch 1536, micro-batch 1, 384-1536 A100s"
    return ModelPreset(
        id="gpt3-175b",
        name="GPT-3 175B",
        layers=96,
        d_model=12288,
        ffn=4 * 12288,
        heads=96,
        kv_heads=96,
        vocab=51200,
        gated_mlp=False,
        experts=0,
        top_k=1,
        tied_embeddings=True,
        position_embeddings=2048,
        seq_len=2048,
        tp=8,
        pp=12,
        cp=1,
        ep=1,
        virtual_stages=1,
        micro_batch=1,
        global_batch=1536,
        sequence_parallel=False,
        zero_stage=0,
        pp_outermost=True,
        reference_gpus=1536,
        provenance={
            "layers": _p("mlcommons-gpt3", "--num-layers 96 (Brown et al. Table 2.1: n_layers 96)"),
            "d_model": _p("mlcommons-gpt3", "--hidden-size 12288 (Brown et al.: d_model 12288)"),
            "ffn": _p(
                "brown2020", "feed-forward layer four times the bottleneck: d_ff = 4 d_model"
            ),
            "heads": _p("mlcommons-gpt3", "--num-attention-heads 96"),
            "kv_heads": _p("brown2020", "multi-head attention: one key/value head per query head"),
            "vocab": _p(
                "megatron-vocab",
                "GPT-2 BPE 50,257 tokens (Brown et al.) padded to 51,200 = 50 x 128 x TP 8",
            ),
            "gated_mlp": _p("brown2020", "GPT-2 style MLP, two matrices with GeLU"),
            "experts": _p("brown2020", "dense model"),
            "top_k": _p("brown2020", "dense model: every token through the one MLP"),
            "tied_embeddings": _p(
                None,
                "assumption: Megatron's GPT shares the input embedding with the output layer "
                "unless --untie-embeddings-and-output-weights is given (run_gpt3.sh does not)",
            ),
            "position_embeddings": _p("mlcommons-gpt3", "--max-position-embeddings 2048 (learned)"),
            "seq_len": _p("mlcommons-gpt3", "--seq-length 2048 (Brown et al.: n_ctx 2048)"),
            "tp": _p("megatron-sc21", sc21),
            "pp": _p("megatron-sc21", sc21),
            "cp": _p("megatron-sc21", "no context parallelism in the paper"),
            "ep": _p("megatron-sc21", "dense model, no expert parallelism"),
            "virtual_stages": _p(
                None,
                "assumption: the plain 1F1B schedule (no interleaving); Table 2 does not state "
                "an interleaving depth",
            ),
            "micro_batch": _p("megatron-sc21", sc21),
            "global_batch": _p("megatron-sc21", sc21 + " (mlcommons GBS 1536 too)"),
            "sequence_parallel": _p("megatron-sc21", "sequence parallelism postdates the paper"),
            "zero_stage": _p(
                "megatron-sc21", "PTD-P keeps the optimizer replicated (compared with ZeRO-3)"
            ),
            "pp_outermost": _p(
                "megatron-sc21",
                "Megatron places tensor-parallel ranks innermost, pipeline outermost",
            ),
            "reference_gpus": _p("megatron-sc21", sc21),
        },
    )


def _llama3_70b() -> ModelPreset:
    t3 = (
        "Table 3: 80 layers, model dimension 8,192, FFN 28,672, 64 heads, 8 KV heads, vocab 128,256"
    )
    nemo = "trainer(): TP 4, PP 4, virtual PP 5, CP 2, sequence parallel; data: seq 8192, GBS 512, MBS 1; 4 nodes x 8 GPUs"
    return ModelPreset(
        id="llama3-70b",
        name="Llama 3 70B",
        layers=80,
        d_model=8192,
        ffn=28672,
        heads=64,
        kv_heads=8,
        vocab=128256,
        gated_mlp=True,
        experts=0,
        top_k=1,
        tied_embeddings=False,
        position_embeddings=0,
        seq_len=8192,
        tp=4,
        pp=4,
        cp=2,
        ep=1,
        virtual_stages=5,
        micro_batch=1,
        global_batch=512,
        sequence_parallel=True,
        zero_stage=1,
        pp_outermost=True,
        reference_gpus=32,
        provenance={
            "layers": _p("llama3", t3),
            "d_model": _p("llama3", t3),
            "ffn": _p("llama3", t3),
            "heads": _p("llama3", t3),
            "kv_heads": _p("llama3", t3),
            "vocab": _p("llama3", t3),
            "gated_mlp": _p("llama3", "SwiGLU activation (section 3.2)"),
            "experts": _p("llama3", "dense Transformer (section 3.2)"),
            "top_k": _p("llama3", "dense model"),
            "tied_embeddings": _p(
                None,
                "assumption: separate input embedding and output layer, as in the released "
                "weights (tie_word_embeddings false)",
            ),
            "position_embeddings": _p("llama3", "RoPE (Table 3), no learned position table"),
            "seq_len": _p("nemo-llama3-70b", nemo + " (Llama 3 pre-trains at 8K, section 3.4)"),
            "tp": _p("nemo-llama3-70b", nemo),
            "pp": _p("nemo-llama3-70b", nemo),
            "cp": _p("nemo-llama3-70b", nemo),
            "ep": _p("nemo-llama3-70b", "dense model"),
            "virtual_stages": _p("nemo-llama3-70b", nemo),
            "micro_batch": _p("nemo-llama3-70b", nemo),
            "global_batch": _p("nemo-llama3-70b", nemo),
            "sequence_parallel": _p("nemo-llama3-70b", nemo),
            "zero_stage": _p(
                "nemo-llama3-70b",
                "distributed_fused_adam: Megatron's distributed optimizer (optimizer state "
                "sharded, gradients reduce-scattered, parameters all-gathered)",
            ),
            "pp_outermost": _p("nemo-llama3-70b", "MegatronStrategy: Megatron-core rank order"),
            "reference_gpus": _p("nemo-llama3-70b", nemo),
        },
    )


def _llama3_405b() -> ModelPreset:
    t3 = "Table 3: 126 layers, model dimension 16,384, FFN 53,248, 128 heads, 8 KV heads, vocab 128,256"
    t4 = "Table 4, 16,384 GPUs at 8K: TP 8, CP 1, PP 16, DP 128, seq 8,192, batch 16 per DP, 16M tokens per batch"
    return ModelPreset(
        id="llama3-405b",
        name="Llama 3.1 405B",
        layers=126,
        d_model=16384,
        ffn=53248,
        heads=128,
        kv_heads=8,
        vocab=128256,
        gated_mlp=True,
        experts=0,
        top_k=1,
        tied_embeddings=False,
        position_embeddings=0,
        seq_len=8192,
        tp=8,
        pp=16,
        cp=1,
        ep=1,
        virtual_stages=1,
        micro_batch=1,
        global_batch=2048,
        sequence_parallel=True,
        zero_stage=2,
        pp_outermost=False,
        reference_gpus=16384,
        provenance={
            "layers": _p("llama3", t3),
            "d_model": _p("llama3", t3),
            "ffn": _p("llama3", t3),
            "heads": _p("llama3", t3),
            "kv_heads": _p("llama3", t3),
            "vocab": _p("llama3", t3),
            "gated_mlp": _p("llama3", "SwiGLU activation (section 3.2)"),
            "experts": _p("llama3", "dense Transformer; MoE deliberately not used (section 3.2)"),
            "top_k": _p("llama3", "dense model"),
            "tied_embeddings": _p(
                None,
                "assumption: separate input embedding and output layer, as in the released "
                "weights (tie_word_embeddings false)",
            ),
            "position_embeddings": _p("llama3", "RoPE (Table 3), no learned position table"),
            "seq_len": _p("llama3", t4),
            "tp": _p("llama3", t4),
            "pp": _p("llama3", t4),
            "cp": _p("llama3", t4),
            "ep": _p("llama3", "dense model"),
            "virtual_stages": _p(
                None,
                "assumption: 1 (plain 1F1B). Meta runs an interleaved schedule (section 3.3.2) "
                "but does not publish its depth, so the bubble here is an upper bound",
            ),
            "micro_batch": _p(
                None,
                "assumption: 1 sequence of 8,192 tokens per micro-batch; Table 4 gives 16 "
                "sequences per data-parallel rank per step but not the micro-batch size",
            ),
            "global_batch": _p("llama3", t4 + ": 16 x 128 = 2,048 sequences"),
            "sequence_parallel": _p(
                None,
                "assumption: tensor parallelism with sequence parallelism, as in Megatron-style "
                "stacks; the paper does not say",
            ),
            "zero_stage": _p(
                "llama3",
                "FSDP shards optimizer and gradients; parameters are not resharded after the "
                "forward pass (section 3.3.2), i.e. one parameter all-gather and one gradient "
                "reduce-scatter per step: modelled as stage 2",
            ),
            "pp_outermost": _p(
                "llama3", "ranks ordered [TP, CP, PP, DP]: data parallel outermost (section 3.3.2)"
            ),
            "reference_gpus": _p("llama3", t4),
        },
    )


def _mt_nlg_530b() -> ModelPreset:
    shape = "105 layers, hidden 20,480, 128 attention heads, sequence 2,048 (section 3)"
    sc21 = "Table 2, 530B with PTD-P: TP 8, PP 35, batch 2,240, 560-2,240 A100s"
    return ModelPreset(
        id="mt-nlg-530b",
        name="Megatron-Turing NLG 530B",
        layers=105,
        d_model=20480,
        ffn=4 * 20480,
        heads=128,
        kv_heads=128,
        vocab=51200,
        gated_mlp=False,
        experts=0,
        top_k=1,
        tied_embeddings=True,
        position_embeddings=2048,
        seq_len=2048,
        tp=8,
        pp=35,
        cp=1,
        ep=1,
        virtual_stages=1,
        micro_batch=1,
        global_batch=2240,
        sequence_parallel=False,
        zero_stage=0,
        pp_outermost=True,
        reference_gpus=2240,
        provenance={
            "layers": _p("mt-nlg", shape),
            "d_model": _p("mt-nlg", shape),
            "ffn": _p("megatron-sc21", "GPT architecture: feed-forward four times the hidden size"),
            "heads": _p("mt-nlg", shape),
            "kv_heads": _p("mt-nlg", "multi-head attention: one key/value head per query head"),
            "vocab": _p("megatron-sc21", "all models use a vocabulary of 51,200 (section 5.1)"),
            "gated_mlp": _p("mt-nlg", "GPT-style MLP with GeLU"),
            "experts": _p("mt-nlg", "dense model"),
            "top_k": _p("mt-nlg", "dense model"),
            "tied_embeddings": _p(
                None, "assumption: Megatron's GPT ties the output layer to the input embedding"
            ),
            "position_embeddings": _p("mt-nlg", "learned absolute positions over 2,048 tokens"),
            "seq_len": _p("mt-nlg", shape),
            "tp": _p("megatron-sc21", sc21),
            "pp": _p("megatron-sc21", sc21),
            "cp": _p("megatron-sc21", "no context parallelism in the paper"),
            "ep": _p("megatron-sc21", "dense model"),
            "virtual_stages": _p(
                None, "assumption: plain 1F1B; Table 2 does not state an interleaving depth"
            ),
            "micro_batch": _p(
                None, "assumption: 1 sequence per micro-batch, as the paper's GPT-3 175B rows"
            ),
            "global_batch": _p("megatron-sc21", sc21),
            "sequence_parallel": _p("megatron-sc21", "sequence parallelism postdates the paper"),
            "zero_stage": _p("megatron-sc21", "PTD-P keeps the optimizer replicated"),
            "pp_outermost": _p("megatron-sc21", "pipeline outermost in Megatron's rank order"),
            "reference_gpus": _p("megatron-sc21", sc21),
        },
    )


def _mixtral_8x7b() -> ModelPreset:
    t1 = "Table 1: dim 4096, n_layers 32, hidden_dim 14336, n_heads 32, n_kv_heads 8, vocab_size 32000, num_experts 8, top_k_experts 2"
    nemo = "trainer(): TP 1, PP 4, virtual PP 8, EP 8, sequence parallel; data: seq 8192, GBS 512, MBS 1; 8 nodes x 8 GPUs"
    return ModelPreset(
        id="mixtral-8x7b",
        name="Mixtral 8x7B",
        layers=32,
        d_model=4096,
        ffn=14336,
        heads=32,
        kv_heads=8,
        vocab=32000,
        gated_mlp=True,
        experts=8,
        top_k=2,
        tied_embeddings=False,
        position_embeddings=0,
        seq_len=8192,
        tp=1,
        pp=4,
        cp=1,
        ep=8,
        virtual_stages=8,
        micro_batch=1,
        global_batch=512,
        sequence_parallel=True,
        zero_stage=1,
        pp_outermost=True,
        reference_gpus=64,
        provenance={
            "layers": _p("mixtral", t1),
            "d_model": _p("mixtral", t1),
            "ffn": _p("mixtral", t1),
            "heads": _p("mixtral", t1),
            "kv_heads": _p("mixtral", t1),
            "vocab": _p("mixtral", t1),
            "gated_mlp": _p("mixtral", "experts are SwiGLU blocks (section 2.1)"),
            "experts": _p("mixtral", t1),
            "top_k": _p("mixtral", t1),
            "tied_embeddings": _p(
                None,
                "assumption: separate input embedding and output layer, as in the released "
                "weights (tie_word_embeddings false)",
            ),
            "position_embeddings": _p(
                "mixtral", "Mistral 7B's architecture (rotary positions), no learned table"
            ),
            "seq_len": _p(
                "nemo-mixtral",
                nemo + ". The paper's context_len is 32,768 (Table 1); the training sequence "
                "length of the published recipe is used here",
            ),
            "tp": _p("nemo-mixtral", nemo),
            "pp": _p("nemo-mixtral", nemo),
            "cp": _p("nemo-mixtral", nemo),
            "ep": _p("nemo-mixtral", nemo),
            "virtual_stages": _p("nemo-mixtral", nemo),
            "micro_batch": _p("nemo-mixtral", nemo),
            "global_batch": _p("nemo-mixtral", nemo),
            "sequence_parallel": _p("nemo-mixtral", nemo),
            "zero_stage": _p(
                "nemo-mixtral", "distributed_fused_adam: Megatron's distributed optimizer"
            ),
            "pp_outermost": _p("nemo-mixtral", "MegatronStrategy: Megatron-core rank order"),
            "reference_gpus": _p("nemo-mixtral", nemo),
        },
    )


MODEL_PRESETS: dict[str, ModelPreset] = {
    p.id: p for p in (_gpt3_175b(), _llama3_70b(), _llama3_405b(), _mixtral_8x7b(), _mt_nlg_530b())
}


def model_names() -> list[str]:
    """Ids of the model presets, default (GPT-3 175B) first."""
    return list(MODEL_PRESETS)


def get_model(model_id: str) -> ModelPreset:
    """The preset `model_id` (KeyError when unknown)."""
    return MODEL_PRESETS[model_id]


def _unsourced(prov: Provenance | None) -> bool:
    if prov is None or not prov.note:
        return True
    if prov.source is None:
        return not prov.note.startswith("assumption:")
    return prov.source not in SOURCES


def check_provenance(preset: ModelPreset) -> list[str]:
    """Fields of `preset` without a source or assumption, or naming an unknown source."""
    return [name for name in SOURCED_FIELDS if _unsourced(preset.provenance.get(name))]
