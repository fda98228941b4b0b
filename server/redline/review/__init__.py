"""The review pipeline: from a scope to a `Review`."""
