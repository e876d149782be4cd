"""Where a benchmark runs and how it is timed: the device, its dtype, copy bandwidth, eager and CUDA-graph timers."""
