"""`redline eval`: plant bugs in real code, review each planted change with the real pipeline,
and score what reached the user.

- `truth.py`   the contracts: a planted bug (ground truth), a mutant, a case, a case's result.
- `mutate/`    mutation operators on tree-sitter syntax trees (Python, JavaScript/TypeScript,
               Go) and the deterministic generator of mutants.
- `corpus/`    small programs written for the project, shipped with the package.
- `cases.py`   a case's repository: a temporary clone at a commit with one function mutated on
               a branch, so the review scope is exactly the planted change.
- `score.py`   matching findings to planted bugs; recall, precision, F1, loss per stage.
- `run.py`     running the cases through the real pipeline, one or several models.
- `oracle.py`  a scripted model that knows the ground truth and answers with real models'
               noise: what Redline itself loses.
- `noise.py`   that noise: the mistakes real models make (line numbers, quotes, format,
               malformed first answers), applied per case.
"""
