"""The write stage: golden/'s layout (layout.py) and folders replaced all-or-nothing (folders.py)."""
