"""Does Your GPU's GPU benchmark measure the memory wall? Seven checks, each against a stated range.

    timeout -s TERM -k 20 570 python -m bench.gpu_validate --out docs/gpu-runs/<name>   # one GPU, ≤ 9 min
    python -m bench.gpu_validate --out /tmp/dry --cpu-ok           # CPU dry run, tiny sizes, seconds

Run from the repository root. One module per check, named in the order they run; a check keeps
the number it has always had in `--checks` and in the JSON (so 7 runs fifth, 6 sixth, 5 last):

- step1_decode (check 1)        kernels per step, eager vs CUDA-graph tokens/s at depth 0 and 64K,
                                MoE (experts gathered) vs dense, the MoE sized from the card
- step2_bandwidth (check 2)     device copy at 2 GiB vs an L2-sized copy; a bf16 GEMV; pinned vs
                                pageable host→device
- step3_spill (check 3)         one depth under a 16 GiB budget: copies per step, host-blocking calls,
                                memory held vs the budget, pinned memory after release, spill roofline
- step4_energy (check 4)        idle power after two rests vs right after work; the energy counter vs
                                power sampled from 1 s before an 8 s window
- step5_batch (check 7)         decode at batch 1, 4, 16, 64 at depth 16K: Qwen3-8B's shapes against
                                Qwen3.5-9B's, built on the device from their configs (random weights),
                                the largest batch that fits beside the planner's (core.gpu.suites.batch_bench)
- step6_newer_kernels (check 6) in its own process under a hard limit: a ≤ 20 s preflight, then the
                                fused Triton state step and the in-place MoE ways, timed and checked
                                against the PyTorch ways. Default-deny: check 5 skips every newer way
                                (`--skip-ways`) except those this check cleared
- step7_end_to_end (check 5)    `python -m core.gpu.bench --preset large --vram-budget-gb 16
                                --moe-sized-by-card --retime-dense` in its own process

Beside them: runner (the Validator: one check at a time, its budget, the JSON after each), sizes
(how big each check runs on a GPU and in the dry run), decode_runs (what checks 1 and 6 share),
probes (the small measurements), verdicts (expectations with a range), preflight and child_run
(check 6's first look and its own process).

Every check prints PASS/FAIL per expectation (SKIP: needs a GPU, the dry run still runs the code;
INFO: a value recorded without a range) and the JSON in the --out folder (validate.json, plus
bench.json from check 5) is rewritten after each check. Each check has a budget (CHECK_BUDGET_S) so
the whole call ends within 9 minutes on an H200. Needs only torch, numpy and nvidia-ml-py. Exit
status: 0 all passed, 1 something failed, 2 bad arguments, 128 + N after signal N (what was
measured is kept).
"""
