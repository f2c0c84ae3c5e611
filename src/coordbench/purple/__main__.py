"""``python -m coordbench.purple``: serve one purple agent (what ``coordbench team up`` runs per member)."""

from coordbench.purple.cli import main

if __name__ == "__main__":
    main()
