"""What the NVIDIA driver says about the reader's GPU, read through NVML.

Bindings: NVIDIA's official `nvidia-ml-py` (import name `pynvml`). Every query is
wrapped on its own, as nvitop (`nvmlQuery` → NA) and gpustat (per-field try/except)
do: consumer and laptop cards answer `NVMLError_NotSupported` to many calls (power,
energy counter, power limit …) and one unsupported call must not hide the rest.

The NVML module is passed in (`module=`) so tests can hand over a scripted stand-in
(`tests.core.gpu.fake_nvml.FakeNvml`); by default the real `pynvml` is imported.

Peak memory bandwidth from NVML = 2 × max memory clock (MHz) × bus width (bits) / 8
(checks: RTX 4090 10501 MHz × 384 bit → 1008 GB/s; H100 SXM 2619 × 5120 → 3352 GB/s;
docs/sources.md §6.2). It is an estimate: the benchmark prefers a measured copy.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from types import ModuleType
from typing import Any

from core.i18n import N_

# PCIe bandwidth per lane and direction in bytes/s (PCI-SIG line rates after encoding:
# Gen1/2 8b/10b, Gen3+ 128b/130b; x16: Gen3 15.75, Gen4 31.5, Gen5 63 GB/s).
PCIE_LANE_BYTES_PER_S = {1: 0.25e9, 2: 0.5e9, 3: 15.75e9 / 16, 4: 31.5e9 / 16, 5: 63e9 / 16}

# Clock-event ("throttle") reason bits, nvmlDeviceGetCurrentClocksEventReasons.
THROTTLE_REASONS = {
    0x1: N_("idle"),
    0x2: N_("application clock setting"),
    0x4: N_("software power cap"),
    0x8: N_("hardware slowdown"),
    0x10: N_("sync boost"),
    0x20: N_("software thermal slowdown"),
    0x40: N_("hardware thermal slowdown"),
    0x80: N_("power brake"),
    0x100: N_("display clock setting"),
}


# NVML errors that mean the card itself is gone (fell off the bus, reset, removed): pynvml's
# class names and NVML's codes (NVML_ERROR_GPU_IS_LOST = 15, NVML_ERROR_GPU_NOT_FOUND = 28).
LOST_ERRORS = {"NVMLError_GpuIsLost": 15, "NVMLError_GpuNotFound": 28}
LOST_MESSAGE = N_(
    "The GPU stopped answering the NVIDIA driver ({error}). Benchmarks are turned off until the "
    "machine (or its driver) is restarted; what was measured before is still shown."
)
# Why there is no GPU, in words a reader understands: kept in English in the snapshot (a CLI, a JSON and
# every reader share it) and translated where a page shows it (ui/gpu/words.py)
NO_DRIVER = N_("No NVIDIA driver found on this machine (the NVML library libnvidia-ml is missing).")
NOT_LOADED = N_("The NVIDIA driver is installed but not loaded, so no GPU can be used.")
NO_PERMISSION = N_("The NVIDIA driver refused access to the GPU (no permission).")
NOT_STARTED = N_("The NVIDIA driver could not be started: {error}.")
NO_BINDINGS = N_("The NVIDIA bindings (nvidia-ml-py) are not installed, so no GPU can be read.")
NOT_LOADABLE = N_("The NVIDIA driver library could not be loaded: {error}.")
NO_COUNT = N_("The NVIDIA driver could not count GPUs: {error}.")
NO_GPU_LISTED = N_("The NVIDIA driver is running but reports no GPU.")
NOT_OPENED = N_("The NVIDIA driver could not open GPU {index}: {error}.")
GONE = N_("{name} is no longer listed: {reason}")
REASON_TEMPLATES = (
    NO_DRIVER, NOT_LOADED, NO_PERMISSION, NOT_STARTED, NO_BINDINGS, NOT_LOADABLE, NO_COUNT, NO_GPU_LISTED,
    NOT_OPENED, GONE,
)  # fmt: skip


def is_lost(error: BaseException) -> bool:
    """Whether an NVML error says the GPU is lost or no longer there."""
    return type(error).__name__ in LOST_ERRORS or getattr(error, "value", None) in LOST_ERRORS.values()


def load_module() -> ModuleType:
    """The real NVML bindings (ImportError when nvidia-ml-py is not installed)."""
    import pynvml

    return pynvml


@dataclass
class DeviceSnapshot:
    """One look at the card. Any field the driver would not give is None."""

    available: bool
    reason: str = ""  # why there is no device (available=False), else ""
    index: int = 0
    name: str | None = None
    driver: str | None = None
    architecture: str | None = None
    compute_capability: str | None = None
    vram_total_bytes: int | None = None
    vram_used_bytes: int | None = None
    bus_width_bits: int | None = None
    max_mem_clock_mhz: int | None = None
    max_sm_clock_mhz: int | None = None
    pcie_gen: int | None = None  # current link (trains down at idle)
    pcie_width: int | None = None
    pcie_max_gen: int | None = None  # what the link can do under load
    pcie_max_width: int | None = None
    power_limit_w: float | None = None  # enforced, after every limiter
    energy_counter: bool = False  # nvmlDeviceGetTotalEnergyConsumption works (Volta+)
    lost: bool = False  # the driver said the GPU is lost or gone; `reason` says so in words

    @property
    def peak_bandwidth_bytes_per_s(self) -> float | None:
        """Spec-sheet memory bandwidth estimated from max memory clock × bus width."""
        return peak_bandwidth(self.max_mem_clock_mhz, self.bus_width_bits)

    @property
    def pcie_bandwidth_bytes_per_s(self) -> float | None:
        """Host-link bandwidth per direction at the link's best generation and width."""
        gen = self.pcie_max_gen or self.pcie_gen
        width = self.pcie_max_width or self.pcie_width
        return pcie_bandwidth(gen, width)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["peak_bandwidth_bytes_per_s"] = self.peak_bandwidth_bytes_per_s
        out["pcie_bandwidth_bytes_per_s"] = self.pcie_bandwidth_bytes_per_s
        return out


