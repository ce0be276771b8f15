"""The package's version, in a module of its own so no part of segscore imports the package root
for it (pyproject.toml declares the same string; tests/test_repository.py checks they agree)."""

__version__ = "0.1.0"
