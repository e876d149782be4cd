"""Milliseconds per generated token with and without a KV cache, by context length.

    python -m bench.generation [--repeats 7] [--threads 1]
    python -m bench.generation --real [--folder PATH] [--new 32] [--threads 0]

`--real`: a GPT-2 in Hugging Face format loaded through core/models/hf_gpt2.py — the folder
given, else GPT-2 small's shape (124M parameters, RANDOM weights made here with transformers,
never downloaded) — generating greedily with and without our cache, beside transformers' own
`GPT2LMHeadModel.generate` on the same weights, prompt and threads, in one run. Same work on
both sides: a prompt of `--prompt` tokens, then `--new` tokens; ms/token = wall time / new
tokens; the four variants run interleaved (best and median of `--repeats` rounds). Prints the
ratio ours / transformers (below 1 = we are faster).

Method (llama-bench style): for each context d, fill the cache to d − 1 positions
(untimed), then time one single-token step; without a cache, time one forward pass
over all d positions — what GPT-2's original sampling loop did for every token.
Median of `repeats` timed steps after warm-up. The shipped checkpoint's window is
256 bytes, so contexts up to 1024 use a same-shape *untrained* model with a
1024-position table: speed depends on shapes, not on what the weights learned.
Prints numbers; never passes or fails.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import torch

from core.models.gpt2 import GPT2, GPT2Config

CONTEXTS = (64, 128, 256, 512, 1024)


@torch.no_grad()
def step_ms(model: GPT2, context: int, use_cache: bool, repeats: int, warmup: int = 2) -> float:
    """Median wall time (ms) of the step that reads `context` positions."""
    gen = torch.Generator().manual_seed(context)
    times = []
    for i in range(warmup + repeats):
        ids = torch.randint(0, 256, (1, context), generator=gen)  # (1, d)
        if use_cache:
            cache = model.new_cache()
            model(ids[:, :-1], cache)  # untimed prefill of d − 1 positions
            started = time.perf_counter()
            model(ids[:, -1:], cache)  # one new position against d − 1 cached ones
        else:
            started = time.perf_counter()
            model(ids)  # all d positions again
        if i >= warmup:
            times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def _interleaved(runs: dict, repeats: int) -> dict:
    """Each fn in `runs` once as warm-up, then `repeats` rounds of every fn in turn (so load from
    other programs falls on all of them alike); per fn: (best s, median s, output)."""
    outputs = {name: fn() for name, fn in runs.items()}
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeats):
        for name, fn in runs.items():
            started = time.perf_counter()
            outputs[name] = fn()
            times[name].append(time.perf_counter() - started)
    return {name: (min(t), statistics.median(t), outputs[name]) for name, t in times.items()}


def _gpt2_small_folder(tmp: Path) -> Path:
    """GPT-2 small's shape with random weights, written by transformers (dev dependency)."""
    try:
        from transformers import GPT2Config as HFConfig
        from transformers import GPT2LMHeadModel
    except ImportError:
        raise SystemExit(
            "--real without --folder needs transformers (pip install -r requirements-dev.txt)"
        ) from None
    from bench.hf_tiny_gpt2 import padded_tokenizer

    torch.manual_seed(0)
    padded_tokenizer(50257).save(str(tmp / "tokenizer.json"))  # a tiny BPE padded to GPT-2's 50,257 ids
    config = HFConfig(
        vocab_size=50257
    )  # defaults = GPT-2 small: 12 layers, 12 heads, 768 wide, 1024 positions
    GPT2LMHeadModel(config).eval().save_pretrained(tmp)
    return tmp


