"""Accelerators as data: dense peak FLOP/s per dtype, memory bandwidth, memory size and interconnect, each with its
source. One table, read by `speed`, `train` and `memory`.

Conventions (stated once, here and in the commands' JSON ``conventions``):
- peaks are DENSE matrix (tensor-core) peaks, never the 2:4-sparse figures datasheets print first; where a
  datasheet prints only the sparse figure, the dense one is half of it;
- 16-bit peaks are for FP32 accumulation where the vendor distinguishes (GeForce cards run FP16 accumulation at
  twice the rate; training and inference engines accumulate in FP32);
- memory is what the device reports to its driver where a report could be sourced (nvidia-smi's MiB: an
  H100 "80 GB" shows 81,559 MiB), else the vendor's GB figure read as GiB, which ffncalc's `memory` has always
  used; ``memory_source`` says which;
- bandwidth is the vendor's peak in bytes per second (1 TB/s = 10¹² B/s); interconnect is per direction (a
  "900 GB/s NVLink" is 900 GB/s bidirectional, 450 GB/s each way).
- board power is the vendor's maximum for the board (TDP, or AMD's "total board power") in watts: `speed`
  states energy per token at it, an upper bound; a chip whose vendor publishes none (TPUs, Apple silicon) has None,
  and ``board_power_source`` says so.

Figures marked "unverified" in ``notes`` come from a secondary source whose page tabulates the vendor's figures;
the vendor's own document was not read when the entry was written (2026-08, by the `speed` session).
"""

from __future__ import annotations

from functools import cache

from .errors import UsageError
from .units import GIB, MIB, SIZE, parse_size
from .values import Value

TERA, GIGA = 10**12, 10**9
DTYPES = ("bf16", "fp8", "int8", "fp4")  # peak keys: bf16 stands for BF16 and FP16 (the same peak on every entry)


class Accelerator(Value):
    """One accelerator: dense peaks (FLOP/s by dtype), bandwidth and interconnect (bytes/s), memory (bytes)."""

    name: str  # as the tables print it, e.g. "H100 SXM"
    aliases: tuple[str, ...]  # names people type, compared without case, spaces, '-' and '_'
    peak_flops: tuple[tuple[str, int], ...]  # (dtype, dense FLOP/s)
    bandwidth: int  # bytes/s: the memory's peak
    memory: int  # bytes
    interconnect: int | None  # bytes/s per direction; None: none that tensor parallelism would use
    interconnect_name: str
    memory_source: str  # "driver" (nvidia-smi) or "vendor GB as GiB"
    sources: tuple[str, ...]
    notes: str = ""
    gpu_share: float | None = None  # unified memory: the share the GPU may wire by default (macOS), else None
    scale_out: int | None = None  # bytes/s per GPU per direction on the network between nodes (training layouts)
    scale_out_source: str = ""
    nvlink_domain: int = 8  # GPUs one NVLink domain joins: a node of 8, or an NVL72 rack
    board_power: int | None = None  # watts: the board's maximum power (TDP / TBP); None: no figure could be cited
    board_power_source: str = ""  # where the figure is from ("unverified: …" where the vendor's page was not read)

    def peak(self, dtype: str) -> int | None:
        """The dense peak for DTYPE, or None when the chip has no such unit."""
        return dict(self.peak_flops).get(dtype)


def _tflops(**peaks: float) -> tuple[tuple[str, int], ...]:
    return tuple((dtype, round(value * TERA)) for dtype, value in peaks.items())


NVIDIA_H100 = "NVIDIA H100 Tensor Core GPU datasheet, https://resources.nvidia.com/en-us-tensor-core/nvidia-tensor-core-gpu-datasheet (sparse figures halved)"
NVIDIA_SMI = "nvidia-smi memory.total as printed in public logs (e.g. '81559MiB' for 'NVIDIA H100 80GB HBM3')"
BLACKWELL = "NVIDIA Blackwell datasheet, https://nvdam.widen.net/s/wwnsxrhm2w/blackwell-datasheet-3384703, as tabulated at https://glennklockwood.com/garden/processors/B200"
AMD_MI300X = "AMD Instinct MI300X data sheet, https://www.amd.com/en/products/accelerators/instinct/mi300/mi300x.html"
GOOGLE_TPU = "Google Cloud TPU documentation, https://docs.cloud.google.com/tpu/docs/"
TPU_POWER = "no figure: Google publishes no per-chip board power for its TPUs"

