"""The indexes retrieval reads: BM25 (`bm25`, `text`), embeddings and vector indexes (`embed`,
`vectors`), what the persisted ones share (`persist`), where a store's indexes live
(`indexes`), and tokens and embeddings computed on demand (`live`)."""
