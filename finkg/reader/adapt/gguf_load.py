"""A GGUF reader loaded into transformers for training, parsed once instead of twice.

`AutoModelForCausalLM.from_pretrained(folder, gguf_file=...)` reads the file twice (its
config, then its tensors) and parses every metadata field each time: the vocabulary's
294,476 parts for SmolLM2, 4.9 s a parse on 2 cores. It then names the tensors by building
gguf's `TensorNameMap` once per module of the model (397 times for SmolLM2, 6 s). Both are
pure functions of their arguments, and transformers imports both from the `gguf` package
when it calls them, so `load` hands it one parse per file and one map per (architecture,
layers) while it loads, and puts gguf's own functions back afterwards. The weights are the
same tensors, read from the same bytes (tested: the same adapter hash either way).

The loader also draws a tqdm bar of its own ("Converting and de-quantizing GGUF
tensors"), which transformers' `disable_progress_bar` does not reach: it would litter
every training's log, so `load` silences it while it loads (`_quiet_bar`).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal


@contextmanager
def _parsed_once() -> Iterator[None]:
    import gguf

    readers: dict[tuple[str, str], Any] = {}
    reader_class, name_map = gguf.GGUFReader, gguf.get_tensor_name_map

    def reader(path: str | Path, mode: Literal["r", "r+", "c"] = "r") -> Any:
        key = (str(Path(path).resolve()), mode)
        if key not in readers:
            readers[key] = reader_class(path, mode)
        return readers[key]

    # through the module's namespace: what transformers imports from `gguf` while it loads
    # (an assignment to the class name would type the memo as the class)
    names = vars(gguf)
    names["GGUFReader"], names["get_tensor_name_map"] = reader, functools.cache(name_map)
    try:
        yield
    finally:
        names["GGUFReader"], names["get_tensor_name_map"] = reader_class, name_map


@contextmanager
def _quiet_bar() -> Iterator[None]:
    from transformers import modeling_gguf_pytorch_utils as loader

    names = vars(loader)
    bar = names.get("tqdm")
    if bar is None:  # a transformers that draws no bar there
        yield
        return
    names["tqdm"] = functools.partial(bar, disable=True)
    try:
        yield
    finally:
        names["tqdm"] = bar


def load(base: Path, dtype: Any) -> Any:
    """The causal LM in the GGUF file `base`, dequantized to `dtype`."""
    from transformers import AutoModelForCausalLM

    with _parsed_once(), _quiet_bar():
        model = AutoModelForCausalLM.from_pretrained(
            str(base.parent), gguf_file=base.name, dtype=dtype, local_files_only=True
        )
    # Named by the folder it was read from (finkg's home), the model would pass that path to
    # all written from it: PEFT's adapter config and model card, then the GGUF adapter's
    # metadata (`general.base_model.0.name`), so one training gave another adapter hash in
    # another home. Its file's stem (a packaged reader's name) says which base it is, wherever
    # the home is.
    model.config.name_or_path = base.stem
    model.name_or_path = base.stem
    return model
