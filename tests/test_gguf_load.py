"""`finkg.reader.adapt.gguf_load`: while transformers loads a GGUF file, it gets one parse
of the file and one tensor-name map per architecture, and draws no bar; gguf's own functions
and transformers' bar come back after."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from finkg.reader.adapt.gguf_load import _parsed_once, _quiet_bar

gguf = pytest.importorskip("gguf")


def _tiny(path: Path) -> Path:
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_block_count(2)
    writer.add_tensor("token_embd.weight", np.arange(8, dtype=np.float32).reshape(2, 4))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def test_a_file_is_parsed_once_while_loading_and_gguf_is_restored(tmp_path: Path) -> None:
    path = _tiny(tmp_path / "tiny.gguf")
    reader_class, name_map = gguf.GGUFReader, gguf.get_tensor_name_map
    with _parsed_once():
        first = gguf.GGUFReader(path)
        assert gguf.GGUFReader(str(path)) is first  # the same file, by either spelling
        assert first.tensors[0].data.tolist() == [[0, 1, 2, 3], [4, 5, 6, 7]]
        arch = gguf.MODEL_ARCH.LLAMA
        assert gguf.get_tensor_name_map(arch, 2) is gguf.get_tensor_name_map(arch, 2)
        assert gguf.get_tensor_name_map(arch, 3) is not gguf.get_tensor_name_map(arch, 2)
    assert (gguf.GGUFReader, gguf.get_tensor_name_map) == (reader_class, name_map)
    assert gguf.GGUFReader(path) is not gguf.GGUFReader(path)


def test_gguf_is_restored_when_the_load_fails(tmp_path: Path) -> None:
    reader_class = gguf.GGUFReader
    with pytest.raises(ValueError), _parsed_once():
        raise ValueError("a load that fails")
    assert gguf.GGUFReader is reader_class


def test_the_loaders_own_bar_is_silent_while_loading_and_restored(
    capfd: pytest.CaptureFixture[str],
) -> None:
    loader = pytest.importorskip("transformers.modeling_gguf_pytorch_utils")
    bar = loader.tqdm
    with _quiet_bar():
        assert list(loader.tqdm(range(3), desc="de-quantizing")) == [0, 1, 2]
    assert "de-quantizing" not in capfd.readouterr().err
    assert loader.tqdm is bar
    list(loader.tqdm(range(3), desc="de-quantizing"))
    assert "de-quantizing" in capfd.readouterr().err  # the control: drawn outside
