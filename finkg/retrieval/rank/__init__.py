"""Ranking candidates: fusing retrievers' scores (`fuse`), reranking and bundling passages
(`rerank`, `cross_encoder`), FinSeer (`finseer`), and the folders of models finkg trains
(`trained`)."""
