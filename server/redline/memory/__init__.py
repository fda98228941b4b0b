"""Project memory (issue 27): a code graph, a semantic index and the team's learnings.

Built in the background (never on a review's critical path) and read by reviews through
`ProjectMemory` (query.py). The shared vocabulary is in model.py; see docs/ARCHITECTURE.md.
"""