@dataclass
class TelemetrySample:
    """One reading of the live counters; None where the card does not report it."""

    t: float  # seconds, monotonic clock
    power_w: float | None = None
    memory_used_bytes: int | None = None
    gpu_util_pct: float | None = None  # % of time a kernel was running (not SM occupancy)
    mem_util_pct: float | None = None  # % of time memory was read or written (not bytes)
    temperature_c: float | None = None
    sm_clock_mhz: float | None = None
    mem_clock_mhz: float | None = None
    throttle_mask: int | None = None
    energy_mj: float | None = None  # total since driver load
    lost: bool = False  # the GPU stopped answering during this reading


def peak_bandwidth(max_mem_clock_mhz: float | None, bus_width_bits: float | None) -> float | None:
    """Bytes/s = 2 (double data rate) × clock × bus width / 8; None if either is unknown."""
    if not max_mem_clock_mhz or not bus_width_bits:
        return None
    return 2.0 * max_mem_clock_mhz * 1e6 * bus_width_bits / 8.0


def pcie_bandwidth(gen: int | None, width: int | None) -> float | None:
    """Bytes/s per direction of a PCIe link; None for an unknown generation or width."""
    if not gen or not width or gen not in PCIE_LANE_BYTES_PER_S:
        return None
    return PCIE_LANE_BYTES_PER_S[gen] * width


