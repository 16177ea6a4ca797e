"""Helpers the lint rules share: the lint context, views of Ray objects, Ray resources, feature gates."""
