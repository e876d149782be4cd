"""Test-wide settings: one torch thread (the tiny models are overhead-bound, and CI has 2 cores)."""

import torch

torch.set_num_threads(1)
