"""Ladder definitions (TOML data), installed as ``recon.ladders``."""
