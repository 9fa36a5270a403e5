"""A LoRA adapter for a GGUF reader, trained on class decisions with the loss on the options.

Each training item is a prompt and its options as the job scores them (`Item`: the token
ids `LlamaCpp.option_tokens` gives, the end-of-turn token included) and the index of the
option that happened. The model scores every option as the local reader does (the sum of
its tokens' log-probabilities after the prompt), the options' scores go through a softmax
among themselves, and the loss is the class-weighted cross-entropy of that softmax
(w_y = 1 / (K pi_y) from the training labels, as the job's class weights): what is trained
is exactly what is scored, nothing of the reply format.

The defaults are paper 000 §4.2's: rank 16, alpha 32, dropout 0.05, learning rate 2e-4,
an effective batch of 64 items (gradients accumulated), adapters on the attention
projections. The validation items are scored before training (the frozen reader, for
comparison) and after every `eval_every` optimizer steps (each epoch by default, and at the
last step); the adapter kept is the trained one with the best validation metric, and
training stops after `patience` evaluations without a gain. Whether it beats the frozen
reader is for the figures to say, not for the trainer to hide. Deterministic on CPU: the
same items, seed and thread count give the same adapter.

Two things make a step cheaper without changing what is learned: the opening all prompts
share is evaluated once per optimizer step (`prefix`; the same gradient), and `precision`
can run the matrix products in bf16 (the default on a GPU; on a CPU it saves about a fifth
of a long prompt's step and nothing on a short one, where its kernels' first use of each
shape costs more). Both are hyper-parameters in the manifest.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from finkg.errors import InputError
from finkg.reader.adapt import gguf_load
from finkg.reader.adapt.prefix import MIN_SHARED, Prefix, shared_length

ATTENTION = ("q_proj", "k_proj", "v_proj", "o_proj")
PRECISIONS = ("auto", "fp32", "bf16")
Metric = Callable[[np.ndarray, np.ndarray], float]
Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class Item:
    """One scored question: the prompt's tokens, each option's, and the one that happened."""

    prompt: tuple[int, ...]
    options: tuple[tuple[int, ...], ...]
    label: int

    def __post_init__(self) -> None:
        if not 0 <= self.label < len(self.options):
            raise InputError("the label is not one of the options", field="label", value=self.label)


@dataclass(frozen=True)
class LoraParams:
    rank: int = 16
    alpha: int = 32
    dropout: float = 0.05
    lr: float = 2e-4
    batch: int = 64  # items per optimizer step (gradients accumulated)
    epochs: int = 3
    eval_every: int = 0  # optimizer steps between validations; 0: once per epoch
    patience: int = 2
    max_steps: int | None = None  # stop after this many optimizer steps (a CPU budget)
    seed: int = 0
    targets: tuple[str, ...] = ATTENTION
    # the matrix products' precision: "auto" is bf16 on a GPU and fp32 on a CPU, where bf16
    # saved about a fifth of a whole 185-token prompt's step and nothing after a shared
    # opening (the adapter's weights stay fp32)
    precision: str = "auto"
    # evaluate the opening every prompt shares once per optimizer step (`prefix`): the same
    # gradient, less work; False evaluates each prompt whole (adapters trained before it)
    shared_prefix: bool = True

    def __post_init__(self) -> None:
        for name in ("rank", "alpha", "batch", "epochs", "patience"):
            if getattr(self, name) < 1:
                raise InputError("must be at least 1", field=name, value=getattr(self, name))
        if not 0 <= self.dropout < 1:
            raise InputError("must be in [0, 1)", field="dropout", value=self.dropout)
        if not self.lr > 0:
            raise InputError("must be above 0", field="lr", value=self.lr)
        if self.max_steps is not None and self.max_steps < 1:
            raise InputError("must be at least 1", field="max_steps", value=self.max_steps)
        if self.precision not in PRECISIONS:
            raise InputError(
                f"is one of {', '.join(PRECISIONS)}", field="precision", value=self.precision
            )

    def resolved_precision(self, device: str) -> str:
        """`precision` on `device`: "auto" is bf16 on a GPU, fp32 on a CPU."""
        if self.precision != "auto":
            return self.precision
        return "fp32" if device == "cpu" else "bf16"


@dataclass
class Trained:
    """What training did: the validation metric before (step 0, the frozen reader) and at
    each evaluation, the step whose adapter was kept, the work done and its time."""

    adapter_dir: Path  # the PEFT adapter (adapter_config.json, adapter_model.safetensors)
    base_config_dir: Path  # the base model's config.json (what the converter reads)
    history: list[tuple[int, float]] = field(default_factory=list)  # (step, metric)
    best_step: int = 0  # 0 until a trained adapter has been evaluated
    steps: int = 0
    items_seen: int = 0
    seconds: float = 0.0
    device: str = "cpu"
    precision: str = "fp32"

    @property
    def frozen(self) -> float:
        return self.history[0][1]

    @property
    def best(self) -> float:
        return dict(self.history)[self.best_step]


def class_weights(labels: Sequence[int], k: int) -> np.ndarray:
    """w_y = 1 / (K pi_y) over the training labels (0 for a class never seen).

    >>> class_weights([0, 0, 0, 1], 3).round(3).tolist()
    [0.444, 1.333, 0.0]
    """
    counts = np.bincount(np.asarray(labels, dtype=int), minlength=k).astype(float)
    share = counts / counts.sum()
    return np.where(share > 0, 1.0 / (k * np.where(share > 0, share, 1.0)), 0.0)


def _option_scores(model: Any, item: Item, device: str, prefix: Prefix | None = None) -> Any:
    """The options' log-probabilities after the prompt (a tensor of K), with gradients: the
    prompt evaluated once (only its last position's logits kept; from the end of `prefix`,
    the opening every item shares, when given), its cache repeated for the K options, each
    option's tokens but the last evaluated after it in one batch."""
    import torch

    start, cache = (prefix.length, prefix.fresh()) if prefix else (0, None)
    prompt = torch.tensor([item.prompt[start:]], device=device)
    out = model(input_ids=prompt, cache=cache, use_cache=True, logits_to_keep=1)
    first = torch.log_softmax(out.logits[0, -1].float(), dim=-1)
    k, n = len(item.options), len(item.prompt)
    width = max(len(o) for o in item.options) - 1
    rest = None
    if width > 0:
        cache = out.cache
        cache.batch_repeat_interleave(k)
        ids = torch.zeros((k, width), dtype=torch.long)
        mask = torch.zeros((k, n + width), dtype=torch.long)
        mask[:, :n] = 1
        for i, option in enumerate(item.options):
            ids[i, : len(option) - 1] = torch.tensor(option[:-1])
            mask[i, n : n + len(option) - 1] = 1
        logits = model(
            input_ids=ids.to(device), attention_mask=mask.to(device), cache=cache, use_cache=True
        ).logits
        rest = torch.log_softmax(logits.float(), dim=-1)
    scores = []
    for i, option in enumerate(item.options):
        value = first[option[0]]
        for j, token in enumerate(option[1:]):
            assert rest is not None  # width > 0 when an option has a second token
            value = value + rest[i, j, token]
        scores.append(value)
    return torch.stack(scores)