ACCELERATOR_TABLE: tuple[Accelerator, ...] = (
    Accelerator(
        name="H100 SXM",
        aliases=("h100", "h100-sxm", "h100-sxm5", "h100-80gb"),
        peak_flops=_tflops(bf16=989, fp8=1979, int8=1979),
        bandwidth=3350 * GIGA,
        memory=81_559 * MIB,
        interconnect=450 * GIGA,
        interconnect_name="NVLink 4 (900 GB/s bidirectional)",
        memory_source="driver",
        sources=(NVIDIA_H100, NVIDIA_SMI),
        scale_out=400 * GIGA // 8,
        scale_out_source="DGX H100: eight ConnectX-7 400 Gb/s compute-fabric ports, one per GPU (NVIDIA DGX H100 user guide, https://docs.nvidia.com/dgx/dgxh100-user-guide/; not re-read for this entry); Llama 3 §3.3.1 also gives 400 Gb/s between GPUs",
        board_power=700,
        board_power_source="NVIDIA H100 datasheet: max thermal design power up to 700 W (configurable), as quoted by several secondary pages; unverified: the datasheet itself was not re-read",
    ),
    Accelerator(
        name="H100 PCIe",
        aliases=("h100-pcie",),
        peak_flops=_tflops(bf16=756, fp8=1513, int8=1513),
        bandwidth=2000 * GIGA,
        memory=80 * GIB,
        interconnect=64 * GIGA,
        interconnect_name="PCIe Gen5 x16 (128 GB/s bidirectional)",
        memory_source="vendor GB as GiB",
        sources=(NVIDIA_H100,),
        board_power=350,
        board_power_source="NVIDIA H100 PCIe product brief PB-11133-001_v02: 'maximum thermal design power (TDP) level of 350 W'",
    ),
    Accelerator(
        name="H800 SXM",
        aliases=("h800", "h800-sxm"),
        peak_flops=_tflops(bf16=989, fp8=1979, int8=1979),
        bandwidth=3350 * GIGA,
        memory=81_559 * MIB,
        interconnect=200 * GIGA,
        interconnect_name="NVLink (400 GB/s bidirectional)",
        memory_source="driver",
        sources=("NVIDIA H800 product brief (H100 SXM compute and memory, NVLink cut to 400 GB/s)", NVIDIA_SMI),
        notes="unverified: the H800 brief was not read; its compute equals the H100 SXM's as widely tabulated (LLMRoofline, "
        "LLM-Prof hardware tables); nvidia-smi prints 81559MiB for 'NVIDIA H800'",
        scale_out=400 * GIGA // 8,
        scale_out_source="DeepSeek-V3 technical report §3.2.2 (arXiv 2412.19437): InfiniBand 50 GB/s per GPU on its H800 cluster",
        board_power=700,
        board_power_source="unverified: as the H100 SXM (the H800 brief was not read)",
    ),
    Accelerator(
        name="H200 SXM",
        aliases=("h200", "h200-sxm"),
        peak_flops=_tflops(bf16=989, fp8=1979, int8=1979),
        bandwidth=4800 * GIGA,
        memory=143_771 * MIB,
        interconnect=450 * GIGA,
        interconnect_name="NVLink 4 (900 GB/s bidirectional)",
        memory_source="driver",
        sources=(
            "NVIDIA H200 datasheet, https://www.nvidia.com/en-us/data-center/h200/ (sparse figures halved)",
            NVIDIA_SMI,
        ),
        scale_out=400 * GIGA // 8,
        scale_out_source="unverified: DGX H200 as DGX H100, eight ConnectX-7 400 Gb/s ports (the DGX H200 guide was not read)",
        board_power=700,
        board_power_source="NVIDIA H200 datasheet: max TDP up to 700 W (configurable); unverified: not re-read",
    ),
    Accelerator(
        name="B200 HGX",
        aliases=("b200", "b200-hgx", "hgx-b200", "dgx-b200"),
        peak_flops=_tflops(bf16=2250, fp8=4500, int8=4500, fp4=9000),
        bandwidth=8000 * GIGA,
        memory=183_359 * MIB,
        interconnect=900 * GIGA,
        interconnect_name="NVLink 5 (1.8 TB/s bidirectional)",
        memory_source="driver",
        sources=(BLACKWELL, NVIDIA_SMI),
        notes="the HGX B200 at 1,000 W; nvidia-smi prints 183359MiB ('180 GB')",
        scale_out=400 * GIGA // 8,
        scale_out_source="DGX B200: eight ConnectX-7 400 Gb/s compute-fabric ports, one per GPU (NVIDIA DGX B200 datasheet; unverified, not re-read)",
        board_power=1000,
        board_power_source="the HGX B200 at 1,000 W per GPU (NVIDIA Blackwell datasheet as tabulated at https://glennklockwood.com/garden/processors/B200; unverified)",
    ),
    Accelerator(
        name="GB200",
        aliases=("gb200", "gb200-nvl72", "b200-gb200"),
        peak_flops=_tflops(bf16=2500, fp8=5000, int8=5000, fp4=10000),
        bandwidth=8000 * GIGA,
        memory=192 * GIB,
        interconnect=900 * GIGA,
        interconnect_name="NVLink 5 (1.8 TB/s bidirectional)",
        memory_source="vendor GB as GiB",
        sources=(BLACKWELL,),
        notes="one B200 GPU of a GB200 superchip at 1,200 W; the driver-reported memory was not sourced",
        scale_out=400 * GIGA // 8,
        scale_out_source="unverified: GB200 NVL72 compute trays with one ConnectX-7 400 Gb/s NIC per GPU; NVLink joins all 72 GPUs",
        nvlink_domain=72,
        board_power=1200,
        board_power_source="one B200 GPU of a GB200 superchip at 1,200 W (NVIDIA Blackwell datasheet as tabulated at https://glennklockwood.com/garden/processors/B200; unverified)",
    ),
    Accelerator(
        name="B300 HGX",
        aliases=("b300", "b300-hgx", "hgx-b300", "blackwell-ultra"),
        peak_flops=_tflops(bf16=2250, fp8=4500, int8=4500, fp4=13125),
        bandwidth=8000 * GIGA,
        memory=288 * GIB,
        interconnect=900 * GIGA,
        interconnect_name="NVLink 5 (1.8 TB/s bidirectional)",
        memory_source="vendor GB as GiB",
        sources=("https://glennklockwood.com/garden/processors/B300 (tabulating NVIDIA's HGX B300 figures)",),
        notes="unverified: NVIDIA's B300 datasheet was not read; the FP4 dense figure is the secondary source's and "
        "its dense/sparse ratio there is not 1:2; the driver-reported memory was not sourced",
        scale_out=800 * GIGA // 8,
        scale_out_source="unverified: HGX B300 with one ConnectX-8 800 Gb/s SuperNIC per GPU",
        board_power=1100,
        board_power_source="unverified: 1,100 W per GPU for the HGX B300 as third parties tabulate it; NVIDIA's datasheet was not read",
    ),
    Accelerator(
        name="A100 40 GiB",
        aliases=("a100-40gb", "a100-40", "a100-sxm4-40gb"),
        peak_flops=_tflops(bf16=312, int8=624),
        bandwidth=1555 * GIGA,
        memory=40 * GIB,
        interconnect=300 * GIGA,
        interconnect_name="NVLink 3 (600 GB/s bidirectional)",
        memory_source="vendor GB as GiB",
        sources=(
            "NVIDIA A100 datasheet, https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf",
        ),
        notes="no FP8 units (Ampere)",
        board_power=400,
        board_power_source="NVIDIA A100 datasheet: max TDP 400 W for the SXM module; unverified: not re-read",
    ),
    Accelerator(
        name="A100 80 GiB",
        aliases=("a100", "a100-80gb", "a100-80", "a100-sxm4-80gb"),
        peak_flops=_tflops(bf16=312, int8=624),
        bandwidth=2039 * GIGA,
        memory=80 * GIB,
        interconnect=300 * GIGA,
        interconnect_name="NVLink 3 (600 GB/s bidirectional)",
        memory_source="vendor GB as GiB",
        sources=(
            "NVIDIA A100 datasheet, https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf",
        ),
        notes="no FP8 units (Ampere); SXM 80 GB bandwidth",
        board_power=400,
        board_power_source="NVIDIA A100 datasheet: max TDP 400 W for the SXM module; unverified: not re-read",
    ),
    Accelerator(
        name="L40S",
        aliases=("l40s",),
        peak_flops=_tflops(bf16=362.05, fp8=733, int8=733),
        bandwidth=864 * GIGA,
        memory=46_068 * MIB,
        interconnect=32 * GIGA,
        interconnect_name="PCIe Gen4 x16 (64 GB/s bidirectional)",
        memory_source="driver",
        sources=("NVIDIA L40S datasheet (dense columns: BF16 362.05, FP8 733 TFLOPS)", NVIDIA_SMI),
        notes="nvidia-smi prints 46068MiB for the '48 GB' card",
        board_power=350,
        board_power_source="NVIDIA L40S datasheet: max power consumption 350 W; unverified: not re-read",
    ),
    Accelerator(
        name="L4",
        aliases=("l4",),
        peak_flops=_tflops(bf16=121, fp8=242.5, int8=242.5),
        bandwidth=300 * GIGA,
        memory=24 * GIB,
        interconnect=32 * GIGA,
        interconnect_name="PCIe Gen4 x16 (64 GB/s bidirectional)",
        memory_source="vendor GB as GiB",
        sources=("NVIDIA L4 datasheet (242 TFLOPS FP16 and 485 TFLOPS FP8 with sparsity, halved)",),
        notes="the driver-reported memory was not sourced",
        board_power=72,
        board_power_source="NVIDIA L4 datasheet: max thermal design power 72 W; unverified: not re-read",
    ),
    Accelerator(
        name="RTX 4090",
        aliases=("rtx4090", "4090", "rtx-4090"),
        peak_flops=_tflops(bf16=165.2, fp8=330.3, int8=660.6),
        bandwidth=1008 * GIGA,
        memory=24_564 * MIB,
        interconnect=32 * GIGA,
        interconnect_name="PCIe Gen4 x16 (no NVLink)",
        memory_source="driver",
        sources=(
            "NVIDIA Ada GPU architecture whitepaper, RTX 4090 column (FP32 accumulate), as tabulated at https://hmc-tech.com",
            NVIDIA_SMI,
        ),
        notes="16-bit and FP8 with FP32 accumulation; GeForce runs FP16 accumulation at twice these",
        board_power=450,
        board_power_source="NVIDIA GeForce RTX 4090 specifications: total graphics power 450 W; unverified: not re-read",
    ),
    Accelerator(
        name="RTX 5090",
        aliases=("rtx5090", "5090", "rtx-5090"),
        peak_flops=_tflops(bf16=209.5, fp8=419.2, int8=838.4, fp4=1676),
        bandwidth=1792 * GIGA,
        memory=32_607 * MIB,
        interconnect=64 * GIGA,
        interconnect_name="PCIe Gen5 x16 (no NVLink)",
        memory_source="driver",
        sources=(
            "NVIDIA RTX Blackwell GPU architecture whitepaper as tabulated at https://www.spheron.network/blog/nvidia-rtx-5090-specs/ (sparse FP16 838.4, FP8 1,676.8, FP4 3,352)",
            NVIDIA_SMI,
        ),
        notes="unverified: dense FP32-accumulate figures derived from the sparse FP16-accumulate ones (÷ 4; FP4 ÷ 2); "
        "the whitepaper itself was not read",
        board_power=575,
        board_power_source="NVIDIA GeForce RTX 5090 specifications: total graphics power 575 W; unverified: not re-read",
    ),
    Accelerator(
        name="MI300X",
        aliases=("mi300x", "mi300"),
        peak_flops=_tflops(bf16=1307.4, fp8=2614.9, int8=2614.9),
        bandwidth=5300 * GIGA,
        memory=192 * GIB,
        interconnect=448 * GIGA,
        interconnect_name="Infinity Fabric (7 links, 896 GB/s aggregate bidirectional)",
        memory_source="vendor GB as GiB",
        sources=(AMD_MI300X,),
        board_power=750,
        board_power_source="AMD Instinct MI300X: 750 W peak total board power (AMD launch footnote, as reported June 2023); unverified: AMD's data sheet was not re-read",
    ),
    Accelerator(
        name="MI325X",
        aliases=("mi325x",),
        peak_flops=_tflops(bf16=1307.4, fp8=2614.9, int8=2614.9),
        bandwidth=6000 * GIGA,
        memory=256 * GIB,
        interconnect=448 * GIGA,
        interconnect_name="Infinity Fabric (7 links, 896 GB/s aggregate bidirectional)",
        memory_source="vendor GB as GiB",
        sources=(
            "AMD Instinct MI325X data sheet, https://www.amd.com/en/products/accelerators/instinct/mi300/mi325x.html",
        ),
        notes="same compute as the MI300X; HBM3E 256 GB at 6 TB/s",
        board_power=1000,
        board_power_source="AMD Instinct MI325X data sheet: 1,000 W peak total board power; unverified: not re-read",
    ),
    Accelerator(
        name="MI355X",
        aliases=("mi355x", "mi355"),
        peak_flops=_tflops(bf16=2500, fp8=5000, int8=5000, fp4=10000),
        bandwidth=8000 * GIGA,
        memory=288 * GIB,
        interconnect=538 * GIGA,
        interconnect_name="Infinity Fabric (1,075 GB/s aggregate bidirectional)",
        memory_source="vendor GB as GiB",
        sources=(
            "AMD Instinct MI355X data sheet, https://www.amd.com/en/products/accelerators/instinct/mi350/mi355x.html",
        ),
        notes="unverified: AMD's data sheet was not read; compute as AMD's June 2025 launch figures (FP16 2.5, FP8 5.0, "
        "MXFP4 10 PFLOPS dense), interconnect as tabulated by third parties",
        board_power=1400,
        board_power_source="AMD Instinct MI355X: 1,400 W total board power (AMD's June 2025 launch figures); unverified: the data sheet was not read",
    ),
    Accelerator(
        name="TPU v5e",
        aliases=("v5e", "tpu-v5e", "tpuv5e"),
        peak_flops=_tflops(bf16=197, int8=393),
        bandwidth=819 * GIGA,
        memory=16 * GIB,
        interconnect=200 * GIGA,
        interconnect_name="ICI (400 GB/s bidirectional per chip)",
        memory_source="vendor GB as GiB",
        sources=(GOOGLE_TPU + "v5e",),
        board_power_source=TPU_POWER,
    ),
    Accelerator(
        name="TPU v5p",
        aliases=("v5p", "tpu-v5p", "tpuv5p"),
        peak_flops=_tflops(bf16=459, fp8=459),
        bandwidth=2765 * GIGA,
        memory=95 * GIB,
        interconnect=600 * GIGA,
        interconnect_name="ICI (1,200 GB/s bidirectional per chip)",
        memory_source="vendor GB as GiB",
        sources=(GOOGLE_TPU + "v5p",),
        notes="FP8 runs at the BF16 rate (Google's table lists 459 for both)",
        board_power_source=TPU_POWER,
    ),
    Accelerator(
        name="TPU v6e",
        aliases=("v6e", "tpu-v6e", "trillium"),
        peak_flops=_tflops(bf16=918, int8=1836),
        bandwidth=1638 * GIGA,
        memory=32 * GIB,
        interconnect=400 * GIGA,
        interconnect_name="ICI (800 GB/s bidirectional per chip)",
        memory_source="vendor GB as GiB",
        sources=(GOOGLE_TPU + "v6e",),
        board_power_source=TPU_POWER,
    ),
    Accelerator(
        name="TPU7x",
        aliases=("tpu7x", "7x", "ironwood", "tpu-v7", "v7"),
        peak_flops=_tflops(bf16=2307, fp8=4614),
        bandwidth=7380 * GIGA,
        memory=192 * GIB,
        interconnect=600 * GIGA,
        interconnect_name="ICI (1.2 TB/s bidirectional per chip)",
        memory_source="vendor GB as GiB",
        sources=(GOOGLE_TPU + "tpu7x", GOOGLE_TPU + "ironwood-performance"),
        notes="unverified: HBM bandwidth and ICI from Google's Ironwood announcement (7.37 TB/s, 1.2 TB/s); the docs' "
        "table row was not read in full",
        board_power_source=TPU_POWER,
    ),
)


