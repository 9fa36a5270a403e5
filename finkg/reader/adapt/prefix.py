"""The tokens every training question starts with, evaluated once per optimizer step.

A job's questions share their opening: the chat template and the system message, and for
the movement job the words before the query (about 100 of a `none` prompt's 183 tokens).
Within an optimizer step the weights do not change, so the keys and values of that opening
are the same for every item of the batch. `Prefix.evaluate` computes them once, with their
graph; each item continues from detached copies (`Prefix.cache`) that collect the item's
gradient with respect to them, and `Prefix.backward` sends the sum through the opening once
at the end of the step. The gradient is the one of evaluating every prompt whole (tested, to
float rounding); what differs is the adapter's dropout on the opening, drawn once per step
instead of once per item.

Only the cache of plain attention layers (`DynamicLayer`: keys and values that grow by
concatenation, as Qwen2's and Llama's) can be rewound this way; another cache evaluates the
prompts whole.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

MIN_SHARED = 16  # below this many shared tokens, sharing saves less than it costs


def shared_length(prompts: Sequence[Sequence[int]]) -> int:
    """How many leading tokens every prompt has in common, leaving each at least one of its
    own (the last prompt token's logits give the first option token's probability).

    >>> shared_length([(1, 2, 3, 4), (1, 2, 5), (1, 2, 3)])
    2
    >>> shared_length([(1, 2), (1, 2)])
    1
    """
    if not prompts:
        return 0
    first, n = prompts[0], min(len(p) for p in prompts) - 1
    for p in prompts[1:]:
        i = 0
        while i < n and p[i] == first[i]:
            i += 1
        n = i
    return max(n, 0)


@dataclass
class Prefix:
    tokens: tuple[int, ...]
    cache: Any  # the model's cache, rewound to the prefix by `fresh`
    states: list[Any]  # the prefix's keys and values per layer, with their graph
    leaves: list[Any]  # what the items continue from: detached copies when training

    @property
    def length(self) -> int:
        return len(self.tokens)

    @classmethod
    def evaluate(cls, model: Any, tokens: Sequence[int], device: str) -> Prefix | None:
        """The prefix's keys and values under the model's current weights; None when the
        model's cache is not one of plain attention layers."""
        import torch
        from transformers.cache_utils import DynamicLayer

        out = model(input_ids=torch.tensor([list(tokens)], device=device), use_cache=True,
                    logits_to_keep=1)  # fmt: skip
        cache = out.cache
        if not all(type(layer) is DynamicLayer for layer in cache.layers):
            return None
        states = [t for layer in cache.layers for t in (layer.keys, layer.values)]
        # a state the adapter does not reach (layer 0's keys with no adapter on k_proj) has
        # no gradient to collect
        leaves = [t.detach().requires_grad_(True) if t.requires_grad else t for t in states]
        return cls(tuple(tokens), cache, states, leaves)

    def fresh(self) -> Any:
        """The cache holding the prefix alone, ready for an item's own tokens."""
        for i, layer in enumerate(self.cache.layers):
            layer.keys, layer.values = self.leaves[2 * i], self.leaves[2 * i + 1]
        return self.cache

    def backward(self) -> None:
        """Send the items' summed gradients through the prefix's evaluation (training)."""
        import torch

        pairs = [(s, leaf.grad) for s, leaf in zip(self.states, self.leaves, strict=True)
                 if s.requires_grad and leaf.grad is not None]  # fmt: skip
        if pairs:
            torch.autograd.backward([s for s, _ in pairs], [g for _, g in pairs])
