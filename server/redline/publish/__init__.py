"""Posting a review where the team reads it: a pull request (GitHub, through `gh api`) or a
merge request (GitLab, through `glab api`).

Posting happens only when the user passes `--post`: nothing in the repository can turn it on,
and the model's own gh tool stays read-only. The pure parts — which lines a forge accepts
comments on (`diff_map`), the comment bodies and their hidden markers (`bodies`, `markers`),
where each finding goes (`placement`) — are separate from the adapters that send
(`github`, `gitlab`) and the process they send through (`transport`).
"""
