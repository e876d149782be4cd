"""NVML probing without a GPU: a scripted fake stands in for pynvml (tests/core/gpu/fake_nvml.py). On a
machine with two cards the handle opened is the CUDA device's card, found by PCI bus id or UUID."""

from __future__ import annotations

import pytest

from core.gpu.device import nvml
from core.gpu.device.sampler import Sampler
from tests.core.gpu.fake_nvml import CALLS, FakeNvml

# Which snapshot field each call feeds (calls that only feed telemetry map to None).
FIELD_OF_CALL = {
    "nvmlSystemGetDriverVersion": "driver",
    "nvmlDeviceGetName": "name",
    "nvmlDeviceGetArchitecture": "architecture",
    "nvmlDeviceGetCudaComputeCapability": "compute_capability",
    "nvmlDeviceGetMemoryInfo": "vram_total_bytes",
    "nvmlDeviceGetMemoryBusWidth": "bus_width_bits",
    "nvmlDeviceGetMaxClockInfo": "max_mem_clock_mhz",
    "nvmlDeviceGetCurrPcieLinkGeneration": "pcie_gen",
    "nvmlDeviceGetCurrPcieLinkWidth": "pcie_width",
    "nvmlDeviceGetMaxPcieLinkGeneration": "pcie_max_gen",
    "nvmlDeviceGetMaxPcieLinkWidth": "pcie_max_width",
    "nvmlDeviceGetEnforcedPowerLimit": "power_limit_w",
}


def test_full_snapshot_of_a_fake_rtx3060():
    snap = nvml.probe(FakeNvml())
    assert snap.available and snap.reason == ""
    assert snap.name == "NVIDIA GeForce RTX 3060"
    assert snap.driver == "580.65.06"
    assert snap.architecture == "Ampere" and snap.compute_capability == "8.6"
    assert snap.vram_total_bytes == 12 * 1024**3 and snap.vram_used_bytes == 1024**3
    assert snap.power_limit_w == 170.0
    assert snap.energy_counter is True
    # hand calculation: 2 × 7501 MHz × 192 bit / 8 = 360.048 GB/s (spec sheet: 360 GB/s)
    assert snap.peak_bandwidth_bytes_per_s == pytest.approx(2 * 7501e6 * 192 / 8)
    assert snap.peak_bandwidth_bytes_per_s / 1e9 == pytest.approx(360.048)
    # Gen4 x16 = 31.5 GB/s each way, judged at the link's best (it idles at Gen1)
    assert snap.pcie_gen == 1 and snap.pcie_max_gen == 4
    assert snap.pcie_bandwidth_bytes_per_s == pytest.approx(31.5e9)
    d = snap.to_dict()
    assert d["peak_bandwidth_bytes_per_s"] == pytest.approx(360.048e9)


@pytest.mark.parametrize("call", CALLS)
def test_each_unsupported_call_still_gives_a_snapshot_and_a_sample(call):
    fake = FakeNvml(unsupported={call})
    snap = nvml.probe(fake)
    assert snap.available
    field = FIELD_OF_CALL.get(call)
    if field is not None:
        assert getattr(snap, field) is None
    if call == "nvmlDeviceGetTotalEnergyConsumption":
        assert snap.energy_counter is False
    gpu = nvml.open_gpu(fake)
    sample = gpu.sample()
    assert sample.t > 0
    gpu.close()
    assert fake.init_count == 0  # every open was closed


def test_everything_unsupported_still_gives_a_snapshot():
    fake = FakeNvml(unsupported=set(CALLS))
    snap = nvml.probe(fake)
    assert snap.available
    assert (
        snap.name is None
        and snap.peak_bandwidth_bytes_per_s is None
        and snap.pcie_bandwidth_bytes_per_s is None
    )
    gpu = nvml.open_gpu(fake)
    sample = gpu.sample()
    assert (sample.power_w, sample.temperature_c, sample.throttle_mask, sample.energy_mj) == (None,) * 4


def test_throttle_falls_back_to_the_old_call_name():
    gpu = nvml.open_gpu(FakeNvml(unsupported={"nvmlDeviceGetCurrentClocksEventReasons"}))
    assert gpu.sample().throttle_mask == 0x4
    assert nvml.describe_throttle(0x4 | 0x40) == ["software power cap", "hardware thermal slowdown"]
    assert nvml.describe_throttle(None) == []


@pytest.mark.parametrize(
    ("init_error", "words"),
    [
        ("LibraryNotFound", "No NVIDIA driver"),
        ("DriverNotLoaded", "not loaded"),
        ("NoPermission", "permission"),
    ],
)
def test_no_driver_gives_a_plain_reason(init_error, words):
    snap = nvml.probe(FakeNvml(init_error=init_error))
    assert not snap.available
    assert words in snap.reason
    assert snap.name is None


def test_driver_without_gpus():
    fake = FakeNvml(device_count=0)
    snap = nvml.probe(fake)
    assert not snap.available and "no GPU" in snap.reason
    assert fake.init_count == 0


