"""The render stage: templates run for one environment, and where each rendered field came from."""
