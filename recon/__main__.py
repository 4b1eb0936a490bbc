"""``python -m recon`` is the ``recon`` command."""
from recon.cli import main

if __name__ == "__main__":
    main()
