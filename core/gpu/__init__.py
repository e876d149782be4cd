"""Your GPU's GPU benchmarks: the device, decode models, timing, suites, serving and output, one sub-package each."""
