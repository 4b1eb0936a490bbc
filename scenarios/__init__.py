"""Sweep specs (``<oracle name>.toml``), installed as ``recon.scenarios``."""
