"""What is timed: small decode models sized by a preset, their caches and kernels, and real checkpoints behind one protocol."""
