"""The jobs, one folder each, composing kg + retrieval + reader and writing their outputs
back as RDF: `impact/` (paper 000), `movement/` (001), `qa/` (002 + 003), `recommend/`
(004). No job folder imports another (`tests/test_layout.py`); `records.py` (reader
outputs as RDF) is what they share."""
