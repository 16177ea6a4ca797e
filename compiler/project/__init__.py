"""The krc project on disk: where its files live, and the lock that lets one writer in at a time."""