NVIDIA_GEFORCE = "NVIDIA GeForce product specifications, https://www.nvidia.com/en-us/geforce/graphics-cards/"
NVIDIA_ADA_WHITEPAPER = "NVIDIA Ada Lovelace architecture whitepaper (FP16 tensor with FP32 accumulate; sparse halved)"
NVIDIA_AMPERE_WHITEPAPER = "NVIDIA Ampere GA102 whitepaper (FP16 tensor with FP32 accumulate, dense)"
NVIDIA_WORKSTATION = "NVIDIA RTX professional GPU datasheets, https://www.nvidia.com/en-us/design-visualization/"
AMD_RADEON = "AMD Radeon RX 7900 XTX specifications, https://www.amd.com/en/products/graphics/desktops/radeon/7000-series/amd-radeon-rx-7900xtx.html"
APPLE_SPECS = (
    "Apple technical specifications and newsroom (unified memory bandwidth), https://support.apple.com/en-us/docs/mac"
)
# macOS lets the GPU wire about 75 % of unified memory above 36 GB and about two thirds below (what Metal reports
# as recommendedMaxWorkingSetSize and ggml-metal prints, e.g. 147,456 MB of a 192 GB M2 Ultra; 10,922 MB of 16 GB);
# raised with `sudo sysctl iogpu.wired_limit_mb=…`.
MAC_WIRED_SOURCE = "recommendedMaxWorkingSetSize as ggml-metal logs print it (unverified: recalled from public logs)"
CARD_POWER = (
    "unverified: the vendor's total graphics (board) power as widely tabulated; its specification page was not re-read"
)
MAC_POWER = "no figure: Apple publishes no GPU board power, only the whole machine's maximum draw"
CONSUMER_UNVERIFIED = (
    "unverified: the dense 16-bit peak (FP32 accumulate) is the architecture whitepaper's figure as widely "
    "tabulated; memory and bandwidth are the vendor's specification"
)


