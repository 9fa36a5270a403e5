"""`finkg train-reader --precision` (issue 42 item 5: the 2,000-anchor training within a CPU
budget): the matrix products in bf16 on a CPU, the adapter's weights kept in fp32, and the
same determinism as fp32 (the same items, seed and threads give the same bytes). Two steps
of SmolLM2-135M on made-up token ids: the arithmetic, not the learning."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import load_file

from finkg.config import Settings
from finkg.errors import InputError
from finkg.reader.adapt.train import Item, LoraParams, Trained, train
from finkg.reader.transport.backends import reader_file
from tests.readers import THREADS

pytestmark = pytest.mark.model

# two options of two tokens each (the word and an end token), a 40-token prompt
ITEMS = [
    Item(tuple(range(1000 + 7 * i, 1040 + 7 * i)), ((2000, 2), (3000, 2)), i % 2) for i in range(4)
]


def _accuracy(chosen: np.ndarray, labels: np.ndarray) -> float:
    return float((chosen == labels).mean())


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("peft")
    settings = Settings(home=tmp_path_factory.mktemp("home"), reader="smollm2-135m")
    return reader_file(settings.reader, settings.cache_dir)[0]


def _train(base: Path, out: Path, precision: str) -> Trained:
    params = LoraParams(
        rank=4, alpha=8, batch=2, epochs=1, max_steps=2, eval_every=2, lr=5e-3, precision=precision
    )
    return train(
        base, ITEMS, ITEMS[:2], out_dir=out, metric=_accuracy, params=params, threads=THREADS
    )


def _weights(trained: Trained) -> dict[str, np.ndarray]:
    return load_file(str(trained.adapter_dir / "adapter_model.safetensors"))


def test_bf16_training_is_deterministic_keeps_fp32_weights_and_differs_from_fp32(
    base: Path, tmp_path: Path
) -> None:
    once = _train(base, tmp_path / "a", "bf16")
    again = _train(base, tmp_path / "b", "bf16")
    full = _train(base, tmp_path / "c", "auto")  # fp32 on a CPU
    assert (once.precision, full.precision) == ("bf16", "fp32")
    first, second, fp32 = _weights(once), _weights(again), _weights(full)
    assert first.keys() == fp32.keys() and len(first) > 0
    assert all(first[k].dtype == np.float32 for k in first)
    assert all(np.array_equal(first[k], second[k]) for k in first)
    # the products really ran in bf16: the trained weights are not fp32's
    assert any(not np.array_equal(first[k], fp32[k]) for k in first)
    assert once.steps == full.steps == 2


def test_precision_is_checked_and_auto_means_bf16_on_a_gpu_only() -> None:
    with pytest.raises(InputError, match="precision"):
        LoraParams(precision="fp16")
    auto = LoraParams()
    assert auto.resolved_precision("cpu") == "fp32"
    assert auto.resolved_precision("cuda") == "bf16"
    assert LoraParams(precision="bf16").resolved_precision("cpu") == "bf16"


# the test builds its PEFT model itself, where PEFT's notice to transformers is not filtered
@pytest.mark.filterwarnings("ignore:`is_gradient_checkpointing` is deprecated")
def test_a_shared_opening_evaluated_once_gives_the_gradient_of_whole_prompts(base: Path) -> None:
    """Two items that share a 30-token opening: their summed gradient on the adapter is the
    same whether each prompt is evaluated whole or the opening once (no dropout, fp32)."""
    import torch
    from peft import LoraConfig, get_peft_model

    from finkg.reader.adapt import gguf_load
    from finkg.reader.adapt.prefix import Prefix, shared_length
    from finkg.reader.adapt.train import _option_scores

    torch.manual_seed(0)
    model = get_peft_model(
        gguf_load.load(base, torch.float32),
        LoraConfig(r=4, lora_alpha=8, lora_dropout=0.0, target_modules=["q_proj", "v_proj"]),
    )
    for name, p in model.named_parameters():  # B starts at zero: give the adapter a value
        if "lora_B" in name:
            torch.nn.init.normal_(p, std=0.02)
    opening = tuple(range(500, 530))
    items = [Item((*opening, 900 + i, 901 + i), ((2000, 2), (3000, 2)), i) for i in range(2)]

    def gradient(prefix_tokens: tuple[int, ...]) -> dict[str, torch.Tensor]:
        model.zero_grad()
        prefix = Prefix.evaluate(model, prefix_tokens, "cpu") if prefix_tokens else None
        for it in items:
            scores = _option_scores(model, it, "cpu", prefix)
            (-torch.log_softmax(scores, 0)[it.label]).backward()
        if prefix:
            prefix.backward()
        return {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}

    shared = opening[: shared_length([it.prompt for it in items])]
    assert shared == opening
    whole, once = gradient(()), gradient(shared)
    assert whole.keys() == once.keys() and len(whole) > 0
    for n in whole:
        assert torch.allclose(whole[n], once[n], rtol=1e-4, atol=1e-6), n
    # the control: without the opening's own gradient the adapter's is not the same
    model.zero_grad()
    prefix = Prefix.evaluate(model, shared, "cpu")
    assert prefix is not None
    for it in items:
        (-torch.log_softmax(_option_scores(model, it, "cpu", prefix), 0)[it.label]).backward()
    partial = {n: p.grad for n, p in model.named_parameters() if p.grad is not None}
    assert any(not torch.allclose(whole[n], partial[n], rtol=1e-4, atol=1e-6) for n in whole)


def test_a_cache_that_cannot_be_rewound_is_asked_once_not_every_step(
    base: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A model whose cache is not of plain attention layers (`Prefix.evaluate` answers None):
    the opening is evaluated once, not again at every step and every validation."""
    from finkg.reader.adapt import prefix

    opening = tuple(range(500, 520))  # 20 shared tokens: past MIN_SHARED
    items = [Item((*opening, 1000 + i, 1001 + i), ((2000, 2), (3000, 2)), i % 2) for i in range(4)]
    asked: list[int] = []

    def cannot(
        cls: type[prefix.Prefix], model: object, tokens: tuple[int, ...], device: str
    ) -> None:
        asked.append(len(tokens))

    monkeypatch.setattr(prefix.Prefix, "evaluate", classmethod(cannot))
    params = LoraParams(rank=4, alpha=8, batch=2, epochs=1, max_steps=2, eval_every=1, lr=5e-3)
    trained = train(
        base, items, items[:2], out_dir=tmp_path, metric=_accuracy, params=params, threads=THREADS
    )
    assert trained.steps == 2 and len(trained.history) == 3
    assert asked == [len(opening)]


def test_training_asks_no_hub_and_passes_on_no_library_notice(
    base: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Saving the adapter does not ask huggingface.co about the base model (PEFT's "auto"
    embedding check), and PEFT's and transformers' notices to each other stay between them."""
    import warnings

    from peft.utils import save_and_load

    asked: list[str] = []
    monkeypatch.setattr(
        save_and_load, "check_file_exists_on_hf_hub", lambda repo, name, **kw: asked.append(repo)
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        trained = _train(base, tmp_path, "auto")
    assert trained.steps == 2 and (trained.adapter_dir / "adapter_model.safetensors").exists()
    assert asked == []
    notices = [str(w.message) for w in caught]
    assert not [n for n in notices if "is_gradient_checkpointing" in n or "config file" in n]
