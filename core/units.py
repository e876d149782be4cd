"""Numbers as a reader reads them: bytes, SI counts, context lengths, parameter counts.

Pure functions, no plotting and no Streamlit, so figures, tables and the GPU report
all format the same number the same way.
"""

from __future__ import annotations

import math

from core.i18n import N_, _, is_japanese, ngettext, with_percent


def format_bytes(n: float) -> str:
    """Human-readable binary size: 36864 → '36.0 KiB'."""
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


def format_si(v: float) -> str:
    """Short tick text: 2000 → '2k', 1.5e6 → '1.5M', 0.2 → '0.2'."""
    for size, suffix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(v) >= size:
            return f"{v / size:g}{suffix}"
    return f"{v:g}"


def format_params(n: float) -> str:
    """Parameter counts the way papers say them: 124M, 8.0B, 671B, 2.8T (in Japanese by 10⁴ steps to three
    figures: '1.24億', '80億', '6,710億', '2.8兆')."""
    if is_japanese():
        return _japanese_figures(n, ((1e12, "兆"), (1e8, "億"), (1e4, "万")))
    for size, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")):
        if abs(n) >= size:
            value = n / size
            return f"{value:.1f}{suffix}" if value < 10 else f"{value:,.0f}{suffix}"
    return f"{n:,.0f}"


def format_count(n: float) -> str:
    """Big counts in words, for prose a beginner reads: 2.62e12 → '2.6 trillion', 3.3e9 → '3.3 billion', 96 → '96'
    (in Japanese by its own steps of 10⁴: '2.6兆', '33億', '1,200万')."""
    if is_japanese():
        return _count_in_japanese(n)
    for size, word in ((1e12, "trillion"), (1e9, "billion"), (1e6, "million")):
        if abs(n) >= size:
            value = n / size
            return f"{value:.1f} {word}" if value < 10 else f"{value:,.0f} {word}"
    return f"{n:,.0f}"


def format_billions(n: float) -> str:
    """A parameter count to three figures for a table: '8.03 B' (in Japanese by 10⁸, '80.3億'; from 10¹² on,
    '2.78兆')."""
    if not is_japanese():
        return f"{n / 1e9:,.2f} B"
    return _japanese_figures(n, ((1e12, "兆"), (1e8, "億")))


def _japanese_figures(n: float, steps: tuple[tuple[float, str], ...]) -> str:
    """`n` in the largest of `steps` it reaches, to three figures (never rounding away whole units)."""
    for size, word in steps:
        if abs(n) >= size:
            value = n / size
            return f"{value:,.3g}{word}" if abs(value) < 1000 else f"{value:,.0f}{word}"
    return f"{n:,.0f}"


def _count_in_japanese(n: float) -> str:
    """Japanese counts big numbers in steps of 10⁴ (万), 10⁸ (億), 10¹² (兆), 10¹⁶ (京): 124e6 → '1.2億';
    from 10¹⁶ on in 京 and 兆 together, as a Japanese reader writes it: 1.44397e17 → '14京4,397兆'."""
    if abs(n) >= 1e16:
        sign = "-" if n < 0 else ""
        cho = round(abs(n) / 1e12)  # the count in 兆, rounded: finer digits are noise at this size
        kei, rest = divmod(cho, 10_000)
        return f"{sign}{kei:,}京" + (f"{rest:,}兆" if rest else "")
    for size, word in ((1e12, "兆"), (1e8, "億"), (1e6, "万")):
        if abs(n) >= size:
            value = n / size
            if word == "万":
                return f"{value * 100:,.0f}{word}"
            return f"{value:.1f}{word}" if value < 10 else f"{value:,.0f}{word}"
    return f"{n:,.0f}"


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def format_small(x: float) -> str:
    """A small difference as a reader writes it: 2.2e-16 → '2.2 × 10⁻¹⁶', 0.034 → '0.034', 0 → '0'
    (float rounding shows up in parity checks; 'e-16' is programmer's notation)."""
    x = float(x)
    if not math.isfinite(x):
        return str(x)  # 'nan', 'inf': the check itself failed, and the page says so
    sign = "−" if x < 0 else ""
    rounded = f"{abs(x):.1e}"  # rounding may carry into the next power: 9.99e-4 → 1.0e-03
    if x == 0 or float(rounded) >= 1e-3:
        return sign + f"{abs(x):.3g}"
    mantissa, exponent = rounded.split("e")
    return f"{sign}{mantissa.removesuffix('.0')} × 10{str(int(exponent)).translate(_SUPERSCRIPT)}"


def signed_percent(change: float) -> str:
    """A relative change as a reader writes it, with a true minus sign: 0.31 → '+31 %', -0.91 → '−91 %'
    (Japanese writes the sign against the number, '−91%', so a line never starts with a lone 「%」)."""
    return with_percent(f"{100 * change:+.0f}").replace("-", "−")


def counted(n: int, noun: str) -> str:
    """A count with its noun in the right number: (1, 'token') → '1 token', (3, 'token') → '3 tokens'
    (in Japanese with the noun's counter: '3トークン', '3層', '2組')."""
    phrase = _counted_phrases(n).get(noun)
    if phrase is not None:
        return phrase.format(n=f"{n:,}")
    if is_japanese():
        return f"{n:,} {_(noun)}"
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"


def _counted_phrases(n: int) -> dict[str, str]:
    """The nouns the pages count, each as one translatable phrase (a Japanese counter differs per noun)."""
    return {
        "token": ngettext("{n} token", "{n} tokens", n),
        "byte": ngettext("{n} byte", "{n} bytes", n),
        "layer": ngettext("{n} layer", "{n} layers", n),
        "expert": ngettext("{n} expert", "{n} experts", n),
        "row": ngettext("{n} row", "{n} rows", n),
        "pair": ngettext("{n} pair", "{n} pairs", n),
        "key": ngettext("{n} key", "{n} keys", n),
        "sequence": ngettext("{n} sequence", "{n} sequences", n),
    }


UNIT_NAMES = (N_("byte"), N_("token"))  # the units a tokenizer counts in (core.tokenizer), shown as _(unit)


def format_context(tokens: int) -> str:
    """1024 → '1K', 131072 → '128K', 1048576 → '1M' (binary steps, as context lengths are quoted)."""
    if tokens >= 1024**2 and tokens % 1024**2 == 0:
        return f"{tokens // 1024**2}M"
    if tokens >= 1024 and tokens % 1024 == 0:
        return f"{tokens // 1024}K"
    return f"{tokens:,}"