def describe_throttle(mask: int | None) -> list[str]:
    """Plain names of the clock-event reason bits set in `mask` ([] when none or unknown)."""
    if not mask:
        return []
    return [name for bit, name in THROTTLE_REASONS.items() if mask & bit]


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class NvmlGpu:
    """An open NVML handle to one GPU. Every query returns None instead of raising; a query that
    finds the GPU lost sets `lost` (the reason in words), and `close()` pairs the nvmlInit."""

    def __init__(self, nvml: Any, handle: Any, index: int) -> None:
        self.nvml = nvml
        self.handle = handle
        self.index = index
        self.lost: str | None = None
        self._closed = False

    def query(self, function: str, *args: Any, **kwargs: Any) -> Any:
        """Call `nvml.<function>(handle, *args)`; None if it is missing, unsupported or fails."""
        fn = getattr(self.nvml, function, None)
        if fn is None or self._closed:
            return None
        try:
            return fn(self.handle, *args, **kwargs)
        except self.nvml.NVMLError as error:
            if is_lost(error):
                self.lost = LOST_MESSAGE.format(error=error)
            return None

    def _memory(self) -> Any:
        v2 = getattr(self.nvml, "nvmlMemory_v2", None)
        if v2 is not None:  # v2 'used' excludes driver-reserved memory (drivers ≥ 515)
            try:
                return self.nvml.nvmlDeviceGetMemoryInfo(self.handle, version=v2)
            except (self.nvml.NVMLError, TypeError):
                pass
        return self.query("nvmlDeviceGetMemoryInfo")

    def _architecture(self) -> str | None:
        code = self.query("nvmlDeviceGetArchitecture")
        if code is None:
            return None
        for attr in dir(self.nvml):
            if attr.startswith("NVML_DEVICE_ARCH_") and getattr(self.nvml, attr) == code:
                return attr.removeprefix("NVML_DEVICE_ARCH_").title()
        return f"unknown ({code})"

    def energy_mj(self) -> float | None:
        """Total energy since the driver loaded, millijoules (Volta and newer)."""
        value = self.query("nvmlDeviceGetTotalEnergyConsumption")
        return None if value is None else float(value)

    def power_w(self) -> float | None:
        """Board power now, watts (a 1-s average on Ampere and newer, except GA100)."""
        value = self.query("nvmlDeviceGetPowerUsage")
        return None if value is None else value / 1000.0

    def snapshot(self) -> DeviceSnapshot:
        """Everything the page's device card shows."""
        n = self.nvml
        memory = self._memory()
        limit_mw = self.query("nvmlDeviceGetEnforcedPowerLimit")
        cc = self.query("nvmlDeviceGetCudaComputeCapability")
        driver = None
        try:
            driver = _text(n.nvmlSystemGetDriverVersion())
        except (n.NVMLError, AttributeError):
            pass
        name = self.query("nvmlDeviceGetName")
        if self.lost:
            return DeviceSnapshot(available=False, reason=self.lost, index=self.index, lost=True)
        return DeviceSnapshot(
            available=True,
            index=self.index,
            name=None if name is None else _text(name),
            driver=driver,
            architecture=self._architecture(),
            compute_capability=None if cc is None else f"{cc[0]}.{cc[1]}",
            vram_total_bytes=None if memory is None else int(memory.total),
            vram_used_bytes=None if memory is None else int(memory.used),
            bus_width_bits=self.query("nvmlDeviceGetMemoryBusWidth"),
            max_mem_clock_mhz=self.query("nvmlDeviceGetMaxClockInfo", getattr(n, "NVML_CLOCK_MEM", 2)),
            max_sm_clock_mhz=self.query("nvmlDeviceGetMaxClockInfo", getattr(n, "NVML_CLOCK_SM", 1)),
            pcie_gen=self.query("nvmlDeviceGetCurrPcieLinkGeneration"),
            pcie_width=self.query("nvmlDeviceGetCurrPcieLinkWidth"),
            pcie_max_gen=self.query("nvmlDeviceGetMaxPcieLinkGeneration"),
            pcie_max_width=self.query("nvmlDeviceGetMaxPcieLinkWidth"),
            power_limit_w=None if limit_mw is None else limit_mw / 1000.0,
            energy_counter=self.energy_mj() is not None,
        )

    def sample(self, clock: Callable[[], float] = time.monotonic) -> TelemetrySample:
        """One reading of the live counters (what the telemetry chart and the sampler record)."""
        n = self.nvml
        memory = self.query("nvmlDeviceGetMemoryInfo")
        util = self.query("nvmlDeviceGetUtilizationRates")
        mask = self.query("nvmlDeviceGetCurrentClocksEventReasons")
        if mask is None:  # the older name of the same call
            mask = self.query("nvmlDeviceGetCurrentClocksThrottleReasons")
        return TelemetrySample(
            t=clock(),
            power_w=self.power_w(),
            memory_used_bytes=None if memory is None else int(memory.used),
            gpu_util_pct=None if util is None else float(util.gpu),
            mem_util_pct=None if util is None else float(util.memory),
            temperature_c=self.query("nvmlDeviceGetTemperature", getattr(n, "NVML_TEMPERATURE_GPU", 0)),
            sm_clock_mhz=self.query("nvmlDeviceGetClockInfo", getattr(n, "NVML_CLOCK_SM", 1)),
            mem_clock_mhz=self.query("nvmlDeviceGetClockInfo", getattr(n, "NVML_CLOCK_MEM", 2)),
            throttle_mask=mask,
            energy_mj=self.energy_mj(),
            lost=self.lost is not None,
        )

    def close(self) -> None:
        """Release this handle's share of NVML (nvmlInit/nvmlShutdown are reference-counted)."""
        if not self._closed:
            self._closed = True
            try:
                self.nvml.nvmlShutdown()
            except Exception:  # shutting down must never fail a page
                pass


@dataclass
class NoGpu:
    """Why there is no NVIDIA GPU to talk to, in words a reader understands."""

    reason: str
    lost: bool = False  # there is one, but the driver says it is lost

    def snapshot(self) -> DeviceSnapshot:
        return DeviceSnapshot(available=False, reason=self.reason, lost=self.lost)

    def close(self) -> None:
        """Nothing to close: NVML was shut down (or never started) when this was made."""