def _mac(name: str, aliases: tuple[str, ...], tflops: float, bandwidth_gb: int, memory_gb: int) -> Accelerator:
    """An Apple silicon Mac: unified memory (the vendor's GB as GiB), bandwidth, the GPU's FP16 peak, the wired share."""
    return Accelerator(
        name=name, aliases=aliases, peak_flops=_tflops(bf16=tflops), bandwidth=bandwidth_gb * GIGA, memory=memory_gb * GIB, interconnect=None, interconnect_name="", memory_source="vendor GB as GiB",
        sources=(APPLE_SPECS, MAC_WIRED_SOURCE),
        notes="unverified: the GPU's FP16 peak is the FP32 shader peak as widely tabulated (Apple publishes none); the "
        "usable share is macOS's default GPU wired limit",
        gpu_share=0.75 if memory_gb > 36 else 2 / 3, board_power_source=MAC_POWER,
    )  # fmt: skip


# NVIDIA's GeForce and RTX workstation tensor cores run dense INT8 at 4× their FP16-with-FP32-accumulate rate
# (Ampere GA102 whitepaper, RTX 3090: 71 TFLOPS FP16/FP32-acc, 284 TOPS INT8 dense; Ada AD102 whitepaper, RTX 4090:
# 165.2 and 660.6). llama.cpp's quantized matmuls (MMQ) run on them, so the ceiling must hold that rate. AMD's RDNA3
# WMMA runs INT8 at its FP16 rate (RX 7900 XTX: 122.8 and 122.8).
INT8_PER_FP16_FP32_ACC = {"nvidia": 4, "amd": 1}


