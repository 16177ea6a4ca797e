"""YAML and JSON documents: the bounded loaders, the fast event paths, the emitter, records <-> JSON."""
