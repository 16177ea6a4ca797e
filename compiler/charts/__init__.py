"""Helm charts: resolve from a chart repository, vendor with a lock, read CRDs and values offline."""
