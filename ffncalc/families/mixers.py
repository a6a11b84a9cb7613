"""Sequence mixers that carry a fixed-size state instead of attending over the context, written once.

Each builder lays out a mixer's projections, convolutions and parameters under the names a family
passes, and derives its recurrent state and the FLOPs of updating it per token (2 FLOPs per
multiply-add, as everywhere; the projections and convolutions are counted by the engine).
"""

from __future__ import annotations

from ..spec import Component, Conv, Mixer, Names, Norm, Norms, Parameter, Projection


def mamba2_names(module: str) -> Names:
    """Where transformers' Mamba-2 mixers keep their parts, under MODULE ("mixer.", "mamba.")."""
    parts = ("in_proj", "conv1d", "dt_bias", "A_log", "D", "norm", "out_proj")
    return Names(tuple((part, module + part) for part in parts))


def mamba(
    hidden: int,
    inner: int,
    state: int,
    dt_rank: int,
    kernel: int,
    names: Names,
    proj_bias: bool = False,
    conv_bias: bool = True,
    dt_bc_norms: bool = False,
) -> Mixer:
    """Mamba (Gu & Dao 2023, the selective scan; Falcon-Mamba, Jamba): in_proj emits x and the gate z (inner
    each); a depthwise conv over x; x_proj gives the time step's low-rank input (dt_rank) and B, C (state each);
    dt_proj (dt_rank → inner, with a bias); A_log [inner, state] and D [inner]; out_proj. With dt_bc_norms
    (Jamba), RMSNorms over dt's input, B and C (dt_layernorm, b_layernorm, c_layernorm).

    State: inner · state. Per token, for each element of h_t = exp(Δ·A)·h_{t−1} + (Δ·x)·B and y = h·C: the
    discretisation Δ·A (1 multiply; the exp is not counted, as activations are not), the decay (1 multiply), the
    input (Δ·x once per channel, then ·B: 1 multiply, 1 add) and the readout h·C (1 multiply-add, 2 FLOPs):
    6 FLOPs per element.
    """
    state_elements = inner * state
    norms: Norms = ()
    if dt_bc_norms:
        norms = (
            (names["dt_norm"], Norm("rmsnorm", dt_rank)),
            (names["b_norm"], Norm("rmsnorm", state)),
            (names["c_norm"], Norm("rmsnorm", state)),
        )
    return Mixer(
        kind="mamba",
        projections=(
            Projection("in_proj", names["in_proj"], hidden, 2 * inner, proj_bias),
            Projection("x_proj", names["x_proj"], inner, dt_rank + 2 * state),
            Projection("dt_proj", names["dt_proj"], dt_rank, inner, bias=True),
            Projection("out_proj", names["out_proj"], inner, hidden, proj_bias),
        ),
        convs=(Conv(names["conv1d"], inner, kernel, conv_bias),),
        parameters=(
            Parameter("mixer", "A_log, D", names["A_log"], (inner, state)),
            Parameter("mixer", "A_log, D", names["D"], (inner,)),
        ),
        norms=norms,
        state_elements=state_elements,
        state_update_flops=6 * state_elements,
    )


def multi_head_mamba(
    hidden: int,
    heads: int,
    inner: int,
    state: int,
    dt_rank: int,
    kernel: int,
    module: str,
    proj_bias: bool,
    conv_bias: bool,
) -> Mixer:
    """Zamba's Mamba: Mamba's selective scan with the inner channels split into heads, each with its own x_proj
    (head width → dt_rank + 2 · state) and dt_proj (dt_rank → head width, with a bias), stored as stacked tensors
    under MODULE: x_proj_weight [heads, dt_rank + 2 · state, inner / heads], dt_proj_weight [heads, inner / heads,
    dt_rank], dt_proj_bias, A_log [heads, inner / heads, state], D. in_proj (hidden → 2 · inner), a depthwise conv and
    out_proj as Mamba's.

    State and its update: Mamba's, inner · state elements at 6 FLOPs each (see ``mamba``).
    """
    head_dim = inner // heads
    state_elements = inner * state
    return Mixer(
        kind="mamba",
        projections=(
            Projection("in_proj", module + "in_proj", hidden, 2 * inner, proj_bias),
            Projection("out_proj", module + "out_proj", inner, hidden, proj_bias),
        ),
        convs=(Conv(module + "conv1d", inner, kernel, conv_bias),),
        parameters=(
            Parameter("mixer", "x_proj", module + "x_proj_weight", (heads, dt_rank + 2 * state, head_dim), matmul=True),
            Parameter("mixer", "dt_proj", module + "dt_proj_weight", (heads, head_dim, dt_rank), matmul=True),
            Parameter("mixer", "dt_proj", module + "dt_proj_bias", (heads, head_dim)),
            Parameter("mixer", "A_log, D", module + "A_log", (heads, head_dim, state)),
            Parameter("mixer", "A_log, D", module + "D", (heads, head_dim)),
        ),
        state_elements=state_elements,
        state_update_flops=6 * state_elements,
    )


