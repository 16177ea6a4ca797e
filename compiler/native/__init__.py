"""krc's native engine (engine/, Go): Helm's SDK, CUE and the API server's validation, in one process per run."""
