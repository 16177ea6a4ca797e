"""Bounds shared by the quantity rules (resources/suspicious-quantity, resources/tiny-memory-in-production)."""
from __future__ import annotations

from decimal import Decimal

SMALLEST_MEMORY = Decimal(2) ** 20  # 1Mi: no Ray container starts with less