def mamba2(
    hidden: int,
    heads: int,
    head_dim: int,
    groups: int,
    state: int,
    kernel: int,
    names: Names,
    proj_bias: bool = False,
    conv_bias: bool = True,
    *,
    inner: int | None = None,
    out_proj_bias: bool | None = None,
    gated_norm: bool = True,
) -> Mixer:
    """Mamba-2 (Dao & Gu 2024, the SSD layer): in_proj emits z (inner), x·B·C for the convolution
    (inner + 2·groups·state) and dt (heads); a depthwise conv; dt_bias, A_log and D per head; a gated
    RMSNorm over inner; out_proj.

    inner is heads · head_dim unless given (Zamba2 floors head_dim = inner // heads); out_proj's bias
    follows proj_bias unless given (Falcon-H1's projectors_bias); Falcon-H1 may drop the gated norm.

    State: heads · head_dim · state. Per token, for each state element of h_t = a·h_{t−1} + (dt·x)·Bᵀ
    and y = h·C: the decay a·h (1 multiply), the input outer product and its addition (1 multiply,
    1 add), and the readout h·C (1 multiply-add, 2 FLOPs): 5 FLOPs per element.
    """
    inner = heads * head_dim if inner is None else inner
    conv_dim = inner + 2 * groups * state
    state_elements = heads * head_dim * state
    return Mixer(
        kind="mamba2",
        projections=(
            Projection("in_proj", names["in_proj"], hidden, inner + conv_dim + heads, proj_bias),
            Projection(
                "out_proj", names["out_proj"], inner, hidden, proj_bias if out_proj_bias is None else out_proj_bias
            ),
        ),
        convs=(Conv(names["conv1d"], conv_dim, kernel, conv_bias),),
        parameters=tuple(
            Parameter("mixer", "dt_bias, A_log, D", names[part], (heads,)) for part in ("dt_bias", "A_log", "D")
        ),
        norms=((names["norm"], Norm("rmsnorm", inner)),) if gated_norm else (),
        state_elements=state_elements,
        state_update_flops=5 * state_elements,
    )


def short_conv(hidden: int, kernel: int, names: Names, bias: bool = False) -> Mixer:
    """LFM2's gated short convolution (Liquid AI 2025): in_proj emits B, C and x (hidden each); B·x passes a
    depthwise causal conv of kernel (conv_L_cache) taps; C gates its output; out_proj.

    State: none besides the convolution's last kernel − 1 inputs. Per token, besides the projections and the
    conv: the gates B·x and C·y are one multiply per channel each, elementwise like activations, and no state
    is read or written: 0 FLOPs.
    """
    return Mixer(
        kind="short_conv",
        projections=(
            Projection("in_proj", names["in_proj"], hidden, 3 * hidden, bias),
            Projection("out_proj", names["out_proj"], hidden, hidden, bias),
        ),
        convs=(Conv(names["conv"], hidden, kernel, bias),),
    )


