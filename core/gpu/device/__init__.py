"""The reader's GPU as the driver reports it: NVML, a background sampler, live telemetry, health and energy."""
