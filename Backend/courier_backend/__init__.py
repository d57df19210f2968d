"""Courier reference backend: a FastAPI implementation of Docs/contract.md."""

__version__ = "1.0.0"