def rg_lru(hidden: int, width: int, heads: int, kernel: int, names: Names) -> Mixer:
    """Griffin's recurrent block (De et al. 2024; RecurrentGemma): linear_y (the GeLU gate branch) and linear_x
    (hidden → width each, with biases); a depthwise conv over x (with a bias); the RG-LRU, whose input and
    recurrence gates are block-diagonal linear maps (heads blocks of width // heads, with biases, counted as
    matmuls) and whose decay Λ is learned per channel (recurrent_param); the branches' product, linear_out.

    State: width. Per token, for each element of h_t = a·h_{t−1} + √(1 − a²)·(i·x) with a = exp(−8·r·softplus(Λ)):
    the exponent −8·r·softplus(Λ) (2 multiplies), a² as exp(2·log a) (1 multiply), 1 − a² (1), the gated input
    i·x (1) and its scaling by √(1 − a²) (1), the decay a·h (1) and the sum (1): 8 FLOPs per element (exp, sqrt,
    sigmoid and softplus are not counted, as activations are not).
    """
    block = width // heads
    gates = tuple(
        Parameter("mixer", "rg_lru gates", names[part], (heads, block, block), matmul=True)
        for part in ("input_gate_weight", "recurrent_gate_weight")
    )
    gate_biases = tuple(
        Parameter("mixer", "rg_lru gates", names[part], (heads, block))
        for part in ("input_gate_bias", "recurrent_gate_bias")
    )
    return Mixer(
        kind="rg_lru",
        projections=(
            Projection("linear_y", names["linear_y"], hidden, width, bias=True),
            Projection("linear_x", names["linear_x"], hidden, width, bias=True),
            Projection("linear_out", names["linear_out"], width, hidden, bias=True),
        ),
        convs=(Conv(names["conv_1d"], width, kernel, bias=True),),
        parameters=gates + gate_biases + (Parameter("mixer", "recurrent_param", names["recurrent_param"], (width,)),),
        state_elements=width,
        state_update_flops=8 * width,
    )


def gated_deltanet(
    hidden: int,
    k_heads: int,
    v_heads: int,
    k_dim: int,
    v_dim: int,
    kernel: int,
    names: Names,
    *,
    separate_qkv: bool = False,
    state_dtype: str | None = None,
) -> Mixer:
    """Gated DeltaNet (Yang et al. 2024; Qwen3-Next, Qwen3.5): q, k (key heads) and v, z (value heads) and
    per value head b and a, from the input projections (fused or apart, as the names say); a
    depthwise conv over q, k, v; dt_bias and A_log per value head; an RMSNorm over each head; out_proj.
    With separate_qkv (OLMo Hybrid) q, k and v have projections and convolutions of their own (q_proj,
    k_proj, v_proj; q_conv1d, k_conv1d, v_conv1d): the same widths, stored apart.

    State: a k_dim × v_dim matrix S per value head. Per token, for each element of
    S_t = α·S_{t−1} + β·(v − α·S_{t−1}ᵀk)·kᵀ and o = S_tᵀq: the read S_{t−1}ᵀk (1 multiply-add, 2 FLOPs),
    the decay α·S (1 multiply), the rank-1 update (1 multiply, 1 add) and the readout S_tᵀq (2 FLOPs):
    7 FLOPs per element. STATE_DTYPE: S's element type where the config names one (Mixer.state_dtype).
    """
    key, value = k_heads * k_dim, v_heads * v_dim
    state_elements = v_heads * k_dim * v_dim
    widths = (("q", key), ("k", key), ("v", value))
    if separate_qkv:
        qkv = tuple(Projection(f"{part}_proj", names[f"{part}_proj"], hidden, width) for part, width in widths)
        convs = tuple(Conv(names[f"{part}_conv1d"], width, kernel, bias=False) for part, width in widths)
    else:
        qkv = (Projection("in_proj_qkv", names["in_proj_qkv"], hidden, 2 * key + value),)
        convs = (Conv(names["conv1d"], 2 * key + value, kernel, bias=False),)
    return Mixer(
        kind="gated_deltanet",
        projections=qkv
        + (
            Projection("in_proj_z", names["in_proj_z"], hidden, value),
            Projection("in_proj_b", names["in_proj_b"], hidden, v_heads),
            Projection("in_proj_a", names["in_proj_a"], hidden, v_heads),
            Projection("out_proj", names["out_proj"], value, hidden),
        ),
        convs=convs,
        parameters=tuple(
            Parameter("mixer", "dt_bias, A_log", names[part], (v_heads,)) for part in ("dt_bias", "A_log")
        ),
        norms=((names["norm"], Norm("rmsnorm", v_dim)),),
        state_elements=state_elements,
        state_update_flops=7 * state_elements,
        state_dtype=state_dtype,
    )


