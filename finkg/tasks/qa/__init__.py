"""The QA job (papers 002 + 003): auditable answers over filings and documents, the memory
bank they can come from, and the reranker they are ranked by.

Entry points (what `finkg ask`, `finkg bank` and `finkg train-reranker` call):

- `setup.answer` (`finkg ask`: the inputs checked, then `setup.open_qa`, then one
  `ask.QA.ask`);
- `setup.open_qa` (the store's indexes, reader, reranker and bank matcher, opened) and
  `ask.QA.ask` (one question in, one checked `fkg:Answer` out);
- `setup.resolve_company` (a ticker to its company node);
- `rerank_train.train_stage1` / `train_stage2` (paper 002 §4.3: the cross-encoder,
  two stages).

Modules: `types` (the config and what an answer is made of), `ask` (routing, retrieval,
reading, grounding), `tools` (market-data tools, paper 002 §4.5), `output` (the answer as
RDF), `setup`, `rerank_data` and `rerank_company` (the reranker's two training sets),
`rerank_train`. Nothing here imports another job's folder.
"""
