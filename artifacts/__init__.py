"""Built-in reference oracles, installed as ``recon.artifacts``.

Each sub-package defines one ``@oracle``; the registry imports them all.
"""
