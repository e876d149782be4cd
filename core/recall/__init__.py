"""Associative recall, the gap between attention and a fixed state, in one package: the MQAR task
(`task`), the small models trained on it (`config`, `mixers`, `models`), reading a reader's own text with
them (`reader`), and the committed sweep's results (`results`). Their training recipe is
core/train/recipes/recall.py; their pictures core/figures/recall.py."""