def _autocast(device: str, precision: str) -> Any:
    """A context in which the model's matrix products run at `precision` (bf16 or fp32)."""
    import torch

    kind = torch.device(device).type
    return torch.autocast(kind, dtype=torch.bfloat16, enabled=precision == "bf16")


def _prefix(model: Any, shared: tuple[int, ...], device: str) -> Prefix | None:
    return Prefix.evaluate(model, shared, device) if len(shared) >= MIN_SHARED else None


def _rewinds(model: Any, shared: tuple[int, ...], device: str) -> tuple[int, ...]:
    """`shared` if the model's cache can be rewound to it, else no opening: asked once, so
    that a model whose cache is not of plain attention layers does not evaluate the opening
    in vain every step and every validation. In eval mode: the adapter's dropout draws
    nothing, so the training's random draws (and its adapter's hash) are as without it."""
    import torch

    model.eval()
    try:
        with torch.no_grad():
            return shared if _prefix(model, shared, device) else ()
    finally:
        model.train()


def _evaluate(
    model: Any,
    items: Sequence[Item],
    metric: Metric,
    device: str,
    precision: str,
    shared: tuple[int, ...] = (),
) -> float:
    import torch

    model.eval()
    with torch.no_grad(), _autocast(device, precision):
        prefix = _prefix(model, shared, device)
        chosen = [int(_option_scores(model, it, device, prefix).argmax()) for it in items]
    model.train()
    return metric(np.array(chosen), np.array([it.label for it in items]))