def test_missing_bindings(monkeypatch):
    def no_module():
        raise ImportError("No module named 'pynvml'")

    monkeypatch.setattr(nvml, "load_module", no_module)
    snap = nvml.probe()
    assert not snap.available and "nvidia-ml-py" in snap.reason


def test_real_bindings_on_this_machine_never_raise():
    snap = nvml.probe()  # the real pynvml: no driver here (CI), a real card elsewhere
    assert isinstance(snap.available, bool)
    if not snap.available:
        assert snap.reason


def test_peak_and_link_bandwidth_helpers():
    # RTX 4090: 10501 MHz × 384 bit → 1008 GB/s; H100 SXM: 2619 MHz × 5120 bit → 3352 GB/s (reference §2.2)
    assert nvml.peak_bandwidth(10501, 384) / 1e9 == pytest.approx(1008.096)
    assert nvml.peak_bandwidth(2619, 5120) / 1e9 == pytest.approx(3352.32)
    assert nvml.peak_bandwidth(None, 384) is None
    assert nvml.pcie_bandwidth(5, 8) == pytest.approx(31.5e9)
    assert nvml.pcie_bandwidth(3, 16) == pytest.approx(15.75e9)
    assert nvml.pcie_bandwidth(9, 16) is None


def test_sampler_reads_a_fake_gpu_into_a_bounded_buffer():
    gpu = nvml.open_gpu(FakeNvml(power_w=lambda t: 100.0))
    sampler = Sampler(gpu.sample, interval_s=0.01, maxlen=5)
    sampler.start()
    assert sampler.running
    deadline = __import__("time").monotonic() + 10
    while len(sampler.snapshot()) < 5 and __import__("time").monotonic() < deadline:
        __import__("time").sleep(0.01)
    sampler.stop()
    assert not sampler.running
    samples = sampler.snapshot()
    assert len(samples) == 5  # bounded: older readings dropped
    assert all(s.power_w == 100.0 and s.temperature_c == 61 for s in samples)
    assert [s.t for s in samples] == sorted(s.t for s in samples)


def test_sampler_survives_a_failing_reading():
    calls = {"n": 0}

    def flaky():
        calls["n"] += 1
        if calls["n"] % 2:
            raise RuntimeError("sensor busy")
        return calls["n"]

    sampler = Sampler(flaky, interval_s=0.5)
    for _ in range(4):
        sampler.sample_now()
    assert sampler.snapshot() == [2, 4]
    assert sampler.errors == 2 and "sensor busy" in sampler.last_error
    with pytest.raises(ValueError):
        Sampler(flaky, interval_s=0)


def test_sampler_stops_by_itself_after_max_readings():
    sampler = Sampler(lambda: 1, interval_s=0.005, maxlen=100, max_readings=4)
    sampler.start()
    sampler._thread.join(10)
    assert not sampler.running
    assert len(sampler.snapshot()) == 4


class TwoCards(FakeNvml):
    """Two GPUs; NVML index 0 is the one CUDA does NOT use (CUDA ordered them by speed)."""

    BUS = {"00000000:01:00.0": 0, "00000000:41:00.0": 1}
    UUID = {"GPU-aaaa": 0, "GPU-bbbb": 1}

    def __init__(self, **kw):
        super().__init__(device_count=2, **kw)

    def nvmlDeviceGetHandleByPciBusId(self, bus_id):  # noqa: N802 — NVML's names
        self._call("nvmlDeviceGetHandleByPciBusId")
        if bus_id not in self.BUS:
            raise self.NVMLError("Not Found")
        return self.BUS[bus_id]

    def nvmlDeviceGetHandleByUUID(self, uuid):  # noqa: N802
        self._call("nvmlDeviceGetHandleByUUID")
        if uuid not in self.UUID:
            raise self.NVMLError("Not Found")
        return self.UUID[uuid]


def test_the_nvml_handle_is_the_cuda_devices_card():
    assert nvml.open_gpu(TwoCards(), 0, pci_bus_id="00000000:41:00.0").handle == 1
    assert nvml.open_gpu(TwoCards(), 0, pci_bus_id="00000000:99:00.0", uuid="GPU-bbbb").handle == 1  # by UUID
    assert nvml.open_gpu(TwoCards(), 0, pci_bus_id=None, uuid=None).handle == 0  # no CUDA: NVML's index
    assert (
        nvml.open_gpu(FakeNvml(), 0, pci_bus_id="00000000:41:00.0").handle == 0
    )  # bindings without the call


def test_probe_asks_for_the_cuda_devices_card(monkeypatch):
    monkeypatch.setattr(nvml, "cuda_pci_bus_id", lambda i=0: "00000000:41:00.0")
    monkeypatch.setattr(nvml, "cuda_uuid", lambda i=0: None)
    fake = TwoCards()
    assert nvml.probe(fake).available and "nvmlDeviceGetHandleByPciBusId" in fake.calls