def _card(
    name: str,
    aliases: tuple[str, ...],
    tflops: float,
    bandwidth_gb: float,
    memory_gb: int,
    sources: tuple[str, ...],
    watts: int,
    vendor: str = "nvidia",
) -> Accelerator:
    """A consumer or workstation card: PCIe only (no interconnect tensor parallelism would use here); WATTS its
    board power as the vendor's specification states it (CARD_POWER)."""
    peaks = _tflops(bf16=tflops, int8=tflops * INT8_PER_FP16_FP32_ACC[vendor])
    return Accelerator(
        name=name, aliases=aliases, peak_flops=peaks, bandwidth=round(bandwidth_gb * GIGA), memory=memory_gb * GIB, interconnect=None, interconnect_name="",
        memory_source="vendor GB as GiB", sources=sources, notes=CONSUMER_UNVERIFIED, board_power=watts, board_power_source=CARD_POWER,
    )  # fmt: skip


LOCAL_TABLE: tuple[Accelerator, ...] = (
    _card(
        "RTX 3060 12GB", ("rtx3060", "rtx-3060-12gb"), 25.6, 360, 12, (NVIDIA_GEFORCE, NVIDIA_AMPERE_WHITEPAPER), 170
    ),
    _card("RTX 3090", ("rtx3090",), 71, 936, 24, (NVIDIA_GEFORCE, NVIDIA_AMPERE_WHITEPAPER), 350),
    _card(
        "RTX 4060 Ti 16GB",
        ("rtx4060ti", "rtx-4060-ti-16gb"),
        44.1,
        288,
        16,
        (NVIDIA_GEFORCE, NVIDIA_ADA_WHITEPAPER),
        165,
    ),
    _card("RTX 4070", ("rtx4070",), 58.3, 504, 12, (NVIDIA_GEFORCE, NVIDIA_ADA_WHITEPAPER), 200),
    _card("RTX 4080", ("rtx4080",), 97.5, 716.8, 16, (NVIDIA_GEFORCE, NVIDIA_ADA_WHITEPAPER), 320),
    _card("RTX 5070 Ti", ("rtx5070ti", "rtx-5070-ti"), 87.9, 896, 16, (NVIDIA_GEFORCE,), 300),
    _card("RTX 5080", ("rtx5080",), 112.6, 960, 16, (NVIDIA_GEFORCE,), 360),
    _card("RTX 6000 Ada", ("rtx6000ada", "rtx-6000-ada"), 182.1, 960, 48, (NVIDIA_WORKSTATION,), 300),
    _card("RTX PRO 6000 Blackwell", ("rtxpro6000", "rtx-pro-6000"), 251.9, 1792, 96, (NVIDIA_WORKSTATION,), 600),
    _card("RX 7900 XTX", ("rx7900xtx", "7900xtx"), 122.8, 960, 24, (AMD_RADEON,), 355, vendor="amd"),
    _mac("M1 16GB", ("m1", "m1-16gb"), 2.6, 68, 16),
    _mac("M1 Max 64GB", ("m1-max", "m1-max-64gb"), 10.4, 400, 64),
    _mac("M1 Ultra 128GB", ("m1-ultra", "m1-ultra-128gb"), 21.2, 800, 128),
    _mac("M2 Ultra 192GB", ("m2-ultra", "m2-ultra-192gb"), 27.2, 800, 192),
    _mac("M3 Pro 36GB", ("m3-pro", "m3-pro-36gb"), 7.4, 150, 36),
    _mac("M3 Max 128GB", ("m3-max", "m3-max-128gb"), 16.4, 400, 128),
    _mac("M3 Ultra 512GB", ("m3-ultra", "m3-ultra-512gb"), 32.8, 819, 512),
    _mac("M4 24GB", ("m4", "m4-24gb"), 4.3, 120, 24),
    _mac("M4 Pro 48GB", ("m4-pro", "m4-pro-48gb"), 9.2, 273, 48),
    _mac("M4 Max 128GB", ("m4-max", "m4-max-128gb"), 18.4, 546, 128),
)

