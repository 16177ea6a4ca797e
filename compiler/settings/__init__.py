"""What the process environment sets: the variables krc reads (in one place) and the limits they can raise."""
