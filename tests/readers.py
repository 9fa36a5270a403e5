"""The reader the plumbing tests read with, and why that one.

`SMALL_READER` is SmolLM2-135M requantized to Q4_0 (`finkg.reader.transport.models`): the
smallest packaged model, too weak to read well but enough to show that the prompts, the
grammar, the scores and the commands are real. Its Q4_0 matrices run on llama.cpp's repacked
CPU kernels, which the packaged Q4_1 file's do not: a 3,000-token prompt evaluates in about
3.4 s instead of 5.95 s on 2 cores. The trainings (`finkg train-reader`) keep the packaged
file, whose hash their manifests name.
"""

import os

SMALL_READER = "smollm2-135m-q4_0"

# the threads a test's model work uses (readers, trainings, embedders): FINKG_THREADS where
# it is set (`make test` sets 1 on each of its two workers), else 2
THREADS = int(os.environ.get("FINKG_THREADS") or 2)
