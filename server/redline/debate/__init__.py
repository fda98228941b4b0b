"""The debate mode: several debaters argue over a change, a neutral summarizer sums up, and
the outcome becomes findings (`run.run_debate`)."""
