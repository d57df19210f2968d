"""Courier reference backend: a FastAPI implementation of /work/shared/api-contract.md."""

__version__ = "1.0.0"
