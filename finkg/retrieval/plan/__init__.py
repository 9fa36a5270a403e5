"""Reading a question before retrieval: its period and words (`questions`), its sub-questions
(`decompose`), what it asks for (`query_plan`) and the financial terms it uses (`glossary`)."""