def lightning_attention(hidden: int, heads: int, head_dim: int, names: Names, component: Component = "mixer") -> Mixer:
    """Lightning attention (MiniMax-01's linear attention, Qin et al. 2024): qkv_proj emits q, k and v for
    every head; the heads' outputs pass an RMSNorm over heads · head_dim, are gated by sigmoid(output_gate),
    a projection of the input, and projected back by out_proj. Its decay per head is fixed (slope_rate),
    not learned.

    State: a head_dim × head_dim matrix S = Σ decay · kᵀv per head. Per token, for each element of
    S_t = λ·S_{t−1} + k_tᵀv_t and o = q_t·S_t: the decay λ·S (1 multiply), the outer product and its
    addition (1 multiply, 1 add) and the readout q·S (1 multiply-add, 2 FLOPs): 5 FLOPs per element.
    """
    inner = heads * head_dim
    state_elements = heads * head_dim * head_dim
    return Mixer(
        kind="lightning_attention",
        projections=(
            Projection("qkv_proj", names["qkv_proj"], hidden, 3 * inner),
            Projection("output_gate", names["output_gate"], hidden, inner),
            Projection("out_proj", names["out_proj"], inner, hidden),
        ),
        norms=((names["norm"], Norm("rmsnorm", inner)),),
        state_elements=state_elements,
        state_update_flops=5 * state_elements,
        component=component,
    )


def kimi_delta_attention(
    hidden: int, heads: int, head_dim: int, kernel: int, names: Names, component: Component = "mixer"
) -> Mixer:
    """Kimi Delta Attention (Kimi Linear, 2025): Gated DeltaNet with a decay per channel instead of per head.
    q, k and v projections (heads · head_dim each), each through its own depthwise conv; the decay from a
    low-rank forget gate (f_a: hidden → head_dim, f_b: head_dim → heads · head_dim) with dt_bias per
    channel and A_log per head; β per head from b_proj; the output gated by a low-rank g_a, g_b, through
    an RMSNorm over each head, then o_proj.

    State: a head_dim × head_dim matrix S per head. Per token, for each element of
    S_t = Diag(α)·S_{t−1} + β·(v − (Diag(α)·S_{t−1})ᵀk)·kᵀ and o = S_tᵀq: the decay (1 multiply), the read
    Sᵀk (1 multiply-add, 2 FLOPs), the rank-1 update (1 multiply, 1 add) and the readout Sᵀq (2 FLOPs):
    7 FLOPs per element, as Gated DeltaNet.
    """
    inner = heads * head_dim
    state_elements = heads * head_dim * head_dim
    projections = tuple(Projection(part, names[part], hidden, inner) for part in ("q_proj", "k_proj", "v_proj"))
    projections += (
        Projection("f_a_proj", names["f_a_proj"], hidden, head_dim),
        Projection("f_b_proj", names["f_b_proj"], head_dim, inner),
        Projection("b_proj", names["b_proj"], hidden, heads),
        Projection("g_a_proj", names["g_a_proj"], hidden, head_dim),
        Projection("g_b_proj", names["g_b_proj"], head_dim, inner),
        Projection("o_proj", names["o_proj"], inner, hidden),
    )
    return Mixer(
        kind="kimi_delta_attention",
        projections=projections,
        convs=tuple(Conv(names[part], inner, kernel, bias=False) for part in ("q_conv1d", "k_conv1d", "v_conv1d")),
        parameters=(
            Parameter("mixer", "dt_bias, A_log", names["dt_bias"], (inner,)),
            Parameter("mixer", "dt_bias, A_log", names["A_log"], (1, 1, heads, 1)),
        ),
        norms=((names["o_norm"], Norm("rmsnorm", head_dim)),),
        state_elements=state_elements,
        state_update_flops=7 * state_elements,
        component=component,
    )
