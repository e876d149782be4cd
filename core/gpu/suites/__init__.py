"""The benchmarks themselves: context vs speed, batch, dense vs MoE, a real checkpoint, and sizing an MoE by the card."""
