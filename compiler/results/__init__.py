"""What a command keeps of compiled results between runs: the compile cache, golden/ digests,
output stamps and destinations (each a kind of the one store, compiler/cache)."""