# One table: the data-centre entries above, then the machines people run local models on.
ACCELERATOR_TABLE = ACCELERATOR_TABLE + LOCAL_TABLE


def _key(name: str) -> str:
    return "".join(character for character in name.lower() if character.isalnum())


@cache
def _index() -> dict[str, Accelerator]:
    index = {}
    for entry in ACCELERATOR_TABLE:
        for name in (entry.name, *entry.aliases):
            index[_key(name)] = entry
    return index


def accelerator(name: str) -> Accelerator:
    """The entry people mean by NAME (h100, H100-SXM, mi300x …); an unknown name is one line listing the names."""
    found = _index().get(_key(name))
    if found is None:
        names = ", ".join(entry.aliases[0] for entry in ACCELERATOR_TABLE)
        raise UsageError(f"unknown accelerator {name.strip()[:40]!r}; use one of: {names}")
    return found


# The accelerators `ffncalc memory` lists, by product name. Marketing sizes ("H100 80GB") stay out of the names:
# ffncalc's one unit rule (units.UNIT_RULE, GB = 10^9 bytes) would read "80GB" as 74.5 GiB, while the card holds
# 79.65 GiB; the table's GiB column says what each holds. The two A100s, which differ only in memory, are named
# by it in GiB (each holds the vendor's figure in GiB, memory_source).
MEMORY_TABLE = ("h100", "h200", "b200", "a100-40gb", "a100-80gb", "l40s", "l4", "rtx4090", "mi300x")


