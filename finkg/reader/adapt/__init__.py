"""Adapting a packaged reader to a job: LoRA adapters trained on matured labels.

`train` fits a LoRA adapter (PEFT) on a GGUF model loaded into torch (transformers
dequantizes it), with the loss on the very option tokens the job scores (`LlamaCpp.
option_tokens`), early stopping on the validation items; `convert` turns the adapter into
llama.cpp's GGUF adapter format with llama.cpp's own converter; `manifest` describes what
it was trained from so it can be retrained and checked. The local reader loads the result
(`LlamaCpp(adapter=...)`, `FINKG_ADAPTER`). The jobs build their labelled questions
(`tasks.impact.training`, `tasks.movement.adapt`) and hand them to `fit`, which ties the
steps together.
"""
