

def test_a_japanese_panel_title_breaks_after_its_full_width_colon():
    """Side by side on a phone, 「読み出し：50% 正解」 on one line ran into its neighbour's title: a kana or
    kanji is about two Latin characters wide, and Japanese sets the colon full width with no space."""
    from core.figures.board_panels import _wrap_title

    assert _wrap_title("読み出し：50% 正解", 18) == "読み出し：<br>50% 正解"
    assert _wrap_title("書き込んだ組", 18) == "書き込んだ組"
    assert _wrap_title("read back: 50% correct", 18) == "read back:<br>50% correct"
    assert _wrap_title("old board", 18) == "old board"
    assert _wrap_title("DeltaNet（減衰なし）", 12) == "DeltaNet<br>（減衰なし）"  # the bracket on its own line
    assert _wrap_title("= 新しい黒板", 8) == "=<br>新しい黒板"  # kanji counted two wide