def memory_sizes() -> dict[str, int]:
    """The memory table of `ffncalc memory`: name → bytes, from ACCELERATOR_TABLE."""
    return {accelerator(alias).name: accelerator(alias).memory for alias in MEMORY_TABLE}


# What the runtime holds besides the model's tensors on every GPU: the CUDA context, cuBLAS/NCCL workspaces and
# the caching allocator's fragmentation. "fits" in `memory` means after it; vLLM's own budget subtracts its
# measured non-torch memory and CUDA graphs in its place. Overridable with --runtime-reserve.
RUNTIME_RESERVE = 1 << 30
RUNTIME_RESERVE_SOURCE = (
    "assumed by ffncalc, not measured: 1 GiB, of the order of the CUDA context (~0.3-0.5 GiB with the CUDA 12 "
    "lazy module loading) plus the 'non-torch memory' and 'CUDA graph' lines vLLM logs for mid-size models"
)


def memory_of(text: str) -> int:
    """An accelerator's memory as a user gives it (`gpu_memory`): a size (96GB, 80GiB) or a name from the table
    (h100, mi300x)."""
    return parse_size(text) if SIZE.match(text) or text.strip()[:1].isdigit() else accelerator(text).memory


def reserve_of(text: str | None) -> int:
    """The runtime reserve a user gives (`runtime_reserve`): a size, 0 for none, or None for RUNTIME_RESERVE."""
    if text is None:
        return RUNTIME_RESERVE
    if text.strip().rstrip("GgMmIiBb").strip() in ("0", "0.0"):
        return 0
    return parse_size(text)
