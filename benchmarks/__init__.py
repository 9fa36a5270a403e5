"""finkg's benchmarks, one module per figure it reports: run one from the repository root as
`python -m benchmarks.NAME [options]` (`--help` lists its options; each takes its data
folder, periods and question files as options). Reports go to `benchmarks/reports/`."""