def train(
    base: Path,
    items: Sequence[Item],
    validation: Sequence[Item],
    *,
    out_dir: Path,
    metric: Metric,
    params: LoraParams = LoraParams(),
    threads: int = 1,
    device: str = "cpu",
    progress: Progress | None = None,
) -> Trained:
    """Train an adapter for the GGUF model `base` (module docstring); write the kept adapter
    to `out_dir/peft` and the base model's config to `out_dir/base`."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers.utils import logging as hf_logging

    if not items:
        raise InputError("no training item: the training period has no matured label")
    if not validation:
        raise InputError("no validation item: early stopping needs the validation period")
    k = len(items[0].options)
    torch.manual_seed(params.seed)
    torch.set_num_threads(threads)
    started = time.perf_counter()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    # typed loosely: the model changes type as PEFT wraps it
    model: Any = gguf_load.load(base, torch.float32)
    model.to(device)
    with warnings.catch_warnings():
        # PEFT reads transformers' deprecated alias of is_activation_checkpointing: a
        # notice between the two libraries, nothing a user of finkg can act on
        warnings.filterwarnings("ignore", "`is_gradient_checkpointing` is deprecated")
        model = get_peft_model(
            model,
            LoraConfig(
                r=params.rank,
                lora_alpha=params.alpha,
                lora_dropout=params.dropout,
                target_modules=list(params.targets),
                task_type="CAUSAL_LM",
            ),
        )
    model.train()
    weights = torch.tensor(class_weights([i.label for i in items], k), dtype=torch.float32)
    weights = weights.to(device)
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trainable, lr=params.lr)
    batch = min(params.batch, len(items))
    per_epoch = -(-len(items) // batch)
    every = params.eval_every or per_epoch
    total = per_epoch * params.epochs
    if params.max_steps is not None:
        total = min(total, params.max_steps)
    precision = params.resolved_precision(device)
    result = Trained(out_dir / "peft", out_dir / "base", device=device, precision=precision)
    shared: tuple[int, ...] = ()
    if params.shared_prefix:
        prompts = [it.prompt for it in [*items, *validation]]
        shared = tuple(prompts[0][: shared_length(prompts)])
        shared = _rewinds(model, shared, device)
    result.history.append((0, _evaluate(model, validation, metric, device, precision, shared)))
    best_state: dict[str, Any] = {}
    rng = np.random.default_rng(params.seed)
    stale = 0
    while result.steps < total and stale < params.patience:
        order = rng.permutation(len(items))
        for start in range(0, len(order), batch):
            chunk = [items[i] for i in order[start : start + batch]]
            optimizer.zero_grad()
            with _autocast(device, precision):
                prefix = _prefix(model, shared, device)  # once a step: the weights are fixed
            for it in chunk:
                with _autocast(device, precision):
                    scores = _option_scores(model, it, device, prefix)
                # the item's class weight times its cross-entropy among the options
                loss = -weights[it.label] * torch.log_softmax(scores, dim=0)[it.label]
                (loss / len(chunk)).backward()
            if prefix:
                prefix.backward()
            optimizer.step()
            result.steps += 1
            result.items_seen += len(chunk)
            if progress:
                progress("training steps", result.steps, total)
            if result.steps % every == 0 or result.steps == total:
                value = _evaluate(model, validation, metric, device, precision, shared)
                result.history.append((result.steps, value))
                if result.best_step == 0 or value > result.best:
                    result.best_step, stale = result.steps, 0
                    best_state = {
                        n: p.detach().clone()
                        for n, p in model.named_parameters()
                        if p.requires_grad
                    }
                else:
                    stale += 1
            if result.steps >= total or stale >= params.patience:
                break
    with torch.no_grad():
        for n, p in model.named_parameters():
            if n in best_state:
                p.copy_(best_state[n])
    # said, not left to "auto": that asks huggingface.co whether the base model's config
    # exists (a request at every save; offline, a warning), to learn whether embeddings were
    # resized, which this training never does. It saves them when they were trained.
    embeddings = bool(set(params.targets) & {"embed_tokens", "lm_head"})
    model.save_pretrained(str(result.adapter_dir), save_embedding_layers=embeddings)
    config = model.get_base_model().config
    config.architectures = [type(model.get_base_model()).__name__]
    if hasattr(config, "quantization_config"):
        del config.quantization_config  # the GGUF file's, not the converter's business
    config.save_pretrained(str(result.base_config_dir))
    result.seconds = time.perf_counter() - started
    return result
