"""The movement job (paper 001): next-session rise or fall of a stock, with retrieved
indicator windows; the FinSeer retriever trained from the reader's feedback.

Entry points (what `finkg forecast` and `finkg train-retriever` call):

- `forecast.forecast` (one ticker and session, written as RDF) and `forecast.predict`
  (§3.2: query, retrieved windows, the reader's log-probabilities of rise and fall);
- `train.train_retriever` (§3.3: stock split, reader-scored candidates, KL distillation)
  and `train.open_sequence_retriever` (the retriever a forecast uses);
- `compare.compare` (every retriever on the same validation and test queries, the best
  chosen on validation, decision heads and baselines with intervals) and
  `compare_report.render` (what `benchmarks/movement_decisions.py` writes).

Nothing here imports another job's folder.
"""
