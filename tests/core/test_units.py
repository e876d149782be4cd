"""core.units: the one place numbers become reader-facing text."""

from __future__ import annotations

from core.units import counted, format_bytes, format_context, format_count, format_params, format_si


def test_format_bytes_binary_steps():
    assert format_bytes(0) == "0 B"
    assert format_bytes(1023) == "1,023 B"
    assert format_bytes(36864) == "36.0 KiB"
    assert format_bytes(3 * 1024**3 // 2) == "1.5 GiB"
    assert format_bytes(5 * 1024**5) == "5,120.0 TiB"  # no unit past TiB


def test_format_si_short_ticks():
    assert [format_si(v) for v in (0.2, 5, 2000, 1.5e6, 3e9, 2e12)] == ["0.2", "5", "2k", "1.5M", "3G", "2T"]


def test_format_params_as_papers_say_them():
    assert [format_params(n) for n in (124e6, 8.03e9, 671e9, 2.8e12, 512)] == [
        "124M",
        "8.0B",
        "671B",
        "2.8T",
        "512",
    ]


def test_format_context_binary_steps():
    assert [format_context(t) for t in (1024, 131072, 1048576, 1000, 1536)] == [
        "1K",
        "128K",
        "1M",
        "1,000",
        "1,536",
    ]


def test_format_count_in_words():
    values = (96, 12_345, 3.28e9, 2.62e12, 4.5e13, -2e6)
    assert [format_count(n) for n in values] == [
        "96", "12,345", "3.3 billion", "2.6 trillion", "45 trillion", "-2.0 million"
    ]  # fmt: skip


def test_counted_nouns_agree_with_their_number():
    assert [counted(n, "token") for n in (0, 1, 2, 1024)] == [
        "0 tokens",
        "1 token",
        "2 tokens",
        "1,024 tokens",
    ]


def test_signed_percent_writes_a_true_minus():
    from core.units import signed_percent

    assert signed_percent(0.318) == "+32 %"
    assert signed_percent(-0.91) == "−91 %"
    assert signed_percent(0.0) == "+0 %"
    from core.i18n import use_language

    with use_language("ja"):
        assert signed_percent(-0.91) == "−91%"


def test_format_small_writes_powers_of_ten_as_a_reader_does():
    from core.units import format_small

    assert format_small(2.22e-16) == "2.2 × 10⁻¹⁶"
    assert format_small(7.2e-07) == "7.2 × 10⁻⁷"
    assert format_small(1e-05) == "1 × 10⁻⁵"
    assert format_small(0.0) == "0"
    assert format_small(0.034) == "0.034"
    assert format_small(9.99e-4) == "0.000999"  # not '1.0 × 10⁻³' beside 0.001
    assert format_small(-2.2e-16) == "−2.2 × 10⁻¹⁶"
    assert format_small(float("nan")) == "nan"  # a failed check is shown, not a crash


def test_format_count_in_japanese_steps_of_ten_thousand():
    """万, 億, 兆 and, past 10,000兆, 京 with 兆 after it, as a Japanese reader writes it (issue 41)."""
    from core.i18n import use_language

    with use_language("ja"):
        shown = [format_count(n) for n in (96, 3.28e9, 2.62e12, 4.5e13, 1.44397e17, 2e16, 3.2e20)]
    assert shown == ["96", "33億", "2.6兆", "45兆", "14京4,397兆", "2京", "32,000京"]


def test_counts_read_in_japanese_counters():
    """Nouns become Japanese counters (3 トークン, 12 層) and big counts 億 and 兆; English stays as it was."""
    from core.i18n import use_language

    with use_language("ja"):
        assert counted(3, "token") == "3 トークン"
        assert counted(12, "layer") == "12 層"
        assert format_count(124e6) == "1.2億" and format_count(2.62e12) == "2.6兆"
    assert counted(3, "token") == "3 tokens" and format_count(2.62e12) == "2.6 trillion"


def test_format_billions_keeps_three_figures_in_each_language():
    """The planner's parameter rows: 'B' in English, 億/兆 in Japanese, three figures either way."""
    from core.i18n import use_language
    from core.units import format_billions

    assert format_billions(8.03e9) == "8.03 B"
    assert format_billions(671e9) == "671.00 B"
    with use_language("ja"):
        assert format_billions(8.03e9) == "80.3億"
        assert format_billions(0.752e9) == "7.52億"
        assert format_billions(671e9) == "6,710億"
        assert format_billions(2.7795e12) == "2.78兆"
        assert format_billions(5e7) == "50,000,000"


def test_format_params_reads_by_ten_thousands_in_japanese():
    """Issue 41 item 3: 124M is 1.24億 to a Japanese reader, 2.8T is 2.8兆; English keeps the papers' M/B/T."""
    from core.i18n import use_language

    assert format_params(124e6) == "124M" and format_params(2.8e12) == "2.8T"
    with use_language("ja"):
        assert format_params(124e6) == "1.24億"
        assert format_params(8.0e9) == "80億"
        assert format_params(671e9) == "6,710億"
        assert format_params(2.8e12) == "2.8兆"
        assert format_params(1.5e6) == "150万"
        assert format_params(999) == "999"
