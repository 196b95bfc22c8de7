"""The package version, read by setup.py without importing the package."""

__version__ = "0.1.0"
