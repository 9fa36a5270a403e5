"""The event-impact job (paper 000): news anchors in, 1D/3D/5D predictions, feedback and a
backtest out.

Entry points (what `finkg impact run` / `feedback` / `backtest` and `finkg demo --impact`
call):

- `job.run_job`, `job.feedback_job`, `job.backtest_job` (§4: variants, validation weights,
  metrics, the portfolio);
- `predict.predict` (one anchor, one checked prediction) and `ImpactConfig`;
- `prequential.Prequential` (§4.1: predictions and feedback in time order; built once from
  what it reads with, then `run(anchors, variants)`);
- `demo.demo_impact` (the job on the demo world).

Modules: `anchors` (§3.1, §3.3), `predict` (§3.2-3.3; its steps in `steps`, what they
are made of in `inputs`), `feedback` (§3.4-3.5), `labels` (§3.4), `prequential`, `job`,
`demo`. Nothing here imports another job's folder.
"""
