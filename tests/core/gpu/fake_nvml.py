"""A scripted stand-in for the `pynvml` module, so everything NVML-shaped runs without a GPU.

It has the same function names, constants and error classes the app uses. Tests pass it
where the real module would go:
`open_gpu(module=FakeNvml(...))`. `unsupported={"nvmlDeviceGetPowerUsage"}` makes that
call raise NotSupported, as it does on many laptop cards; `init_error="LibraryNotFound"`
behaves like a machine with no NVIDIA driver at all; `lose()` makes every later device call
raise GpuIsLost, as a card that fell off the bus does. `init_count` counts open nvmlInit
calls, and an nvmlShutdown without one raises, as the real library does.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass


class NVMLError(Exception):
    """Base of every fake NVML error (mirrors pynvml.NVMLError)."""


class NVMLError_NotSupported(NVMLError):  # noqa: N801 — pynvml's own spelling
    pass


class NVMLError_LibraryNotFound(NVMLError):  # noqa: N801
    pass


class NVMLError_DriverNotLoaded(NVMLError):  # noqa: N801
    pass


class NVMLError_NoPermission(NVMLError):  # noqa: N801
    pass


class NVMLError_Uninitialized(NVMLError):  # noqa: N801
    pass


class NVMLError_GpuIsLost(NVMLError):  # noqa: N801
    def __init__(self) -> None:
        super().__init__("GPU is lost")
        self.value = 15  # NVML_ERROR_GPU_IS_LOST


@dataclass
class _Memory:
    total: int
    free: int
    used: int


@dataclass
class _Utilization:
    gpu: int
    memory: int


# Every NVML call the app makes, so a test can take each one away in turn.
CALLS = (
    "nvmlSystemGetDriverVersion",
    "nvmlDeviceGetName",
    "nvmlDeviceGetArchitecture",
    "nvmlDeviceGetCudaComputeCapability",
    "nvmlDeviceGetMemoryInfo",
    "nvmlDeviceGetMemoryBusWidth",
    "nvmlDeviceGetMaxClockInfo",
    "nvmlDeviceGetClockInfo",
    "nvmlDeviceGetCurrPcieLinkGeneration",
    "nvmlDeviceGetCurrPcieLinkWidth",
    "nvmlDeviceGetMaxPcieLinkGeneration",
    "nvmlDeviceGetMaxPcieLinkWidth",
    "nvmlDeviceGetEnforcedPowerLimit",
    "nvmlDeviceGetPowerUsage",
    "nvmlDeviceGetTotalEnergyConsumption",
    "nvmlDeviceGetUtilizationRates",
    "nvmlDeviceGetTemperature",
    "nvmlDeviceGetCurrentClocksEventReasons",
    "nvmlDeviceGetCurrentClocksThrottleReasons",
)


class FakeNvml:
    """Looks like the pynvml module to the app; a card like an RTX 3060 12GB by default."""

    NVMLError = NVMLError
    NVMLError_NotSupported = NVMLError_NotSupported
    NVMLError_LibraryNotFound = NVMLError_LibraryNotFound
    NVMLError_DriverNotLoaded = NVMLError_DriverNotLoaded
    NVMLError_NoPermission = NVMLError_NoPermission
    NVMLError_Uninitialized = NVMLError_Uninitialized
    NVMLError_GpuIsLost = NVMLError_GpuIsLost
    NVML_CLOCK_SM = 1
    NVML_CLOCK_MEM = 2
    NVML_TEMPERATURE_GPU = 0
    NVML_DEVICE_ARCH_PASCAL = 4
    NVML_DEVICE_ARCH_VOLTA = 5
    NVML_DEVICE_ARCH_TURING = 6
    NVML_DEVICE_ARCH_AMPERE = 7
    NVML_DEVICE_ARCH_ADA = 8
    NVML_DEVICE_ARCH_HOPPER = 9
    nvmlMemory_v2 = 0x2000028

    def __init__(
        self,
        unsupported: set[str] | frozenset[str] = frozenset(),
        init_error: str | None = None,
        device_count: int = 1,
        name: str = "NVIDIA GeForce RTX 3060",
        vram_total: int = 12 * 1024**3,
        vram_used: int = 1 * 1024**3,
        bus_width: int = 192,
        max_mem_clock: int = 7501,
        pcie: tuple[int, int] = (4, 16),
        power_limit_mw: int = 170_000,
        power_w: Callable[[float], float] | float = 42.0,
        energy_mj: Callable[[float], float] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.unsupported = set(unsupported)
        self.init_error = init_error
        self.device_count = device_count
        self.name = name
        self.vram_total = vram_total
        self.vram_used = vram_used
        self.bus_width = bus_width
        self.max_mem_clock = max_mem_clock
        self.pcie = pcie
        self.power_limit_mw = power_limit_mw
        self._power = power_w if callable(power_w) else (lambda t, w=power_w: w)
        self._energy = energy_mj if energy_mj is not None else (lambda t: 1.0e9 + 42_000.0 * t)
        self.clock = clock
        self.init_count = 0
        self.calls: list[str] = []
        self.lost = False

    def lose(self) -> None:
        """From now on every device call answers GPU_IS_LOST."""
        self.lost = True

    # -- plumbing -------------------------------------------------------------
    def _call(self, name: str) -> None:
        self.calls.append(name)
        if self.init_count < 1:
            raise NVMLError_Uninitialized("Uninitialized")
        if self.lost and name not in ("nvmlDeviceGetCount", "nvmlSystemGetDriverVersion"):
            raise NVMLError_GpuIsLost()
        if name in self.unsupported:
            raise NVMLError_NotSupported("Not Supported")

    def nvmlInit(self) -> None:  # noqa: N802 — NVML's names
        if self.init_error is not None:
            raise getattr(self, f"NVMLError_{self.init_error}", NVMLError)(self.init_error)
        self.init_count += 1

    def nvmlShutdown(self) -> None:  # noqa: N802
        if self.init_count < 1:
            raise NVMLError_Uninitialized("Uninitialized")  # a shutdown that no init paired
        self.init_count -= 1

    def nvmlDeviceGetCount(self) -> int:  # noqa: N802
        self._call("nvmlDeviceGetCount")
        return self.device_count

    def nvmlDeviceGetHandleByIndex(self, index: int) -> int:  # noqa: N802
        self._call("nvmlDeviceGetHandleByIndex")
        return index

    # -- device queries ---------------------------------------------------------
    def nvmlSystemGetDriverVersion(self) -> str:  # noqa: N802
        self._call("nvmlSystemGetDriverVersion")
        return "580.65.06"

    def nvmlDeviceGetName(self, handle: int) -> str:  # noqa: N802
        self._call("nvmlDeviceGetName")
        return self.name

    def nvmlDeviceGetArchitecture(self, handle: int) -> int:  # noqa: N802
        self._call("nvmlDeviceGetArchitecture")
        return self.NVML_DEVICE_ARCH_AMPERE

    def nvmlDeviceGetCudaComputeCapability(self, handle: int) -> tuple[int, int]:  # noqa: N802
        self._call("nvmlDeviceGetCudaComputeCapability")
        return (8, 6)

    def nvmlDeviceGetMemoryInfo(self, handle: int, version: int | None = None) -> _Memory:  # noqa: N802
        self._call("nvmlDeviceGetMemoryInfo")
        return _Memory(self.vram_total, self.vram_total - self.vram_used, self.vram_used)

    def nvmlDeviceGetMemoryBusWidth(self, handle: int) -> int:  # noqa: N802
        self._call("nvmlDeviceGetMemoryBusWidth")
        return self.bus_width

    def nvmlDeviceGetMaxClockInfo(self, handle: int, clock_type: int) -> int:  # noqa: N802
        self._call("nvmlDeviceGetMaxClockInfo")
        return self.max_mem_clock if clock_type == self.NVML_CLOCK_MEM else 1882

    def nvmlDeviceGetClockInfo(self, handle: int, clock_type: int) -> int:  # noqa: N802
        self._call("nvmlDeviceGetClockInfo")
        return 7300 if clock_type == self.NVML_CLOCK_MEM else 1777

    def nvmlDeviceGetCurrPcieLinkGeneration(self, handle: int) -> int:  # noqa: N802
        self._call("nvmlDeviceGetCurrPcieLinkGeneration")
        return 1  # idle cards train the link down

    def nvmlDeviceGetCurrPcieLinkWidth(self, handle: int) -> int:  # noqa: N802
        self._call("nvmlDeviceGetCurrPcieLinkWidth")
        return self.pcie[1]

    def nvmlDeviceGetMaxPcieLinkGeneration(self, handle: int) -> int:  # noqa: N802
        self._call("nvmlDeviceGetMaxPcieLinkGeneration")
        return self.pcie[0]

    def nvmlDeviceGetMaxPcieLinkWidth(self, handle: int) -> int:  # noqa: N802
        self._call("nvmlDeviceGetMaxPcieLinkWidth")
        return self.pcie[1]

    def nvmlDeviceGetEnforcedPowerLimit(self, handle: int) -> int:  # noqa: N802
        self._call("nvmlDeviceGetEnforcedPowerLimit")
        return self.power_limit_mw

    def nvmlDeviceGetPowerUsage(self, handle: int) -> int:  # noqa: N802
        self._call("nvmlDeviceGetPowerUsage")
        return int(round(self._power(self.clock()) * 1000))

    def nvmlDeviceGetTotalEnergyConsumption(self, handle: int) -> int:  # noqa: N802
        self._call("nvmlDeviceGetTotalEnergyConsumption")
        return int(round(self._energy(self.clock())))

    def nvmlDeviceGetUtilizationRates(self, handle: int) -> _Utilization:  # noqa: N802
        self._call("nvmlDeviceGetUtilizationRates")
        return _Utilization(gpu=97, memory=81)

    def nvmlDeviceGetTemperature(self, handle: int, sensor: int) -> int:  # noqa: N802
        self._call("nvmlDeviceGetTemperature")
        return 61

    def nvmlDeviceGetCurrentClocksEventReasons(self, handle: int) -> int:  # noqa: N802
        self._call("nvmlDeviceGetCurrentClocksEventReasons")
        return 0x4

    def nvmlDeviceGetCurrentClocksThrottleReasons(self, handle: int) -> int:  # noqa: N802
        self._call("nvmlDeviceGetCurrentClocksThrottleReasons")
        return 0x4
