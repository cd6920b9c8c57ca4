"""What to analyse and how to say it: the product's analysis decisions, read by every model.

Both the prompts of a hosted model and the deterministic offline model reach these functions: which columns are
headline measures and breakdowns (:mod:`choices`), how a standard analysis is worded in a plan and recovered from
that wording (:mod:`catalog`), the suggested plan for a profile (:mod:`planning`), how reviewer feedback applies
(:mod:`revision`), stable ASCII ids (:mod:`ids`) and the wording of findings (:mod:`wording`).
"""
