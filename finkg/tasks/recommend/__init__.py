"""The recommendation job (paper 004, RAG-FLARKO): three assets for a customer from their
transaction graph and the market graph, through LLM-picked entities and CONSTRUCT subgraphs.

Entry points (what `finkg recommend` and `benchmarks/recommend.py` call):

- `pipeline.run_recommendation` (the configured reader and reply cache; one recommendation,
  written) and `pipeline.recommend` (one customer and instant, any reader);
- `types.RecommendConfig` (variant `multi`, `parallel` or `full`, checked when built).

Modules: `types` (what the stages share), `stages` (personal and market retrieval, the
`full` baseline), `window` (the graph context cut to the reader's window), `output` (the
recommendation as RDF), `pipeline`. Nothing here imports another job's folder.
"""
