"""Statement facts: a filing's primary statements read into figures with their line item,
period, unit and place in the text (`read`), the line items they read as (`concepts`), the
periods of their columns (`periods`), and their RDF (`rdf`)."""
