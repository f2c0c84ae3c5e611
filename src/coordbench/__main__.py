"""``python -m coordbench``: the same as the ``coordbench`` command."""

from coordbench.cli import main

if __name__ == "__main__":
    main()