@torch.no_grad()
def real(folder: Path | None, prompt_len: int, new: int, repeats: int) -> None:
    import tempfile

    from core.generation import generate
    from core.models.hf_gpt2 import load_gpt2

    with tempfile.TemporaryDirectory() as tmp:
        name = folder.name if folder else "GPT-2 small's shape, random weights"
        folder = folder or _gpt2_small_folder(Path(tmp))
        loaded = load_gpt2(folder)
        model, c = loaded.model, loaded.config
        prompt = torch.randint(
            0,
            min(c.vocab_size, loaded.tokenizer.vocab_size),
            (prompt_len,),
            generator=torch.Generator().manual_seed(1),
        ).tolist()
        print(
            f"{name}: {model.num_params():,} parameters, {c.n_layer} layers x "
            f"{c.n_head} heads x {c.d_model} wide, fp32, {torch.get_num_threads()} CPU thread(s); prompt {prompt_len} "
            f"tokens, then {new} new tokens (greedy); {repeats} interleaved rounds after a warm-up\n"
        )
        runs = {
            "ours, KV cache": lambda: generate(model, prompt, new, use_cache=True),
            "ours, no cache": lambda: generate(model, prompt, new, use_cache=False),
        }
        try:
            from transformers import GPT2LMHeadModel
        except ImportError:
            print("transformers is not installed: only our numbers (pip install -r requirements-dev.txt)")
        else:
            hf = GPT2LMHeadModel.from_pretrained(folder).eval()
            ids = torch.tensor([prompt])

            def theirs(use_cache: bool) -> list[int]:
                out = hf.generate(
                    ids,
                    attention_mask=torch.ones_like(ids),
                    max_new_tokens=new,
                    min_new_tokens=new,
                    do_sample=False,
                    use_cache=use_cache,
                    pad_token_id=0,
                )
                return out[0, prompt_len:].tolist()

            runs["transformers generate, cache"] = lambda: theirs(True)
            runs["transformers generate, no cache"] = lambda: theirs(False)
        rows = _interleaved(runs, repeats)
    print(f"{'ms per new token':38} {'best':>8} {'median':>8} {'tokens/s (best)':>16}")
    for name, (best, median, _) in rows.items():
        print(f"{name:38} {best * 1000 / new:>8.2f} {median * 1000 / new:>8.2f} {new / best:>16.1f}")
    ours, ours_median, tokens = rows["ours, KV cache"]
    if "transformers generate, cache" in rows:
        theirs_best, theirs_median, their_tokens = rows["transformers generate, cache"]
        print(
            f"\nratio ours / transformers, both with a cache: {ours / theirs_best:.2f} best, "
            f"{ours_median / theirs_median:.2f} median (below 1 = ours is faster)"
        )
        print(f"greedy tokens identical to transformers': {tokens == their_tokens}")
    print(f"our cache speed-up at this length: {rows['ours, no cache'][0] / ours:.1f}x")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--threads", type=int, default=1, help="CPU threads (0 = torch's default)")
    parser.add_argument("--real", action="store_true", help="a GPT-2 in HF format vs transformers' generate")
    parser.add_argument(
        "--folder", type=Path, default=None, help="with --real: a local GPT-2 checkpoint folder"
    )
    parser.add_argument("--prompt", type=int, default=32, help="with --real: prompt length in tokens")
    parser.add_argument("--new", type=int, default=32, help="with --real: new tokens per generation")
    args = parser.parse_args(argv)
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    if args.real:
        real(args.folder, args.prompt, args.new, max(1, args.repeats if args.repeats != 7 else 5))
        return
    torch.manual_seed(0)
    shipped = GPT2Config()
    config = GPT2Config(block_size=max(CONTEXTS))
    model = GPT2(config).eval()
    print(
        f"tiny GPT-2 shape: {config.n_layer} layers x {config.n_head} heads x d_model {config.d_model}, "
        f"{model.num_params():,} parameters, fp32, {args.threads} CPU thread(s)\n"
        f"note: the shipped checkpoint's window is {shipped.block_size} bytes; this bench uses a same-shape "
        f"UNTRAINED model with a {config.block_size}-position table (speed depends on shape, not weights)\n"
        f"median of {args.repeats} timed single-token steps after 2 warm-ups\n"
    )
    print(f"{'context':>8} {'no cache ms/token':>18} {'KV cache ms/token':>18} {'ratio':>8}")
    for context in CONTEXTS:
        plain = step_ms(model, context, use_cache=False, repeats=args.repeats)
        cached = step_ms(model, context, use_cache=True, repeats=args.repeats)
        print(f"{context:>8} {plain:>18.2f} {cached:>18.2f} {plain / cached:>7.1f}x")


if __name__ == "__main__":
    main()
