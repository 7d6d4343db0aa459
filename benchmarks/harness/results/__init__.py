"""harness.results: what the harness writes and how it is read back (chapter 01).

Role: the per-cell summary and metric table (summary), the results files and plots
(report), the one verdict rule (verdict) and the rounds it reads (rounds), the cells,
ranges, counts and verdicts the book's roles read (cells), the seeds table (seeds), the
seeds' headline table (headline), and the reproduce report on every figure the book shows
(book_figures). None of it needs Sphinx: the book's extension (book/_ext) imports it.
"""