def _init_failure(nvml: Any, error: Exception) -> str:
    kind = type(error).__name__
    if "LibraryNotFound" in kind:
        return NO_DRIVER
    if "DriverNotLoaded" in kind:
        return NOT_LOADED
    if "NoPermission" in kind:
        return NO_PERMISSION
    return NOT_STARTED.format(error=error)


def _handle_for_cuda_device(module: Any, pci_bus_id: str | None, uuid: str | None) -> Any:
    """The NVML handle of the GPU CUDA calls device N, found by PCI bus id, else by UUID."""
    for function, key in (("nvmlDeviceGetHandleByPciBusId", pci_bus_id), ("nvmlDeviceGetHandleByUUID", uuid)):
        if not key or not hasattr(module, function):
            continue
        try:
            return getattr(module, function)(key)
        except module.NVMLError:
            continue
    return None


def open_gpu(
    module: Any = None, index: int = 0, pci_bus_id: str | None = None, uuid: str | None = None
) -> NvmlGpu | NoGpu:
    """Start NVML and open one GPU: the one CUDA uses (by PCI bus id or UUID), else NVML index `index`.

    NVML numbers GPUs in PCI order and CUDA by speed (unless CUDA_DEVICE_ORDER=PCI_BUS_ID), and
    CUDA_VISIBLE_DEVICES renumbers them, so on a multi-GPU box index 0 can be two different cards.
    """
    if module is None:
        try:
            module = load_module()
        except ImportError:
            return NoGpu(NO_BINDINGS)
    try:
        module.nvmlInit()
    except module.NVMLError as error:
        return NoGpu(_init_failure(module, error))
    except OSError as error:  # a broken driver install can surface as a loader error
        return NoGpu(NOT_LOADABLE.format(error=error))
    try:
        count = module.nvmlDeviceGetCount()
    except module.NVMLError as error:
        module.nvmlShutdown()
        return _lost_or(error, NO_COUNT.format(error=error))
    if count < 1:
        module.nvmlShutdown()
        return NoGpu(NO_GPU_LISTED)
    handle = _handle_for_cuda_device(module, pci_bus_id, uuid)
    if handle is None:
        try:
            handle = module.nvmlDeviceGetHandleByIndex(min(index, count - 1))
        except module.NVMLError as error:
            module.nvmlShutdown()
            return _lost_or(error, NOT_OPENED.format(index=index, error=error))
    return NvmlGpu(module, handle, index)


def _lost_or(error: Exception, reason: str) -> NoGpu:
    """A lost GPU says so (and turns runs off); any other failure gives `reason`."""
    return NoGpu(LOST_MESSAGE.format(error=error), lost=True) if is_lost(error) else NoGpu(reason)


def open_cuda_gpu(module: Any = None, index: int = 0) -> NvmlGpu | NoGpu:
    """Open the GPU that CUDA calls device `index` (NVML index `index` when there is no CUDA)."""
    return open_gpu(module, index, pci_bus_id=cuda_pci_bus_id(index), uuid=cuda_uuid(index))


def probe(module: Any = None, index: int = 0) -> DeviceSnapshot:
    """Open the GPU CUDA calls device `index` (NVML index `index` without CUDA), read the card, close.
    Never raises."""
    gpu = open_cuda_gpu(module, index)
    try:
        return gpu.snapshot()
    finally:
        if isinstance(gpu, NvmlGpu):
            gpu.close()


def cuda_uuid(device_index: int = 0) -> str | None:
    """CUDA device `device_index`'s UUID as NVML spells it ('GPU-…'), or None without CUDA."""
    try:
        import torch

        if not torch.cuda.is_available():
            return None
        uuid = getattr(torch.cuda.get_device_properties(device_index), "uuid", None)
        if uuid is None:
            return None
        text = str(uuid)
        return text if text.startswith(("GPU-", "MIG-")) else f"GPU-{text}"
    except Exception:
        return None


def cuda_pci_bus_id(device_index: int = 0) -> str | None:
    """The PCI bus id of CUDA device `device_index` in NVML's format, or None without CUDA.

    NVML numbers GPUs in PCI order, CUDA by speed unless CUDA_DEVICE_ORDER=PCI_BUS_ID,
    so the bus id is how a CUDA device finds its NVML handle.
    """
    try:
        import torch

        if not torch.cuda.is_available():
            return None
        props = torch.cuda.get_device_properties(device_index)
        return f"{props.pci_domain_id:08x}:{props.pci_bus_id:02x}:{props.pci_device_id:02x}.0"
    except Exception:
        return None
