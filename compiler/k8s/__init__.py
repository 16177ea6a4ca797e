"""Kubernetes basics, each in one place: names, quantities, object identity, CRD files, nested Ray cluster specs."""
