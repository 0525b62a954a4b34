"""docs/: only the Markdown pages are collected (as doctests); Sphinx's files are not test modules."""

collect_ignore = ["conf.py", "_ext"]
