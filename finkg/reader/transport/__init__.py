"""How finkg reaches a model, apart from what it asks it: the local llama.cpp reader and its
batch scoring, the packaged GGUF models and the CPU builds they may run on, OpenAI-compatible
endpoints (JSON over HTTP with a bound on requests in flight, retries, option scoring from
whatever log-probabilities the server gives), reading several prompts at once, what reads
cost, the stand-in server for tests, and choosing a backend from the settings (`backends`).

The answer logic (prompts, reading with repair, the output contracts, groundedness) lives one
level up in `finkg.reader`; it talks to any backend through the `finkg.reader.llm.LLM`
protocol.
"""
