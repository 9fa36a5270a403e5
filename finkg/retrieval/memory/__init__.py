"""What retrieval learns from outcomes, as RDF: the Bayesian source memory of paper 000
(`source`) and the memory bank of paper 002 (`bank`)."""
