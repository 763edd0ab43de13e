"""Library behind tools/report: load locus-bench JSON lines, derive ratios, write Markdown/PNGs.

load reads and validates the input, metrics groups configurations and computes the derived
numbers, markdown and plots render them. plots is the only module that needs matplotlib, so
`--no-plots` works without it.
"""
